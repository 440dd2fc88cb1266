"""The cross-attention lab in a real browser: its link, the map moving with the patch, practice,
axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide

pytestmark = pytest.mark.browser


def test_the_patch_sliders_move_the_outline_and_the_words(browser, live_server):
    with lab_page(browser, live_server, "connections/cross?grid=6&row=3&col=3") as (page, _):
        outline = page.locator("#cx-pic-map .cx-mark")
        assert outline.get_attribute("data-mark") == "box 3"
        first = page.locator("#cx-words li").first
        assert first.inner_text().startswith("Patch (3, 3) shows ball")
        slide(page, "col", "Home")
        assert outline.get_attribute("data-mark") == "box 0"
        assert first.inner_text().startswith("Patch (3, 0) shows nothing in particular")


def test_the_text_choice_and_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/cross?grid=6&row=0&col=0&sharpness=8", **PHONE) as (
        page,
        _,
    ):
        page.locator("#cx-in-prompt").select_option("grass-sky")
        settle(page)
        assert "prompt=grass-sky" in page.url
        assert page.locator("#cx-pic-share .cx-bar-label").all_text_contents()[0] == "“green”"
        text, _ = practise(page, "one-word")
        assert text.startswith("✓ Goal met.")
