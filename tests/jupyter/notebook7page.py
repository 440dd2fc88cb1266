"""A notebook open in Notebook 7's own UI (``/notebooks/<name>.ipynb``), not JupyterLab's.

Notebook 7 is built from JupyterLab's parts: the same notebook panel, cells,
prompts, output areas and Run menu (Run > Run All Cells), so
:class:`notebookpage.Notebook` drives it unchanged except for two things: the URL,
and how to tell the kernel is ready (Notebook 7 has no status bar; its toolbar shows
the kernel's name and an execution indicator with ``data-status``).

:data:`NOTEBOOK7_NOISE`: console errors Notebook 7 logs by itself, each with why it
is not ours.
"""

from __future__ import annotations

import re

from jupyterkit import KERNEL_NAME, JupyterLab
from notebookpage import LOAD_TIMEOUT_MS, Notebook
from playwright.sync_api import expect

NOTEBOOK7_NOISE = [
    # notebook 7.6.5's shortcuts plugin (notebook_core.js, `pluginChanged` listener) reads
    # `plugins[id].schema` for a settings plugin Notebook 7 has not registered; it is thrown
    # while the page loads, before any cell has run, with no widget on the page.
    re.compile(r"^pageerror: Cannot read properties of undefined \(reading 'schema'\)\n[^\n]*\n"
               r"\s+at http://127\.0\.0\.1:\d+/static/notebook/notebook_core\.\w+\.js"),
]  # fmt: skip


class Notebook7(Notebook):
    """One notebook open in Notebook 7's single-document UI, in a browser context of its own."""

    @staticmethod
    def url_for(server: JupyterLab, path: str, name: str) -> str:
        return f"{server.url}notebooks/{path}?token={server.token}"

    @classmethod
    def open(cls, browser, server, name, cells) -> Notebook7:
        notebook = super().open(browser, server, name, cells)
        notebook.recorder.allowed.extend(NOTEBOOK7_NOISE)
        return notebook

    def wait_kernel_idle(self) -> None:
        """Wait until the toolbar names our kernel and its execution indicator says idle."""
        name = self.page.locator(".jp-KernelName jp-button, .jp-KernelName button").first
        expect(name).to_have_attribute("aria-label", KERNEL_NAME, timeout=LOAD_TIMEOUT_MS)
        indicator = self.page.locator(".jp-Notebook-ExecutionIndicator")
        expect(indicator).to_have_attribute("data-status", re.compile(r"^idle$"), timeout=LOAD_TIMEOUT_MS)
