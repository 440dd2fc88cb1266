"""Helpers for the block section's browser tests: the API's answers, read in the test.

The tests fetch ``POST /api/block`` themselves and compare its strings with the
page's, so a number the page drew differently (or computed itself) fails.
"""

from __future__ import annotations

import json
import urllib.request

from playwright.sync_api import Page, expect


def api(base_url: str, path: str, body: dict | None = None) -> dict:
    """GET (body None) or POST ``body`` to the lab's ``/api/block<path>``; return the JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"{base_url.rstrip('/')}/api/block{path}",
        data=data,
        headers={"content-type": "application/json"},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def wait_block(page: Page, summary: str | dict | None = None) -> None:
    """Wait until no block answer is outstanding (and, given, the walk's summary is ``summary``,
    a string or the answer's ``{"text", "claims"}`` sentence).

    The section loads its data when it is about to be seen: scroll it near first.
    """
    page.locator("#block").scroll_into_view_if_needed()
    expect(page.locator("#block-step-title")).to_contain_text("Step ")
    expect(page.locator("html")).to_have_attribute("data-block-pending", "0")
    if summary is not None:
        text = summary["text"] if isinstance(summary, dict) else summary
        expect(page.locator("#block-summary")).to_have_text(text)


def shown_tensor(page: Page, scope: str, name: str) -> tuple[list[list[str]], list[list[str]]]:
    """The displayed strings and the precise strings of tensor ``name`` inside ``scope``."""
    table = page.locator(f'{scope} [data-tensor="{name}"] table')
    rows = table.locator("tbody tr").all()
    display = [[td.text_content().split(" (")[0].strip() for td in row.locator("td").all()] for row in rows]
    precise = [[td.get_attribute("data-precise") for td in row.locator("td").all()] for row in rows]
    return display, precise


def go_to_step(page: Page, step_id: str) -> None:
    page.locator(f'#block-walk .block-step-link[data-step="{step_id}"]').click()
    expect(page.locator("#block-step-tensors")).to_have_attribute("data-step", step_id)


def switch_to(page: Page, base_url: str, control: str, body: dict) -> dict:
    """Check the radio ``control``; return the API's answer for ``body`` once the page shows its summary."""
    answer = api(base_url, "", body)
    wait_block(page)
    page.locator(control).check()
    wait_block(page, answer["summary"])
    return answer
