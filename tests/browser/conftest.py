"""Browser test fixtures (see ``labkit.py`` for what each one gives).

- ``live_server`` (session): ``attnlab serve --no-browser`` on a free 127.0.0.1 port.
- ``browser`` (session, from ``tests/conftest.py``): Debian's headless Chromium with the project's flags.
- ``lab`` (function): the lab drawn at 1280x800 as a ``labkit.Lab``; at teardown it
  asserts that every request went to the live server and no console error happened.
- ``artifacts`` (session): the git-ignored ``test-artifacts/`` folder.

For a phone, a second server or other context options use
``labkit.open_lab(browser, url, **context_options)`` and ``labkit.LiveServer``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# pytest runs with --import-mode=importlib, which leaves sys.path alone; put
# this folder on it so conftest and the tests can `from labkit import ...`.
sys.path.insert(0, str(Path(__file__).parent))

from labkit import ARTIFACTS, LiveServer, open_lab  # noqa: E402


@pytest.fixture(scope="session")
def live_server():
    server = LiveServer().start()
    yield server
    server.stop()


@pytest.fixture
def lab(browser, live_server):
    opened = open_lab(browser, live_server.url)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The git-ignored folder for screenshots and reports."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
