"""Every benchmark still runs: ``benchmarks/bench_*.py --smoke`` exits 0, each in a process of its own.

A smoke run is tiny (small sizes, one repeat, absent peers skipped with a printed reason:
``benchmarks/smoke.py``). No figure is checked here (timing never goes in a test): what fails
is a benchmark that no longer runs, through a module that moved, a renamed function or a
peer's changed API. Every ``bench_*.py`` there is is run, those added later too; each is marked
with what its ``NEEDS`` declares (read from its source, not imported), and a script that
declares nothing is marked ``models`` and ``browser``.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("bench_*.py"))
MARKS = {"models": pytest.mark.models, "browser": pytest.mark.browser}
TIMEOUT_S = 900  # a bound on a hang: a smoke run takes seconds to a few minutes on a busy machine


def needs(script: Path) -> tuple[str, ...]:
    """The script's ``NEEDS`` (a literal tuple at its top level), or both marks when it declares none."""
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "NEEDS" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    return tuple(MARKS)


def test_the_benchmarks_are_found_and_say_what_they_need():
    assert len(SCRIPTS) >= 10, [s.name for s in SCRIPTS]
    assert needs(BENCHMARKS / "bench_attention.py") == ()
    assert needs(BENCHMARKS / "bench_page_views.py") == ("models", "browser")
    for script in SCRIPTS:
        assert set(needs(script)) <= set(MARKS), (script.name, needs(script))


@pytest.mark.parametrize(
    "script",
    [pytest.param(s, id=s.stem, marks=[MARKS[n] for n in needs(s)]) for s in SCRIPTS],
)
def test_the_benchmark_runs_its_smoke_run(script: Path, tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(script), "--smoke"],
        cwd=tmp_path,  # nothing it writes lands in the repository
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    if "unrecognized arguments: --smoke" in done.stderr:
        pytest.fail(f"{script.name} has no --smoke run: every benchmark needs one (benchmarks/smoke.py)")
    assert done.returncode == 0, (
        f"{script.name} --smoke exited with {done.returncode}\n"
        f"--- stderr (end) ---\n{done.stderr[-4000:]}\n--- stdout (end) ---\n{done.stdout[-2000:]}"
    )
    assert done.stdout.strip(), f"{script.name} --smoke printed nothing"
