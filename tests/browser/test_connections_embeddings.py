"""The embeddings lab in a real browser: τ moves the softmax and the loss marker, practice on a phone,
axe; and MiniLM's embeddings of the learner's sentences."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def test_tau_moves_the_softmax_and_the_loss(browser, live_server):
    with lab_page(browser, live_server, "connections/embeddings?tau=0.05") as (page, _):
        marker = page.locator("#cx-pic-loss .cx-marker")
        before = marker.get_attribute("x1")
        cell = page.locator("#cx-pic-contrastive text.cx-cell-text").first
        was = cell.text_content()
        slide(page, "tau", "End")  # τ = 1
        assert marker.get_attribute("x1") != before and "tau=1" in page.url
        assert cell.text_content() != was
        assert "divides them by τ = 1 and applies softmax" in page.locator("#cx-words li").nth(1).inner_text()


def test_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/embeddings", **PHONE) as (page, _):
        page.locator("#cx-challenge-sharper summary").click()
        settle(page)
        page.locator("#cx-resp-sharper-flatter").check()
        text, _ = practise(page, "sharper")
        assert text.startswith("✓ Goal met.")


@pytest.mark.models
def test_minilms_embeddings_of_the_learners_sentences(browser, live_server):
    with lab_page(browser, live_server, "connections/embeddings?source=minilm") as (page, _):
        expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=120_000)
        words = page.locator("#cx-words li")
        assert words.first.inner_text().startswith(
            "MiniLM embedded your 4 sentences and their 4 matches: 384"
        )
        cell = page.locator("#cx-pic-similarity text.cx-cell-text").first  # S1 · M1
        was = cell.text_content()
        sentences = page.locator("#cx-in-sentences")
        sentences.fill(
            "Dogs bark at night.\nThe train leaves at noon.\nShe plays the violin.\nIt is raining in London."
        )
        sentences.press("Control+Enter")
        expect(cell).not_to_have_text(was, timeout=120_000)
        settle(page)
        assert "sentences=Dogs%20bark%20at%20night." in page.url
        assert page.locator("#cx-in-sentences-error").inner_text() == ""
