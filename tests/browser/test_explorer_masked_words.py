"""The explorer's fixed sentences follow the row it shows: masked row or unmasked projection.

The expected sentences come from attnlab.lab.explorer.texts.explorer_texts for the
held example the learner has reached, never from the page itself.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.texts import explorer_texts

pytestmark = pytest.mark.browser

# explorer_texts key -> the element that shows it
PLACES = {
    "row": "#row-explain",
    "given": "#explorer-given",
    "q_legend": "#q-legend",
    "allowed": "#current-allowed",
    "example": "#words-example",
}


def expect_texts(page, held):
    texts = explorer_texts(held)
    assert set(texts) == set(PLACES)
    for key, selector in PLACES.items():
        expect(page.locator(selector)).to_have_text(texts[key]["text"])


def test_the_explorers_sentences_say_whether_the_row_is_masked(lab, artifacts):
    page = lab.page
    lab.open("every-number")
    lab.open("current")
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")
    expect_texts(page, seq.STARTING)
    # the row label is explained in words a newcomer can follow
    expect(page.locator("#row-explain")).to_have_text(
        "This is token A's query in the held sequence below, unmasked: it may attend to every source "
        "(A, B, C)."
    )
    expect(page.locator("#current-allowed")).to_have_text(
        "All sources are allowed here; this is not a masked sequence output."
    )

    # row 1 under the causal mask: C is blocked, and no sentence calls the row unmasked
    page.locator("#show-row-1").click()
    expect(page.locator("#row-label")).to_have_text("Row 1 (B) · masked row.")
    row1 = seq.select_row(seq.STARTING, 1)
    expect_texts(page, row1)
    allowed = page.locator("#current-allowed")
    expect(allowed).to_have_text("This is row 1's masked sequence output: C blocked.")
    for selector in PLACES.values():
        expect(page.locator(selector)).not_to_contain_text("unmasked head")
        expect(page.locator(selector)).not_to_contain_text("not a masked")
    legend = page.locator("#q-legend")
    expect(legend).to_have_text("Change the query · returns the explorer to row 0, unmasked")
    page.locator("#explorer").screenshot(path=artifacts / "explorer-masked-row-1.png")

    # back to row 0's unmasked projection with the sequence's button
    page.locator("#seq-unmasked").click()
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")
    expect_texts(page, seq.STARTING)

    # row 2 masked allows every source; a query edit then returns to row 0, unmasked
    page.locator("#show-row-2").click()
    expect(page.locator("#row-label")).to_have_text("Row 2 (C) · masked row.")
    expect_texts(page, seq.select_row(seq.STARTING, 2))
    expect(page.locator("#current-allowed")).to_have_text(
        "This is row 2's masked sequence output: its mask row allows every source."
    )
    handle = page.locator("#match-plot .handle")
    handle.focus()
    handle.press("ArrowUp")
    expect(page.locator("#row-label")).to_have_text("Row 0 (A) · unmasked projection.")
    expect_texts(page, seq.STARTING)
