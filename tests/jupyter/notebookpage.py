"""A notebook open in JupyterLab in Chromium, and everything its page requested.

Import with ``from notebookpage import ...`` (``conftest.py`` puts this folder on
``sys.path``); the server is ``jupyterkit.JupyterLab``.

- :class:`Notebook`: one notebook written with nbformat, opened in JupyterLab in a
  fresh browser context (its own workspace, so pages never reopen each other's
  notebooks); it waits for our kernel to be idle, runs every cell (Run > Run All
  Cells), runs a new cell and reads its text output, and fails on any traceback
  or stderr output in the notebook.
- :class:`Recorder`: every request and WebSocket of the page, every console error
  and page error. Requests to any host but 127.0.0.1/localhost are aborted before
  they leave and listed; :meth:`Notebook.close` asserts there were none and no
  console error outside :data:`JUPYTERLAB_NOISE`.

Waiting: everything waits with Playwright's ``expect`` (auto-retrying), never with a
fixed sleep, so a slow, busy machine only makes the tests slower.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
from jupyterkit import ARTIFACTS, KERNEL_NAME, JupyterLab
from playwright.sync_api import Browser, Locator, Page, expect

LOCAL_HOSTS = {"127.0.0.1", "localhost"}

# A cell's kernel work (importing torch, a model's forward pass) on a busy 2-core
# machine: generous, because expect() returns as soon as the page is ready.
CELL_TIMEOUT_MS = 120_000
LOAD_TIMEOUT_MS = 90_000
WIDGET_TIMEOUT_MS = 30_000  # expect()'s default in the widget tests: a redraw is a kernel round trip

# Console errors JupyterLab itself logs that have nothing to do with the widgets.
# None so far; each entry must say why it is harmless. A test adds its own with
# Recorder.allow.
JUPYTERLAB_NOISE: list[re.Pattern] = []


def is_local(url: str) -> bool:
    """True for URLs that stay on this machine: 127.0.0.1/localhost, blob:, data:, about:."""
    parts = urlsplit(url)
    if parts.scheme in ("blob", "data", "about"):
        return True
    return parts.hostname in LOCAL_HOSTS


@dataclass
class Recorder:
    """Every request, foreign request and console error of one browser context."""

    requests: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    allowed: list[re.Pattern] = field(default_factory=lambda: list(JUPYTERLAB_NOISE))
    excused: set[str] = field(default_factory=set)

    def allow(self, pattern: str) -> None:
        """Accept console errors matching ``pattern`` (a regex) in this test."""
        self.allowed.append(re.compile(pattern))

    def attach(self, page: Page) -> None:
        context = page.context
        # Abort (and list) every request for another host before it leaves.
        context.route(lambda url: not is_local(url), self._refuse)
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("websocket", self._websocket)
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console_errors.append(f"pageerror: {e}\n{e.stack}"))

    def _refuse(self, route) -> None:
        self.foreign.append(route.request.url)
        route.abort()

    def _websocket(self, ws) -> None:
        self.requests.append(ws.url)
        if not is_local(ws.url):
            self.foreign.append(ws.url)

    def outside(self) -> list[str]:
        """Every URL the page asked for on another host (each was aborted), sorted, once each."""
        asked = set(self.foreign + [u for u in self.requests if not is_local(u)])
        return sorted(asked - self.excused)

    def excuse(self, url: str) -> None:
        """Accept ``url`` from now on: a test provoked it on purpose and saw it caught.

        From now on, not just once: the browser may ask for it again (an image retried).
        """
        self.excused.add(url)

    def check(self) -> None:
        assert self.outside() == [], f"requests left the machine: {self.outside()}"
        errors = [e for e in self.console_errors if not any(p.search(e) for p in self.allowed)]
        assert errors == [], f"console errors: {errors}"


def write_notebook(root: Path, name: str, cells: list[str]) -> str:
    """Write code ``cells`` as ``<name>.ipynb`` in ``root`` (python3 kernel); return its file name."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    filename = f"{name}.ipynb"
    nbformat.write(notebook, root / filename)
    return filename


