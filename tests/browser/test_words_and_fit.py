"""Issue 13 (words, one limit, phone table): what a newcomer reads and where it fits.

- the held table (#seq-table) fits a 390 px phone: its Output column is on screen;
- no intro paragraph is split across the intro's columns (so no word is);
- the formula list is numbered once ("1." from the list, not "1. 1 · Match");
- a rounded display never shows -0, while the precise field keeps it;
- a refused number is explained next to the field the learner typed in, in the lab's words.
"""

from __future__ import annotations

import pytest
from labkit import open_lab
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def test_held_table_fits_a_phone(browser, live_server, artifacts):
    lab = open_lab(browser, live_server.url, viewport=PHONE, has_touch=True)
    try:
        page = lab.page
        table = page.locator("#seq-table")
        expect(table.locator(".seq-output").first).not_to_be_empty()
        table.scroll_into_view_if_needed()
        box = table.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        for cell in table.locator("th, td").all():
            b = cell.bounding_box()
            assert b["x"] + b["width"] <= PHONE["width"] + 0.5, (cell.inner_text(), b)
        scroller = page.locator("#held .table-scroll")
        assert scroller.evaluate("el => el.scrollWidth <= el.clientWidth")
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
        page.locator("#held").screenshot(path=artifacts / "held-table-phone-390.png")
    finally:
        lab.close()


def test_intro_paragraphs_are_never_split_across_columns(lab):
    page = lab.page
    paragraphs = page.locator("#why p")
    assert paragraphs.count() > 0
    for p in paragraphs.all():
        # a paragraph fragmented across columns has line boxes at two different x positions
        lefts = p.evaluate(
            "el => { const r = document.createRange(); r.selectNodeContents(el);"
            " return [...r.getClientRects()].map(b => Math.round(b.left)); }"
        )
        columns = {x for x in lefts}
        start = min(lefts)
        assert all(x - start < 200 for x in columns), (p.inner_text()[:40], sorted(columns))


def test_formulas_are_numbered_once(lab):
    page = lab.page
    lab.open("every-number")
    items = page.locator(".formulas > li > strong")
    assert items.all_inner_texts() == ["Match and scale", "Share one denominator", "Carry the values"]
    assert page.locator(".formulas").evaluate("el => el.tagName") == "OL"


def test_rounded_numbers_never_show_negative_zero(lab):
    page = lab.page
    lab.open("every-number")
    field = page.locator('input[data-field="q[1]"]')
    field.fill("-0.0001")
    field.press("Enter")
    lab.wait_for_query("[2, 0]")
    assert "-0" not in page.locator("#query-caption").inner_text()
    assert "−0" not in page.locator("#query-caption").inner_text()
    field.fill("-0")
    field.press("Enter")
    lab.wait_for_query("[2, 0]")
    lab.open("precise")
    expect(page.locator("#precise-list")).to_contain_text("[2, -0]")  # the precise numbers keep it
    for selector in ("#summary", "#detail-output", "#cards", "#words"):
        assert "-0 " not in page.locator(selector).inner_text() + " "


def test_refusals_are_in_the_labs_words_next_to_the_field(lab):
    page = lab.page
    lab.recorder.allow(r"status of 422")
    lab.open("current")
    field = page.locator('input[data-field="values[1][0]"]')
    field.fill("2e6")
    field.press("Enter")
    error = page.locator('[data-error-for="values[1][0]"]')
    expect(error).to_have_text("Source B · value x must be at most 1,000,000")
    # next to the field: within a line or two of it, not thousands of pixels away
    f, e = field.bounding_box(), error.bounding_box()
    assert abs(e["y"] - f["y"]) < 80 and abs(e["x"] - f["x"]) < 400
    text = page.locator("main").inner_text()
    for raw in ("Input should", "Expecting value", "Field required", "NaN"):
        assert raw not in text
