"""`attnlab flash` through the real entry point: the lab's words and tables, JSON, the program, refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from attnlab.lab.connections.page import lab_page

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, "flash", *args], capture_output=True, text=True, timeout=120)


def test_prints_the_labs_words_and_tables():
    done = run("--n", "16", "--tile", "4", "--row", "5")
    assert done.returncode == 0, done.stderr
    page = lab_page("flash", {"n": 16, "tile": 4, "row": 5}, "inputs")
    lines = done.stdout.splitlines()
    assert lines[0] == page["lab"]["title"]
    assert lines[2 : 2 + len(page["words"])] == [w["text"] for w in page["words"]]
    assert "Row 5, tile by tile" in lines
    assert lines[lines.index("Row 5, tile by tile") + 1].split() == [
        "tile",
        "keys",
        "m",
        "l",
        "e^(m",
        "−",
        "m′)",
        "O",
        "/",
        "l",
    ]


def test_json_and_python():
    done = run("--json", "--n", "8", "--seed", "3")
    page = lab_page("flash", {"n": 8, "seed": 3}, "inputs")
    assert json.loads(done.stdout) == {"inputs": page["inputs"], "data": page["data"]}
    assert run("--python", "--n", "8", "--seed", "3").stdout == page["python"]


def test_a_refused_value_is_one_line_and_status_2():
    done = run("--n", "8", "--tile", "9")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "attnlab: error: --tile must be at most 8, the sequence length n\n"
