"""The KV-cache lab in a real browser: its link, the growth marker moving with the tokens, the precision
choice, practice, axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide

pytestmark = pytest.mark.browser


def test_tokens_and_precision_move_the_picture_and_the_words(browser, live_server):
    with lab_page(browser, live_server, "connections/kv?tokens=1024") as (page, _):
        marker = page.locator("#cx-pic-growth .cx-marker")
        before = marker.get_attribute("x1")
        slide(page, "tokens", "End")
        assert marker.get_attribute("x1") != before and "tokens=8192" in page.url
        assert (
            page.locator("#cx-words li")
            .nth(1)
            .inner_text()
            .startswith("At 8,192 tokens the cache holds 188.7 MB")
        )
        page.locator("#cx-in-precision").select_option("4")
        settle(page)
        assert (
            page.locator("#cx-words li")
            .nth(1)
            .inner_text()
            .startswith("At 8,192 tokens the cache holds 377.5 MB")
        )
        assert page.locator("#cx-pic-pool text.cx-cell-text").first.text_content() in "ABCD"


def test_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/kv", **PHONE) as (page, _):
        page.locator("#cx-challenge-waste-bound summary").click()
        settle(page)
        page.locator("#cx-resp-waste-bound-15").check()
        text, headings = practise(page, "waste-bound")
        assert text.startswith("✓ Goal met.") and headings == ["The most a paged request wastes · attempt 1"]


@pytest.mark.models
def test_a_live_generations_caches_are_measured(browser, live_server):
    from playwright.sync_api import expect

    with lab_page(browser, live_server, "connections/kv?live=on&new=4") as (page, _):
        expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=240_000)
        settle(page)
        words = page.locator("#cx-words li")
        assert words.nth(2).inner_text().startswith("Live: SmolLM2 read your prompt (5 tokens) and, greedily")
        assert "equal to the count at every one of the 5 steps" in words.nth(3).inner_text()
        assert page.locator("#cx-pic-live circle.cx-dot").count() == 5
