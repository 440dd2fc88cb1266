"""The state-space lab in a real browser: its link, its moving step, practice, axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, slide
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_the_step_slider_moves_the_outlined_row_and_the_state(browser, live_server):
    with lab_page(browser, live_server, "connections/ssm?n=8&step=8") as (page, _):
        assert page.locator("#cx-pic-linear-matrix .cx-mark").get_attribute("data-mark") == "row 7"
        assert page.locator("#cx-pic-state-title").inner_text() == "The state S_8"
        slide(page, "step", "Home")
        assert page.locator("#cx-pic-linear-matrix .cx-mark").get_attribute("data-mark") == "row 0"
        assert page.locator("#cx-pic-dual .cx-mark").get_attribute("data-mark") == "row 0"
        assert page.locator("#cx-pic-state-title").inner_text() == "The state S_1"
        assert "step=1" in page.url


def test_practice_is_recorded_and_axe_is_clean_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/ssm?n=4&d=4", **PHONE) as (page, _):
        text, headings = practise(page, "copy-all")
        assert text.startswith("✓ Goal met.")
        assert headings == ["A state that copies everything · attempt 1"]
        expect(page.locator('#cx-history [data-checked="met"]')).to_have_count(1)
