"""Helpers shared by the Real model view's browser tests (``test_real_model*.py``).

Import them with ``from realkit import ...`` (``conftest.py`` puts this folder on ``sys.path``).

- ``real_model_view(browser, live_server, width, height)``: a context manager giving
  ``(page, recorder)`` on /real-model, drawn; on leaving it closes the context and asserts
  (``labkit.Recorder.check``) that no request left the live server and no console error happened.
- ``page_fixture(width, height)``: a pytest fixture giving that view's page, e.g.
  ``desktop = page_fixture(1280, 900)`` at a test module's top level (pytest names it ``desktop``).
- ``trace(page, text, model)``: trace a text and wait until the page says ``Done:``.
- ``job_id(page, part)``: the job id in the last request the page made whose URL contains ``part``.
- ``assert_no_sideways_scroll(page)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from labkit import Recorder
from playwright.sync_api import expect

# a traced real model can take minutes on a busy 2-core machine (the first load reads the weights)
TRACE_TIMEOUT_MS = 180_000


@contextmanager
def real_model_view(browser, live_server, width: int, height: int) -> Iterator[tuple]:
    """/real-model at ``width`` x ``height`` (touch below 600 px), as ``(page, recorder)``."""
    context = browser.new_context(viewport={"width": width, "height": height}, has_touch=width < 600)
    page = context.new_page()
    recorder = Recorder()
    recorder.attach(page)
    page.goto(live_server.url + "real-model")
    expect(page.locator("body")).to_have_attribute("data-ready", "true")
    yield page, recorder
    context.close()
    recorder.check(live_server.url, live_server)


def page_fixture(width: int, height: int):
    """A function-scoped fixture: the page of :func:`real_model_view` at ``width`` x ``height``."""

    @pytest.fixture
    def page(browser, live_server):
        with real_model_view(browser, live_server, width, height) as (opened, _):
            yield opened

    return page


def trace(page, text: str, model: str = "minilm") -> None:
    """Trace ``text`` with ``model`` and wait for the run to finish."""
    page.locator("#rm-text").fill(text)
    page.locator("#rm-model").select_option(model)
    page.locator("#rm-run").click()
    expect(page.locator("#rm-status")).to_contain_text("Done:", timeout=TRACE_TIMEOUT_MS)
    # hovering a token focuses it, and a scroll (e.g. a title taking the focus) can slide a token
    # under a resting pointer: keep the pointer at the page's edge, off every token
    page.mouse.move(1, 1)


def job_id(page, part: str) -> str:
    """The job id of the last request the page made to a URL containing ``part``."""
    urls = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    return [u for u in urls if part in u][-1].split("/jobs/")[1].split("/")[0]


def assert_no_sideways_scroll(page) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways: {widths}"
