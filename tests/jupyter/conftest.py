"""JupyterLab test fixtures (``jupyterkit.py``: the server; ``notebookpage.py``: the page).

- ``jupyter_lab`` (session): a real JupyterLab 4 server from this venv on a free
  127.0.0.1 port, in a temporary folder of its own; stopped, with its kernels, at the end.
- ``chromium``: the session's one headless Chromium (``browser``, ``tests/conftest.py``).
- ``jupyter_notebook`` (session) and ``notebook7_factory`` (function): the same, with
  ``jupyter notebook`` (Notebook 7) and its own UI (``notebook7page.py``).
- ``notebook_factory`` (function): ``open_notebook(name, cells)`` writes a notebook,
  opens it in JupyterLab and returns a ``notebookpage.Notebook``; at teardown each one
  is closed, its kernel shut down, and the checks run: no request left the machine,
  no console error. A failed test leaves a screenshot of each of its notebooks in
  ``test-artifacts/jupyter-<test>.png`` (and the server's log in ``jupyter-server.log``).

One Playwright per process: Playwright's sync API refuses to start while another
instance is running in the same thread, so every folder shares the session's
``browser`` fixture.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

# pytest runs with --import-mode=importlib, which leaves sys.path alone; put this
# folder (jupyterkit) and the browser tests' folder (labkit) on it.
HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "browser"))

from jupyterkit import ARTIFACTS, JupyterLab  # noqa: E402
from notebook7page import Notebook7  # noqa: E402
from notebookpage import WIDGET_TIMEOUT_MS, Notebook  # noqa: E402


@pytest.fixture(scope="session")
def jupyter_lab():
    server = JupyterLab().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chromium(browser):
    """The session's one Chromium (``tests/conftest.py``)."""
    return browser


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.jupyter_call_failed = report.failed  # for notebook_factory's screenshot
    return report


@pytest.fixture(scope="session")
def jupyter_notebook():
    """A second server, ``jupyter notebook`` (Notebook 7), isolated like ``jupyter_lab``."""
    server = JupyterLab(app="notebook").start()
    yield server
    server.stop()


@pytest.fixture
def notebook_factory(request, chromium, jupyter_lab):
    yield from _factory(request, chromium, jupyter_lab, Notebook)


@pytest.fixture
def notebook7_factory(request, chromium, jupyter_notebook):
    """As ``notebook_factory``, in Notebook 7's own UI (``notebook7page.Notebook7``)."""
    yield from _factory(request, chromium, jupyter_notebook, Notebook7)


def _factory(request, chromium, server, kind):
    opened: list[Notebook] = []

    def open_notebook(name: str, cells: list[str]) -> Notebook:
        notebook = kind.open(chromium, server, name, cells)
        opened.append(notebook)
        return notebook

    # Each redraw is a round trip to the kernel through JupyterLab's WebSocket: on a
    # busy 2-core machine it may take longer than expect()'s default 5 s. Restored
    # after the test (None is Playwright's default), so other tests keep theirs.
    expect.set_options(timeout=WIDGET_TIMEOUT_MS)
    yield open_notebook
    expect.set_options(timeout=None)
    for notebook in opened:
        if getattr(request.node, "jupyter_call_failed", False):
            ARTIFACTS.mkdir(exist_ok=True)
            notebook.page.screenshot(path=ARTIFACTS / f"jupyter-{request.node.name}.png", full_page=True)
        notebook.close()