@dataclass
class Notebook:
    """One notebook open in JupyterLab, in a browser context of its own."""

    page: Page
    recorder: Recorder
    server: JupyterLab
    path: str

    @classmethod
    def open(cls, browser: Browser, server: JupyterLab, name: str, cells: list[str]) -> Notebook:
        """Write the notebook, open it in a fresh context and wait until its kernel is idle."""
        path = write_notebook(server.root, name, cells)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(LOAD_TIMEOUT_MS)
        page = context.new_page()
        recorder = Recorder()
        recorder.attach(page)
        notebook = cls(page=page, recorder=recorder, server=server, path=path)
        try:
            page.goto(cls.url_for(server, path, name))
            expect(notebook.cells).to_have_count(len(cells), timeout=LOAD_TIMEOUT_MS)
            notebook.wait_kernel_idle()
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=ARTIFACTS / f"jupyter-{name}-open.png")
            context.close()
            server.shutdown_kernels_of(path)
            raise
        return notebook

    @staticmethod
    def url_for(server: JupyterLab, path: str, name: str) -> str:
        """JupyterLab's URL for notebook ``path``, in a workspace of its own."""
        return server.lab_url(path, workspace=f"{name}-{uuid.uuid4().hex[:8]}")

    @property
    def panel(self) -> Locator:
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")

    @property
    def cells(self) -> Locator:
        return self.panel.locator(".jp-Notebook .jp-Cell.jp-CodeCell")

    def cell(self, index: int) -> Locator:
        return self.cells.nth(index)

    def output(self, index: int) -> Locator:
        """The output area of code cell ``index`` (widget views render inside it)."""
        return self.cell(index).locator(".jp-OutputArea")

    def wait_kernel_idle(self) -> None:
        """Wait until the notebook's kernel (ours, by its name) has started and is idle."""
        # The status bar names the current notebook's kernel and its state; before
        # the kernel has started it says "No Kernel | Initializing".
        status = self.page.locator('#jp-main-statusbar .jp-StatusBar-TextItem[title^="Change kernel"]')
        expect(status).to_have_text(f"{KERNEL_NAME} | Idle", timeout=LOAD_TIMEOUT_MS)

    def wait_cell_done(self, index: int) -> None:
        """Wait until cell ``index`` has run: its prompt shows an execution count."""
        prompt = self.cell(index).locator(".jp-InputArea-prompt")
        expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"), timeout=CELL_TIMEOUT_MS)

    def run_all(self) -> None:
        """Run > Run All Cells, then wait for every cell to finish, in order."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        # The first cell is queued at once ("[*]:"); say so early if nothing started.
        expect(self.cell(0).locator(".jp-InputArea-prompt")).not_to_have_text("[ ]:", timeout=30_000)
        for index in range(self.cells.count()):
            self.wait_cell_done(index)
        self.wait_kernel_idle()
        self.assert_no_error_output()

    def run_new_cell(self, code: str) -> str:
        """Add a code cell at the end with ``code``, run it and return its text output."""
        count = self.cells.count()
        last = self.cell(count - 1)
        # A widget's control may still have the focus (the notebook leaves focus inside a
        # cell it contains), and the widgets keep the notebook's shortcuts off their controls.
        self.page.evaluate("() => document.activeElement?.blur()")
        last.locator(".jp-InputArea-prompt").click()  # select the last cell (command mode)
        self.page.keyboard.press("Escape")
        self.page.keyboard.press("b")  # insert a cell below, and edit it
        expect(self.cells).to_have_count(count + 1)
        editor = self.cell(count).locator(".cm-content")
        editor.click()
        # insert_text types no keys: no auto-closed brackets, no auto-indent.
        self.page.keyboard.insert_text(code)
        expect(editor).to_have_text(code.replace("\n", ""))
        self.page.keyboard.press("Control+Enter")
        self.wait_cell_done(count)
        self.assert_no_error_output()
        return self.text_output(count)

    def text_output(self, index: int) -> str:
        return self.output(index).inner_text().strip()

    def assert_no_error_output(self) -> None:
        errors = self.panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        tracebacks = self.panel.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']")
        texts = [t.inner_text() for t in tracebacks.all()] + [t.inner_text() for t in errors.all()]
        assert texts == [], f"a cell failed:\n{texts}"

    def close(self) -> None:
        """Close the page, shut its kernel down, then check requests and console errors."""
        self.page.context.close()
        self.server.shutdown_kernels_of(self.path)
        self.recorder.check()
