"""The generated block program prints the walk's numbers bit for bit (run in a subprocess)."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from attnlab.lab import numbers as fmt
from attnlab.lab.block.program import to_python
from attnlab.lab.block.walk import walk


def run_program(source: str) -> tuple[dict, list[str]]:
    """Run ``source`` in a fresh interpreter; return its ``name = value`` lines and the rest."""
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=60, check=True
    )
    printed, other = {}, []
    for line in done.stdout.splitlines():
        name, sep, value = line.partition(" = ")
        if sep:
            printed[name] = ast.literal_eval(value)
        elif line:
            other.append(line)
    return printed, other


def edited_weights():
    w = walk().weights
    w["heads"][0]["w_q"][1][0] = -0.3
    w["w_o"][3][2] = 1.0 / 3.0
    w["norm_2"]["gamma"][1] = 0.7
    w["b_1"][6] = -0.1
    return w


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"norm": "post"},
        {"positions": "sinusoidal"},
        {"positions": "rope", "norm": "post"},
        {"heads_on": (True, False)},
        {
            "x": [[0.1, -2.5, 3.0, 1e-3], [7.0, 0.2, -0.3, 0.0], [1.0 / 3.0, 2.0, -1.0, 0.5]],
            "weights": edited_weights(),
        },
    ],
)
def test_program_prints_every_number_bit_for_bit(kwargs):
    w = walk(**kwargs)
    printed, other = run_program(to_python(w))
    assert list(printed) == list(w.tensors)  # the same intermediates, in the walk's order
    for name, value in w.tensors.items():
        assert printed[name] == value, name  # == on floats: bit for bit
    assert other == [f"{label} {fmt.vector(row)}" for label, row in zip("ABC", w.output)]


def test_program_uses_no_numpy():
    source = to_python(walk(positions="rope"))
    tree = ast.parse(source)
    imported = {
        a.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in (n.names if isinstance(n, ast.Import) else [ast.alias(n.module or "")])
    }
    assert imported == {"math"}
    assert "math.erf" in source and "ordered_sum" in source
