"""Fixtures every folder shares, the weight cache kept apart from the user's, and the lanes' marks.

``browser`` (session): Debian's headless Chromium with the project's flags. There is
one per test process (one per xdist worker): Playwright's sync API cannot start a second
instance while one runs, so the browser, widget and Jupyter tests all draw on this one.

Every test run keeps its weight cache in a folder of its own, never the user's.

``ATTNLAB_CACHE_DIR`` (see ``attnlab.models.weight_cache``) is pointed at a fresh
temporary folder before any test imports a model, and the folder is removed at
the end of the session; processes the tests start inherit it. Under pytest-xdist the
workers share the folder their controller made (the cache writes under temporary names and
renames into place, so two workers building it at once is safe), and the controller removes
it. To keep the cache between runs while working on the tests, set ``ATTNLAB_TEST_CACHE_DIR``
to a folder used only by tests: it is used instead, and kept.

Lanes (``bash scripts/test.sh -m "not browser and not models"`` is the fast lane):

- a test that uses a fixture of :data:`MODEL_FIXTURES` (or one built on them), or is listed in
  :data:`MODEL_TESTS`, is marked ``models``; one that uses ``browser`` is marked ``browser``.
  Others carry the marks by hand (``pytestmark``).
- a run that selects no ``models`` test turns on ``lanes/modelguard.py`` for every process of
  the run: looking for a model package then fails the test that did it, with what to do.
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
sys.path.insert(0, str(Path(__file__).parent / "lanes"))

import modelguard  # noqa: E402

# The models and oracles, each loaded once per run, and the real-model API fixtures
# (tests/modelkit.py): tests/models and tests/web/realmodel both use them.
# The tiny models of every family (tests/familykit.py), a fake Hugging Face cache of them (tests/hubkit.py).
pytest_plugins = ["modelkit", "familykit", "hubkit"]

# Fixtures that load a real model or its oracle (or run a model job): a test using one, or a
# fixture built on one, needs the models.
MODEL_FIXTURES = frozenset({"minilm", "smollm2", "st_oracle", "hf_smollm2", "traced"})
# Tests that read the model packages another way (the real tokenizers count a text before a job
# runs, or a route loads a model): node ids, or their starts. The guard finds any left out.
MODEL_TESTS = (
    "tests/web/test_schema_fuzz.py::test_api_answers_every_request_as_documented",
    "tests/web/test_text_fuzz.py::",
    "tests/web/test_errors.py::test_every_bad_request_gets_a_4xx_in_the_pages_words[/api/models/generate]",
    "tests/web/connections/test_routes.py::test_a_labs_answer_is_the_labs_own[speculate]",
    "tests/web/connections/test_routes.py::test_a_labs_answer_is_the_labs_own[serving]",
    "tests/web/connections/test_routes.py::test_a_labs_answer_is_the_labs_own[circuits]",
    "tests/cli/test_input_edges.py::test_a_negative_seed_is_named",
    "tests/cli/test_input_edges.py::test_generate_has_the_pages_prompt_cap_and_a_stated_cap_on_new_tokens",
)

_RUN_CACHE = "ATTNLAB_TEST_RUN_CACHE_DIR"  # the folder a controller made, for its xdist workers
_KEEP = os.environ.get("ATTNLAB_TEST_CACHE_DIR")
_SHARED = os.environ.get(_RUN_CACHE) if os.environ.get("PYTEST_XDIST_WORKER") else None
_OWNED = not (_KEEP or _SHARED)
_FOLDER = _KEEP or _SHARED or tempfile.mkdtemp(prefix="attnlab-test-cache-")
os.environ["ATTNLAB_CACHE_DIR"] = _FOLDER
# Discovery searches no model of this computer's: an empty Hugging Face cache, no models folder
# (a test that wants found models points the registry at a fake cache: tests/hubkit.py).
os.environ["HF_HUB_CACHE"] = os.path.join(_FOLDER, "no-hub-cache")
os.environ.pop("ATTNLAB_MODELS_DIR", None)
if _OWNED:
    os.environ[_RUN_CACHE] = _FOLDER  # xdist starts its workers after this: they inherit it


def pytest_sessionfinish(session, exitstatus) -> None:
    if _OWNED:
        shutil.rmtree(_FOLDER, ignore_errors=True)
    if _guard_log is not None:
        shutil.rmtree(_guard_log.parent, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the marks added here count
def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & MODEL_FIXTURES or item.nodeid.startswith(MODEL_TESTS):
            item.add_marker(pytest.mark.models)
        if "browser" in used:
            item.add_marker(pytest.mark.browser)


_guard_log: Path | None = None


def pytest_collection_finish(session) -> None:
    """Turn the model guard on when this run selected no ``models`` test."""
    global _guard_log
    if not session.items or any(item.get_closest_marker("models") for item in session.items):
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    _guard_log = Path(tempfile.mkdtemp(prefix="attnlab-model-guard-")) / f"{worker}.log"
    _guard_log.touch()
    modelguard.install()
    os.environ.update(modelguard.environment(str(_guard_log)))


@pytest.fixture(autouse=True)
def _no_model_outside_the_models_mark():
    """With the guard on, fail a test whose subprocesses looked for a model package."""
    if _guard_log is None:
        yield
        return
    seen = _guard_log.stat().st_size
    yield
    with _guard_log.open(encoding="utf-8") as log:
        log.seek(seen)
        lines = log.read()
    if lines:
        pytest.fail(modelguard.message(f"in a process it started:\n{lines}"), pytrace=False)


@pytest.fixture(scope="session")
def browser():
    from labkit import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()
