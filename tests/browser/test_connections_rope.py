"""The RoPE lab in a real browser: its link, the marker moving with the offset, practice, axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide

pytestmark = pytest.mark.browser


def test_the_offset_moves_the_marker_and_the_words(browser, live_server):
    with lab_page(browser, live_server, "connections/rope?offset=700") as (page, _):
        marker = page.locator("#cx-pic-score .cx-marker")
        before = marker.get_attribute("x1")
        slide(page, "offset", "Home")
        assert marker.get_attribute("x1") != before and "offset=0" in page.url
        assert "at offset 0 it has turned 0, inside" in page.locator("#cx-words li").nth(1).inner_text()


def test_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/rope", **PHONE) as (page, _):
        page.locator("#cx-challenge-depends summary").click()
        settle(page)
        page.locator("#cx-resp-depends-offset").check()
        text, _ = practise(page, "depends")
        assert text.startswith("✓ Goal met.")


@pytest.mark.models
def test_smollm2s_own_rope(browser, live_server):
    from playwright.sync_api import expect

    with lab_page(browser, live_server, "connections/rope?own=on") as (page, _):
        expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=60_000)
        assert page.locator("#cx-pic-smollm2-score polyline").count() == 2
        own = page.locator("#cx-words li").nth(3).inner_text()
        assert own.startswith("SmolLM2's own RoPE, as its GGUF states it")
        page.locator("#cx-in-own").select_option("off")
        settle(page)
        assert page.locator("#cx-words li").count() == 3
        assert page.locator("html").get_attribute("data-cx-live") == "off"
        assert page.locator("#cx-pic-smollm2-score").count() == 0  # its pictures go with it
