"""The dilution lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import assert_printed_data, printed
from synthetic import needle_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.dilution import CONTROLS, LAB


@pytest.mark.parametrize(
    "given,m",
    [
        ({}, {}),
        ({"keys": 3000, "d_k": 3, "scaling": "off", "seed": 9}, {}),
        ({"needle": "on"}, needle_measured(4)),
    ],
)
def test_the_program_prints_the_answers_numbers(given, m):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values, m)["data"]
    assert ("needle" in data) == bool(m)
    out = printed(LAB.program(values, m))
    assert_printed_data(out, data)
