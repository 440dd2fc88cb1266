"""What a widget ships to the browser: the page's ES modules and CSS, read at runtime.

anywidget loads one module (``_esm``): ours is ``web/static/js/widgets/entry.js``,
a loader with no imports of its own. Python hands it, in the ``_modules``
trait, the source text of the page modules a view needs as ``[name, source]``
pairs, dependencies first, each named by its path under ``web/static/js``
(:func:`module_graph` follows each module's ``from "./x.js"`` and
``from "../folder/x.js"`` imports); the loader turns each into a Blob URL with its
relative imports pointed at the Blob URLs already made, so the page's modules
run unchanged and nothing is copied or fetched. The page's CSS is nested
under ``.attnlab-widget`` (:func:`scoped_css`) so it styles the widget and
never the notebook around it.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
JS = STATIC / "js"
CSS = STATIC / "css"

# Static imports and re-exports of a relative module: `from "./x.js"`, `import "../folder/x.js"`.
_IMPORT = re.compile(r"""(?:\bfrom|^\s*import)\s*["'](\.\.?/[\w./-]+\.js)["']""", re.M)


def read_js(name: str) -> str:
    """The text of ``web/static/js/<name>`` (``name`` a path such as ``"widgets/entry.js"``)."""
    return (JS / name).read_text(encoding="utf-8")


def resolve(importer: str, specifier: str) -> str:
    """The module that ``specifier`` (``"./x.js"``, ``"../shared/x.js"``) names from module ``importer``."""
    name = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    if name.startswith("../"):
        raise ValueError(f"{importer} imports {specifier}, which is outside web/static/js")
    return name


def module_graph(entries: list[str]) -> list[list[str]]:
    """``[[name, source], ...]`` for ``entries`` and every module they import, dependencies first.

    Raises ``ValueError`` on an import cycle (a Blob URL needs its imports' URLs first).
    """
    order: list[list[str]] = []
    done: set[str] = set()
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in done:
            return
        if name in visiting:
            raise ValueError(f"import cycle through {name}")
        visiting.add(name)
        source = read_js(name)
        for specifier in _IMPORT.findall(source):
            visit(resolve(name, specifier))
        visiting.discard(name)
        done.add(name)
        order.append([name, source])

    for entry in entries:
        visit(entry)
    return order


def scoped_css(names: list[str]) -> str:
    """The page's CSS files, nested under ``.attnlab-widget`` (``:root`` becomes the widget).

    ``@keyframes`` cannot nest, so they stay at the top level.
    """
    inner, outer = [], []
    for name in names:
        for line in (CSS / name).read_text(encoding="utf-8").splitlines():
            (outer if line.startswith("@keyframes") else inner).append(line)
    body = "\n".join(inner)
    body = re.sub(r"^:root\s*\{", "& {", body, flags=re.M)
    return ".attnlab-widget {\n" + body + "\n}\n" + "\n".join(outer) + "\n"
