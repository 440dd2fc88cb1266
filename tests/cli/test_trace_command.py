"""`attnlab trace` through the real entry point."""

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.engine.single import trace_query
from attnlab.lab.explorer import terminal
from attnlab.lab.explorer.program import to_python

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, *args], capture_output=True, text=True, timeout=60)


def test_worked_example_in_words_and_table():
    done = run("trace", "--q", "2,1", "--keys", "-1,2 1,0 0,1", "--values", "2,0 0,2 -1,-1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "q lines up most with B's key (score 1.414), so B takes 58% of the attention; "
        "C gets 28% and A gets 14%. Output o = [-0.004, 0.868]."
    )
    assert lines[2].split() == ["source", "key", "value", "dot", "scaled", "share", "carry", "w·v"]
    assert lines[3].split() == ["A", "[-1,", "2]", "[2,", "0]", "0", "0", "0.14", "[0.28,", "0]"]
    assert lines[4].split() == ["B", "[1,", "0]", "[0,", "2]", "2", "1.414", "0.576", "[0,", "1.152]"]
    assert "output o = [-0.004, 0.868]" in done.stdout
    assert "Share: softmax subtracts the largest score" in done.stdout
    trace = trace_query([2, 1], [[-1, 2], [1, 0], [0, 1]], [[2, 0], [0, 2], [-1, -1]])
    assert done.stdout == "\n".join(terminal.lines(terminal.trace_text(trace))) + "\n"  # all the lab's


def test_no_arguments_uses_the_page_example():
    done = run("trace")
    assert done.returncode == 0
    assert done.stdout == run("trace", "--q", "2,1").stdout
    assert "Output o = [-0.004, 0.868]." in done.stdout


def test_json_is_the_full_precision_trace_with_negative_zero():
    done = run("trace", "--q=-0.0,1", "--labels", "x,y,z", "--allowed", "x,z", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    expected = trace_query([-0.0, 1.0], [[-1, 2], [1, 0], [0, 1]], [[2, 0], [0, 2], [-1, -1]],
                           labels=["x", "y", "z"], allowed=[True, False, True])
    assert data == json.loads(json.dumps(expected.to_dict()))
    assert math.copysign(1.0, data["q"][0]) == -1.0 and '"q": [\n    -0.0' in done.stdout
    assert data["blocked"] == [1]


def test_allowed_as_ones_and_zeros():
    done = run("trace", "--allowed", "1,0,1", "--json")
    assert json.loads(done.stdout)["allowed"] == [True, False, True]


def test_python_flag_prints_the_generated_program():
    done = run("trace", "--scale", "0.5", "--python")
    assert done.returncode == 0
    expected = trace_query([2, 1], [[-1, 2], [1, 0], [0, 1]], [[2, 0], [0, 2], [-1, -1]], scale=0.5)
    assert done.stdout == to_python(expected)


def test_python_m_attnlab_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "attnlab", "trace", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert json.loads(done.stdout)["output"] == [-0.00393691965450399, 0.8679552806894639]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--q", "2,x"], "--q: 'x' is not a number"),
        (["--q", "nan,1"], "q[0] is NaN"),
        (["--q", "2,1,3"], "keys[0] has 2 coordinates; q has 3"),
        (["--keys", "1,2 3"], "keys[1] has 1 coordinate; keys[0] has 2"),
        (["--values", "1,2 3,4"], "values has 2 sources; keys has 3"),
        (["--allowed", "Q"], "--allowed: 'Q' is not a source label"),
        (["--allowed", "0,0,0"], "allowed blocks every source"),
        (["--scale", "abc"], "invalid float value: 'abc'"),
        (["--labels", "A,A,B"], "labels[1] repeats labels[0]"),
        (["--q", "1e308,1e308", "--keys", "1e308,1e308", "--values", "1,1"],
             "q makes the score with keys[0] overflow"),
        (["--nope"], "unrecognized arguments: --nope"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(args, message):
    done = run("trace", *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("attnlab: error: ")
    assert message in done.stderr
    assert "Traceback" not in done.stderr
