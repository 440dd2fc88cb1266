"""The MoE lab in a real browser: its link, its moving top-k, practice, axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide

pytestmark = pytest.mark.browser


def test_top_k_moves_the_gates(browser, live_server):
    with lab_page(browser, live_server, "connections/moe?experts=6&k=1") as (page, _):
        marked = page.locator("#cx-pic-router .cx-bar.is-marked")
        assert marked.count() == 1
        slide(page, "k", "ArrowRight", 2)
        assert marked.count() == 3
        assert page.locator("#cx-in-k").get_attribute("max") == "6"
        slide(page, "experts", "Home")  # two experts: k follows its maximum down to 2
        assert page.locator("#cx-in-k").input_value() == "2"
        assert "experts=2&k=2" in page.url


def test_a_choice_is_checked_and_recorded_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/moe?k=2", **PHONE) as (page, _):
        page.locator("#cx-challenge-ratio summary").click()
        settle(page)
        page.locator("#cx-resp-ratio-same").check()
        text, headings = practise(page, "ratio")
        assert text.startswith("✓ Goal met.")
        assert headings == ["What renormalising keeps · attempt 1"]
