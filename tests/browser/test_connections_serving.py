"""The serving lab in a real browser: SmolLM2's run arrives (the page asks again while it waits), the
timelines and steps are drawn, a new batch size runs again, practice, axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import lab_page, practise, settle, slide
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.models]

RUN_MS = 240_000  # the first run loads SmolLM2 in the worker
QUERY = "connections/serving?prompts=Hi%0AThe%20capital%20of%20France%20is%0AOne%2C%20two%2C&tokens=6"


def wait_for_the_run(page) -> None:
    expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=RUN_MS)
    settle(page)


def test_the_run_is_drawn_and_a_smaller_batch_runs_again(browser, live_server, artifacts):
    with lab_page(browser, live_server, QUERY) as (page, _):
        wait_for_the_run(page)
        words = page.locator("#cx-words li")
        assert words.first.inner_text().startswith("Each of the 3 requests got the same tokens both ways")
        assert page.locator("#cx-pic-timeline-one rect.cx-band").count() == 3
        batched = page.locator("#cx-pic-steps-batched text.cx-cell-text")
        assert batched.count() == 3 + 3 * 5  # three prompt passes, five steps of all three
        page.screenshot(path=str(artifacts / "connections-serving.png"), full_page=True)
        slide(page, "batch", "Home")  # a batch of 1: a new run
        wait_for_the_run(page)
        assert "batch=1" in page.url
        assert page.locator("#cx-pic-steps-batched text.cx-cell-text").count() == 3 * 6
        text, headings = practise(page, "batch-one")
        assert text.startswith("✓ Goal met.") and headings == ["Batching that is no batching · attempt 1"]
