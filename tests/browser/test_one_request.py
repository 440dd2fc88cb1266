"""One state, one request: a settled move or a mask click costs exactly one request.

Requests are counted at the browser: every fetch to /api/* and every frame sent
on the WebSocket. The answer draws both the explorer and the held table.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from attnlab.lab import sequence as seq

pytestmark = pytest.mark.browser


def counter(page) -> list[str]:
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/api/" in r.url else None)
    page.on(
        "websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(f"ws:{str(payload)[:20]}"))
    )
    return sent


def test_a_settled_move_and_a_mask_click_each_make_one_request(lab):
    page = lab.page
    # a socket opened before counting starts still reports its frames: count from a reload
    sent = counter(page)
    page.reload()
    lab.wait_drawn()
    expect(page.locator("#seq-table .seq-output").first).not_to_be_empty()
    lab.wait_settled()
    page.wait_for_timeout(300)
    sent.clear()

    handle = page.locator("#match-plot .handle")
    handle.focus()
    handle.press("ArrowUp")
    lab.wait_for_query("[2, 1.1]")
    held = seq.edit_query(seq.STARTING, [2.0, 1.1])
    rows = seq.sequence_view(held)["rows"]
    expect(page.locator("#seq-table .seq-query").first).to_have_text("q = [2, 1.1]")
    expect(page.locator("#seq-table [data-field='output-0']")).to_have_text(rows[0]["output_text"])
    lab.wait_settled()
    page.wait_for_timeout(500)  # nothing follows the answer
    assert len(sent) == 1, sent

    sent.clear()
    page.locator("#mask-1-0").uncheck()
    held = seq.set_mask_cell(held, 1, 0, False)
    out1 = seq.sequence_view(held)["rows"][1]["output_text"]
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
