"""Every test run keeps its weight cache in a folder of its own, never the user's.

``ATTNLAB_CACHE_DIR`` (see ``attnlab.models.weight_cache``) is pointed at a fresh
temporary folder before any test imports a model, and the folder is removed at
the end of the session; processes the tests start inherit it. To keep the cache
between runs while working on the tests, set ``ATTNLAB_TEST_CACHE_DIR`` to a
folder used only by tests: it is used instead, and kept.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_KEEP = os.environ.get("ATTNLAB_TEST_CACHE_DIR")
_FOLDER = _KEEP or tempfile.mkdtemp(prefix="attnlab-test-cache-")
os.environ["ATTNLAB_CACHE_DIR"] = _FOLDER


def pytest_sessionfinish(session, exitstatus) -> None:
    if not _KEEP:
        shutil.rmtree(_FOLDER, ignore_errors=True)
