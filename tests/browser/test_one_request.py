"""One state, one request: a settled move or a mask click costs exactly one request.

Requests are counted at the browser: every fetch to /api/* and every frame sent
on the WebSocket. The answer draws both the explorer and the held table.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.stepper import stepper
from attnlab.lab.explorer.view import sequence_view

pytestmark = pytest.mark.browser


def counter(page) -> list[str]:
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/api/" in r.url else None)
    page.on(
        "websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(f"ws:{str(payload)[:20]}"))
    )
    return sent


def load_the_block(page) -> None:
    """The block section loads its own data when it is about to be seen (scrolling to the
    held table comes near it): load it before counting, so it is not counted as a move's."""
    page.locator("#block").scroll_into_view_if_needed()
    expect(page.locator("#block-summary")).not_to_be_empty()
    expect(page.locator("html")).to_have_attribute("data-block-pending", "0")


def counting_from_a_reload(lab) -> list[str]:
    """The page reloaded, drawn and its block loaded, with every request since the reload recorded
    (a socket opened before counting starts still reports its frames: count from a reload)."""
    sent = counter(lab.page)
    lab.page.reload()
    lab.wait_drawn()
    load_the_block(lab.page)
    return sent


def test_a_settled_move_and_a_mask_click_each_make_one_request(lab):
    page = lab.page
    sent = counting_from_a_reload(lab)
    expect(page.locator("#seq-table .seq-output").first).not_to_be_empty()
    lab.wait_settled()
    page.wait_for_timeout(300)
    sent.clear()

    handle = page.locator("#match-plot .handle")
    handle.focus()
    handle.press("ArrowUp")
    lab.wait_for_query("[2, 1.1]")
    held = seq.edit_query(seq.STARTING, [2.0, 1.1])
    rows = sequence_view(held)["rows"]
    expect(page.locator("#seq-table .seq-query").first).to_have_text("q = [2, 1.1]")
    expect(page.locator("#seq-table [data-field='output-0']")).to_have_text(rows[0]["output_text"])
    lab.wait_settled()
    page.wait_for_timeout(500)  # nothing follows the answer
    assert len(sent) == 1, sent

    sent.clear()
    page.locator("#mask-1-0").click()  # not uncheck(): a redraw may replace the box mid-action
    expect(page.locator("#mask-1-0")).not_to_be_checked()
    held = seq.set_mask_cell(held, 1, 0, False)
    out1 = sequence_view(held)["rows"][1]["output_text"]
    expect(page.locator("#seq-table [data-field='output-1']")).to_have_text(out1)
    page.wait_for_timeout(500)
    assert len(sent) == 1, sent

    # a refused mask change: one request, the message by the table, nothing changed
    sent.clear()
    lab.recorder.allow(r"status of 422")
    # click, not uncheck(): uncheck() re-reads the box after clicking, and when the
    # refusal has already redrawn the table that box is detached, so Playwright
    # retries on the new (checked) box and clicks a second time.
    page.locator("#mask-0-0").click()
    expect(page.locator("#seq-message")).to_contain_text("would leave row 0 (A) with no allowed source")
    expect(page.locator("#mask-0-0")).to_be_checked()
    page.wait_for_timeout(300)
    assert len(sent) == 1, sent


def test_the_open_stepper_follows_a_settled_move_in_the_same_one_request(lab):
    """The stepper draws from the state's one answer: no request of its own."""
    page = lab.page
    sent = counting_from_a_reload(lab)
    lab.open("stepper")  # opening it records help (a study request): before counting
    table = page.locator("#stepper-table")
    expect(page.locator("#stepper-title")).to_have_text("Step 1 of 4 · Vectors")
    expect(table.locator("tbody tr").first.locator("td").nth(1)).to_have_text("[2, 1]")
    lab.wait_settled()
    page.wait_for_timeout(500)
    sent.clear()

    handle = page.locator("#match-plot .handle")
    handle.focus()
    handle.press("ArrowUp")
    lab.wait_for_query("[2, 1.1]")
    want = stepper(seq.edit_query(seq.STARTING, [2.0, 1.1]).explorer_trace())["steps"][0]["table"]
    for r, row in enumerate(want["rows"]):
        cells = table.locator("tbody tr").nth(r).locator("td")
        expect(cells.nth(0)).to_have_text(row[1])
        expect(cells.nth(1)).to_have_text(row[2])
    lab.wait_settled()
    page.wait_for_timeout(500)  # nothing follows the answer
    assert len(sent) == 1, sent
