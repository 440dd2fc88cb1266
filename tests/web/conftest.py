"""Fixtures shared by the web tests."""

from __future__ import annotations

import threading

import anyio
import pytest


@pytest.fixture
def run_async():
    """Run an async function to completion in a thread of its own and return its result.

    Not in the test's thread: a Playwright session started by an earlier test (the
    browser tests) keeps an event loop running in the main thread, and ``anyio.run``
    refuses to start a second one there.
    """

    def run(fn, *args):
        box: dict = {}

        def target() -> None:
            try:
                box["result"] = anyio.run(fn, *args)
            except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
                box["error"] = error

        thread = threading.Thread(target=target, name="test-async")
        thread.start()
        thread.join(120)
        assert not thread.is_alive(), "the async test body did not finish within 120 s"
        if "error" in box:
            raise box["error"]
        return box.get("result")

    return run
