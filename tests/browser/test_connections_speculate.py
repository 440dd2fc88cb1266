"""The speculative-decoding lab in a real browser: SmolLM2's run arrives (the page asks again while it
waits), its steps and times are drawn, the toy rule moves with q while the run stays, practice, axe and
a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.models]

RUN_MS = 240_000  # the first run loads SmolLM2 in the worker


def wait_for_the_run(page) -> None:
    expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=RUN_MS)
    settle(page)


def test_the_run_is_drawn_and_the_toy_rule_moves_with_q(browser, live_server, artifacts):
    with lab_page(browser, live_server, "connections/speculate?tokens=12") as (page, _):
        wait_for_the_run(page)
        words = page.locator("#cx-words li")
        assert words.first.inner_text().startswith("Speculative decoding gave the same 12 tokens as plain")
        assert page.locator("#cx-pic-steps rect.cx-cell").count() > 0
        assert page.locator("#cx-pic-time polyline").count() == 2
        page.screenshot(path=str(artifacts / "connections-speculate.png"), full_page=True)
        toy = page.locator("#cx-pic-toy text.cx-cell-text")
        assert toy.nth(4).text_content() == "1/5"  # q of A: weights 2, 4, 1, 3
        slide(page, "q1", "ArrowRight", 3)  # q's weight of A: 2 → 5
        assert toy.nth(4).text_content() == "5/13" and "q1=5" in page.url
        assert page.locator("html").get_attribute("data-cx-live") == "done"  # the same run, kept
        assert words.last.inner_text().endswith("A 1/2, B 1/5, C 1/5, D 1/10 (fractions, no rounding).")


def test_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/speculate?tokens=8", **PHONE) as (page, _):
        wait_for_the_run(page)
        for name, value in (("q1", 5), ("q2", 2), ("q3", 2), ("q4", 1)):
            page.locator(f"#cx-in-{name}").fill(str(value))
        settle(page)
        text, headings = practise(page, "never-rejected")
        assert text.startswith("✓ Goal met.") and headings == ["A draft that is never rejected · attempt 1"]
