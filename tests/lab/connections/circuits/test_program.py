"""The circuits lab's program prints the lab's numbers (run in a subprocess): the probe rebuilt from
its seed, the heads chosen and the induction scores recomputed from the recorded rows."""

from __future__ import annotations

import pytest
from copykit import measured, run_data
from labtools import assert_printed_data, printed

from attnlab.lab.connections.circuits import CONTROLS, LAB
from attnlab.lab.connections.controls import read


@pytest.mark.parametrize(
    "given,m",
    [
        ({"seed": 42, "words": 7, "repeats": 3}, {}),
        ({"map": "breadth"}, measured(run_data(2, tested=3))),
        ({"map": "duplicate", "tested": 1}, measured(run_data(9, tested=1, layers=2))),
    ],
)
def test_the_program_prints_the_answers_numbers(given, m):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values, m)["data"]
    out = printed(LAB.program(values, m))
    assert_printed_data(out, data)
