"""The decoding-and-sampling lab in a real browser: the temperature moves the shares and the marker,
practice on a phone, axe; and SmolLM2's own logits after the learner's text (the page asks again while
the trace runs)."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

RUN_MS = 240_000  # the first trace loads SmolLM2 in the worker


def test_the_temperature_moves_the_shares_and_the_marker(browser, live_server):
    with lab_page(browser, live_server, "connections/sampling?temperature=1") as (page, _):
        marker = page.locator("#cx-pic-temperature .cx-marker")
        before = marker.get_attribute("x1")
        slide(page, "temperature", "Home")  # T = 0.05
        assert marker.get_attribute("x1") != before and "temperature=0.05" in page.url
        assert (
            page.locator("#cx-words li")
            .nth(1)
            .inner_text()
            .startswith("At temperature T = 0.05, softmax(logit ÷ T) gives #1 99.82%")
        )
        assert page.locator("#cx-pic-shares .cx-bar-text").first.text_content() == "99.82%"


def test_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/sampling", **PHONE) as (page, _):
        page.locator("#cx-challenge-head summary").click()
        settle(page)
        page.locator("#cx-resp-head-8").check()
        text, headings = practise(page, "head")
        assert text.startswith("✓ Goal met.") and headings == ["Attention's temperature · attempt 1"]


@pytest.mark.models
def test_smollm2s_logits_after_the_learners_text(browser, live_server):
    with lab_page(browser, live_server, "connections/sampling?source=smollm2&k=5") as (page, _):
        html = page.locator("html")
        expect(html).to_have_attribute("data-cx-live", "done", timeout=RUN_MS)
        settle(page)
        words = page.locator("#cx-words li")
        assert words.first.inner_text().startswith("SmolLM2 read your text (5 tokens); its 5 largest")
        assert page.locator("#cx-pic-shares .cx-bar-label").first.text_content().startswith("“␣Paris”")
        box = page.locator("#cx-in-text")
        box.fill("Once upon a time there was a")
        box.press("Enter")
        expect(words.first).to_contain_text("(7 tokens)", timeout=RUN_MS)
        expect(html).to_have_attribute("data-cx-live", "done")
        assert "text=Once%20upon%20a%20time" in page.url
