"""The flash lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import printed, same_numbers

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.flash import CONTROLS, LAB


@pytest.mark.parametrize(
    "given",
    [{}, {"n": 17, "tile": 5, "row": 12, "window": 3, "seed": 7}, {"n": 4, "tile": 1, "row": 3, "keys": 2}],
)
def test_the_program_prints_the_answers_numbers(given):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values)["data"]
    out = printed(LAB.program(values))
    assert list(out) == list(data)  # the same numbers, in the same order
    for name, value in data.items():
        if name == "difference":  # rounding itself: both within the lab's bound, not the same digits
            assert out[name] <= 1e-15 and value <= 1e-15
        else:
            assert same_numbers(out[name], value), name
