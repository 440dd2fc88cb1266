"""The circuits lab in a real browser: SmolLM2's census on the probe names the induction head, the map
follows the chosen score while the run stays, the feeder is found in practice, axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.models]

RUN_MS = 240_000  # the first run loads SmolLM2 in the worker


def wait_for_the_run(page) -> None:
    expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=RUN_MS)
    settle(page)


def test_the_census_names_the_induction_head_and_the_map_follows_the_score(browser, live_server, artifacts):
    with lab_page(browser, live_server, "connections/circuits") as (page, _):
        wait_for_the_run(page)
        words = page.locator("#cx-words li")
        assert words.nth(1).inner_text().startswith(
            "On this probe the census names layer 18, head 6 the strongest induction head"
        )
        assert words.last.inner_text().startswith("L16 H0 feeds the induction head")
        assert page.locator("#cx-pic-map .cx-mark").count() == 4  # the induction head and 3 tested heads
        assert page.locator("#cx-pic-pattern rect.cx-cell").count() > 0
        page.screenshot(path=str(artifacts / "connections-circuits.png"), full_page=True)
        cells = page.locator("#cx-pic-map rect.cx-cell")
        before = [cells.nth(i).get_attribute("fill-opacity") for i in range(12)]
        page.locator("#cx-in-map").select_option("previous")
        settle(page)
        assert "map=previous" in page.url
        title = page.locator("#cx-pic-map-title")
        expect(title).to_have_text("Every head's previous token score on the probe")
        assert [cells.nth(i).get_attribute("fill-opacity") for i in range(12)] != before
        assert page.locator("html").get_attribute("data-cx-live") == "done"  # the same run, kept


def test_practice_finds_the_feeder_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/circuits", **PHONE) as (page, _):
        wait_for_the_run(page)
        page.locator("#cx-challenge-feeder summary").click()
        settle(page)
        page.locator("#cx-resp-feeder-0").fill("16")
        page.locator("#cx-resp-feeder-1").fill("0")
        text, headings = practise(page, "feeder")
        assert text.startswith("✓ Goal met.")
        assert headings == ["Which head feeds the induction head? · attempt 1"]
