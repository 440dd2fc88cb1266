"""Helpers shared by the connection labs' browser tests (``test_connections_*.py``).

Import them with ``from connectionskit import ...`` (``conftest.py`` puts this folder on ``sys.path``).

- ``lab_page(browser, live_server, path, width=1280, height=900)``: a context manager giving
  ``(page, recorder)`` on ``path`` (``"connections/flash?n=16"``), drawn; on leaving it closes the
  context and asserts that no request left the live server and no console error happened.
- ``settle(page)``: wait until no request of the lab's page is outstanding.
- ``slide(page, name, key, times)``: move control ``name``'s slider from the keyboard.
- ``serious(page, within)``: axe-core's serious and critical findings inside ``within``.
- ``assert_fits(page, width)``: no sideways scroll at ``width``.
- ``practise(page, challenge)``: open a challenge, check it, and return its feedback and history.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from axe_playwright_python.sync_playwright import Axe
from labkit import Recorder
from playwright.sync_api import expect

PHONE = {"width": 390, "height": 844}


@contextmanager
def lab_page(browser, live_server, path: str, width: int = 1280, height: int = 900) -> Iterator[tuple]:
    phone = width < 600
    context = browser.new_context(
        viewport={"width": width, "height": height}, has_touch=phone, is_mobile=phone
    )
    page = context.new_page()
    recorder = Recorder()
    recorder.attach(page)
    page.goto(live_server.url + path)
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    settle(page)
    yield page, recorder
    context.close()
    recorder.check(live_server.url, live_server)


def settle(page) -> None:
    expect(page.locator("html")).to_have_attribute("data-cx-pending", "0")


def slide(page, name: str, key: str, times: int = 1) -> None:
    """Focus control ``name``'s slider and press ``key`` ``times`` times, then wait for the answers."""
    slider = page.locator(f"#cx-in-{name}")
    slider.focus()
    for _ in range(times):
        slider.press(key)
    settle(page)


def serious(page, within: str = "main") -> list:
    results = Axe().run(page, context=within)
    return [
        (v["id"], [n["target"] for n in v["nodes"]])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def assert_fits(page, width: int) -> None:
    widths = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1] <= width, f"the page scrolls sideways: {widths}"


def practise(page, challenge: str) -> tuple[str, list[str]]:
    """Open ``challenge``, press Check, and return its feedback text and the history's headings."""
    details = page.locator(f"#cx-challenge-{challenge}")
    if not details.evaluate("d => d.open"):
        details.locator("summary").click()
        settle(page)
    details.locator('button[data-action="check"]').click()
    feedback = page.locator(f'[data-feedback="{challenge}"]')
    expect(feedback).not_to_be_empty()
    settle(page)
    headings = page.locator("#cx-history h4").all_inner_texts()
    return feedback.inner_text(), headings
