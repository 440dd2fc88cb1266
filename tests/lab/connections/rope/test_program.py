"""The RoPE lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import printed, same_numbers

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.rope import CONTROLS, LAB


@pytest.mark.parametrize(
    "given", [{}, {"head_dim": "16", "base": "100000", "train": 128, "factor": 7, "offset": 3}]
)
def test_the_program_prints_the_answers_numbers(given):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values)["data"]
    out = printed(LAB.program(values))
    assert list(out) == list(data)
    for name, value in data.items():
        assert same_numbers(out[name], value, rel=1e-9), (
            name
        )  # angles of thousands of radians round at ~1e-12
