"""The state-space lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import printed, same_numbers

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.ssm import CONTROLS, LAB


@pytest.mark.parametrize("given", [{}, {"n": 5, "step": 2, "d": 3, "seed": 11}])
def test_the_program_prints_the_answers_numbers(given):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values)["data"]
    out = printed(LAB.program(values))
    assert list(out) == list(data)
    for name, value in data.items():
        if name.endswith("difference"):
            assert out[name] <= 1e-12 and value <= 1e-12
        else:
            assert same_numbers(out[name], value), name
