"""Widgets ship the page's own modules (read at runtime, dependencies first) and scoped CSS; lazy import."""

from __future__ import annotations

import posixpath
import re
import subprocess
import sys

import pytest

from attnlab.widgets.assets import JS, module_graph, read_js, scoped_css

IMPORT = re.compile(r"""from\s*["'](\.\.?/[\w./-]+\.js)["']""")


def imported(name: str, source: str) -> set[str]:
    """The modules ``name`` imports, as paths under web/static/js."""
    here = posixpath.dirname(name)
    return {posixpath.normpath(posixpath.join(here, spec)) for spec in IMPORT.findall(source)}


@pytest.mark.parametrize("view", ["widgets/explorer.js", "widgets/heads.js", "widgets/block.js"])
def test_each_view_gets_its_imports_first_exactly_as_on_disk(view):
    graph = module_graph([view])
    names = [name for name, _ in graph]
    assert names[-1] == view and len(set(names)) == len(names)
    for i, (name, source) in enumerate(graph):
        assert source == (JS / name).read_text(encoding="utf-8")  # shared, never copied
        assert imported(name, source) <= set(names[:i]), name


def test_the_entry_module_imports_nothing_and_computes_nothing():
    entry = read_js("widgets/entry.js")
    assert not re.search(r"^\s*import\s", entry, re.M)
    assert "Math." not in entry


def test_the_page_css_is_scoped_to_the_widget():
    css = scoped_css(["lab.css", "block.css"])
    assert css.startswith(".attnlab-widget {\n")
    assert "\n& {\n  --ink:" in css  # :root's colours become the widget's
    outside = css[css.rindex("\n}\n") + 3 :].splitlines()  # after the wrapper's closing brace
    assert outside and all(line.startswith("@keyframes") for line in outside)


def test_importing_attnlab_does_not_import_anywidget():
    code = "import sys, attnlab, attnlab.widgets; print('anywidget' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_anywidget_the_error_names_the_extra():
    code = "import sys; sys.modules['anywidget'] = None\nfrom attnlab.widgets import Explorer"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode != 0
    assert "pip install 'attnlab[jupyter]'" in out.stderr
