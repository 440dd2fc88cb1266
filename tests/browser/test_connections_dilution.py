"""The dilution lab in a real browser: its link, the marker moving with n, the scaling choice, practice,
axe and a phone."""

from __future__ import annotations

import pytest
from connectionskit import PHONE, lab_page, practise, settle, slide

pytestmark = pytest.mark.browser


def test_n_and_the_scaling_move_the_picture(browser, live_server):
    with lab_page(browser, live_server, "connections/dilution?keys=64") as (page, _):
        marker = page.locator("#cx-pic-largest .cx-marker")
        before = marker.get_attribute("x1")
        slide(page, "keys", "End")
        assert marker.get_attribute("x1") != before and "keys=4096" in page.url
        first = page.locator("#cx-words li").first
        assert "the √d_k scaling on" in first.inner_text()
        page.locator("#cx-in-scaling").select_option("off")
        settle(page)
        assert "the √d_k scaling off" in first.inner_text()


def test_practice_on_a_phone(browser, live_server):
    with lab_page(browser, live_server, "connections/dilution", **PHONE) as (page, _):
        page.locator("#cx-challenge-scaling summary").click()
        settle(page)
        page.locator("#cx-resp-scaling-sharper").check()
        text, _ = practise(page, "scaling")
        assert text.startswith("✓ Goal met.")


@pytest.mark.models
def test_the_needle_in_smollm2(browser, live_server):
    from playwright.sync_api import expect

    with lab_page(browser, live_server, "connections/dilution?needle=on") as (page, _):
        expect(page.locator("html")).to_have_attribute("data-cx-live", "done", timeout=300_000)
        settle(page)
        assert page.locator("#cx-pic-needle polyline").count() == 3
        kept = page.locator("#cx-words li").nth(4).inner_text()
        assert kept.startswith("From 16 to 256 tokens that head's share")
