"""The MoE lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import assert_printed_data, printed

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.moe import CONTROLS, LAB


@pytest.mark.parametrize(
    "given", [{}, {"tokens": 5, "experts": 3, "k": 3, "token": 4, "scale": 2.5, "seed": 3}]
)
def test_the_program_prints_the_answers_numbers(given):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values)["data"]
    out = printed(LAB.program(values))
    assert_printed_data(out, data)
