"""`attnlab block` through the real entry point."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.lab.block import terminal
from attnlab.lab.block.data import given_weights, given_x
from attnlab.lab.block.page import block_page
from attnlab.lab.block.program import to_python
from attnlab.lab.block.walk import walk

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, "block", *args], capture_output=True, text=True, timeout=60)


def test_walk_is_printed_step_by_step():
    done = run()
    assert done.returncode == 0, done.stderr
    steps = [line for line in done.stdout.splitlines() if line.startswith("Step ")]
    assert steps == [
        "Step 1 of 8 · Embed",
        "Step 2 of 8 · Project",
        "Step 3 of 8 · Attend: head 1",
        "Step 4 of 8 · Attend: head 2",
        "Step 5 of 8 · Combine",
        "Step 6 of 8 · Add & Norm",
        "Step 7 of 8 · MLP",
        "Step 8 of 8 · Add & Norm",
    ]
    assert "Head 1 is a previous-token head: on average 86% of B's and C's attention" in done.stdout
    assert done.stdout == "\n".join(terminal.lines(block_page())) + "\n"  # every line is the lab's
    last = done.stdout.splitlines()[-1]
    assert last == "  C  [" + ", ".join(repr(v) for v in walk().output[2]) + "]"


@pytest.mark.parametrize(
    "args,kwargs",
    [
        ((), {}),
        (("--post-norm", "--positions", "rope"), {"norm": "post", "positions": "rope"}),
        (
            ("--positions", "sinusoidal", "--head-off", "2"),
            {"positions": "sinusoidal", "heads_on": (True, False)},
        ),
    ],
)
def test_json_has_every_intermediate_and_the_paper_names(args, kwargs):
    done = run("--json", *args)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    w = walk(**kwargs)
    assert data["x"] == given_x()
    weights = given_weights()
    assert data["w_q"] == [h["w_q"] for h in weights["heads"]]
    assert data["w_k"] == [h["w_k"] for h in weights["heads"]]
    assert data["w_v"] == [h["w_v"] for h in weights["heads"]]
    assert data["w_o"] == weights["w_o"] and data["w_1"] == weights["w_1"] and data["w_2"] == weights["w_2"]
    assert data["norm_1"] == {**weights["norm_1"], "eps": 1e-5} and data["norm_2"]["gamma"] == [1.0] * 4
    assert data["intermediates"] == w.tensors
    assert data["output"] == w.output


def test_python_prints_the_program_which_runs():
    done = run("--python", "--post-norm")
    assert done.returncode == 0, done.stderr
    assert done.stdout == to_python(walk(norm="post"))
    ran = subprocess.run([sys.executable, "-c", done.stdout], capture_output=True, text=True, timeout=60)
    line = next(x for x in ran.stdout.splitlines() if x.startswith("output = "))
    assert ast.literal_eval(line.removeprefix("output = ")) == walk(norm="post").output


def test_the_walk_shows_the_pages_own_strings_and_no_internal_names():
    done = run("--head-off", "1", "--positions", "rope")
    assert done.returncode == 0, done.stderr
    page = block_page(positions="rope", heads_on=(False, True))
    lines = [line.strip() for line in done.stdout.splitlines()]
    said = [
        page["summary"],
        page["norm_compare"]["summary"],
        page["rope"]["status"],
        page["rope"]["demo"]["sentence"],
    ]
    said += [s["caption"] for s in page["steps"]] + [h["sentence"] for h in page["heads"]]
    said += [a["sentence"] for a in page["ablation"]]
    for s in said:
        assert s["text"] in lines
    assert "Head 1 is off now; measured against the block with Head 1 on" in done.stdout
    assert "norm_1" not in done.stdout and "head1." not in done.stdout and "mlp." not in done.stdout


def test_bad_option_exits_2():
    done = run("--positions", "learned")
    assert done.returncode == 2 and "positions" in done.stderr
