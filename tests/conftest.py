"""Fixtures every folder shares, and the weight cache kept apart from the user's.

``browser`` (session): Debian's headless Chromium with the project's flags. There is
one for the whole session: Playwright's sync API cannot start a second instance while
one runs, so the browser, widget and Jupyter tests all draw on this one.

Every test run keeps its weight cache in a folder of its own, never the user's.

``ATTNLAB_CACHE_DIR`` (see ``attnlab.models.weight_cache``) is pointed at a fresh
temporary folder before any test imports a model, and the folder is removed at
the end of the session; processes the tests start inherit it. To keep the cache
between runs while working on the tests, set ``ATTNLAB_TEST_CACHE_DIR`` to a
folder used only by tests: it is used instead, and kept.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

# pytest runs with --import-mode=importlib, which leaves sys.path alone: put the
# browser kit's folder on it (``from labkit import ...`` in the browser tests too).
sys.path.insert(0, str(Path(__file__).parent / "browser"))
sys.path.insert(0, str(Path(__file__).parent))

# The models and oracles, each loaded once per run, and the real-model API fixtures
# (tests/modelkit.py): tests/models and tests/web/realmodel both use them.
pytest_plugins = ["modelkit"]

_KEEP = os.environ.get("ATTNLAB_TEST_CACHE_DIR")
_FOLDER = _KEEP or tempfile.mkdtemp(prefix="attnlab-test-cache-")
os.environ["ATTNLAB_CACHE_DIR"] = _FOLDER


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _KEEP:
        shutil.rmtree(_FOLDER, ignore_errors=True)


@pytest.fixture(scope="session")
def browser():
    from labkit import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()
