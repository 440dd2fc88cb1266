"""The page's ES modules import one another without a cycle.

A cycle (``state.js`` → ``example.js`` → ``state.js``) makes a module run before
the one it needs has finished, so which of them sees an uninitialised binding
depends on which the page loads first. The test reads every static ``import`` /
``export … from`` under ``web/static/js`` and fails on the first cycle, naming it.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import pytest

import attnlab.web

JS = Path(attnlab.web.__file__).parent / "static" / "js"
# `import x from "./a.js"`, `import { a, b } from "../b.js"`, `import "./c.js"`, `export { d } from "./d.js"`
SPECIFIER = re.compile(
    r"""^\s*(?:import\s*(?:[\w$*\s{},]+?\s*from\s*)?|export\s*(?:\*(?:\s+as\s+[\w$]+)?|\{[^}]*\})\s*from\s*)["']([^"']+)["']""",
    re.M,
)


def imports_of(text: str) -> list[str]:
    """The relative module specifiers a module's static imports and re-exports name."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)  # block comments may quote code
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return [spec for spec in SPECIFIER.findall(text) if spec.startswith(".")]


def graph(root: Path = JS) -> dict[str, list[str]]:
    """Each module (path relative to ``root``) and the modules it imports."""
    edges: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.js")):
        name = path.relative_to(root).as_posix()
        here = PurePosixPath(name).parent
        edges[name] = []
        for spec in imports_of(path.read_text(encoding="utf-8")):
            parts: list[str] = []
            for part in (here / spec).parts:
                if part == "..":
                    parts.pop()
                elif part != ".":
                    parts.append(part)
            edges[name].append("/".join(parts))
    return edges


def first_cycle(edges: dict[str, list[str]]) -> list[str] | None:
    """A cycle as the modules along it (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the path now, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in edges.get(node, []):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in edges:
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_parser_reads_every_form_of_import():
    text = '''import { a, b } from "./a.js";
import c from "../shared/c.js";
import "./side.js";
export { d } from "./d.js";
import * as f from "./f.js";
export function g() { return document.querySelector(".not-a-module"); }
import {
  e,
} from "./e.js";
// import { z } from "./commented.js";
const url = "./not-an-import.js";
'''
    assert imports_of(text) == ["./a.js", "../shared/c.js", "./side.js", "./d.js", "./f.js", "./e.js"]


def test_a_cycle_is_found_and_named(tmp_path):
    (tmp_path / "explorer").mkdir()
    (tmp_path / "explorer" / "state.js").write_text('import { x } from "./example.js";\n')
    example = tmp_path / "explorer" / "example.js"
    example.write_text('import { y } from "../shared/dom.js";\nimport { s } from "./state.js";\n')
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "dom.js").write_text("export const y = 1;\n")
    cycle = first_cycle(graph(tmp_path))
    assert cycle == ["explorer/example.js", "explorer/state.js", "explorer/example.js"]
    example.write_text('import { y } from "../shared/dom.js";\n')
    assert first_cycle(graph(tmp_path)) is None


def test_every_import_names_a_module_that_exists():
    edges = graph()
    missing = [(name, target) for name, targets in edges.items() for target in targets if target not in edges]
    assert missing == []


@pytest.mark.parametrize("folder", sorted(p.name for p in JS.iterdir() if p.is_dir()))
def test_no_module_imports_itself_through_others(folder):
    cycle = first_cycle(graph())
    assert cycle is None or not cycle[0].startswith(f"{folder}/"), " -> ".join(cycle)
