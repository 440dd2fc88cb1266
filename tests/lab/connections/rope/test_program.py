"""The RoPE lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import assert_printed_data, printed
from synthetic import rope_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.rope import CONTROLS, LAB


@pytest.mark.parametrize(
    "given,m",
    [
        ({}, {}),
        ({"head_dim": "16", "base": "100000", "train": 128, "factor": 7, "offset": 3}, {}),
        ({"own": "on", "factor": 3, "seed": 5}, rope_measured()),
        # a found model's: half pairing, frequencies stretched by Llama 3's scaling (written as given)
        ({"own": "on", "factor": 2, "seed": 1},
         rope_measured(convention="half", scaling="llama3", head_dim=16, context=128)),  # fmt: skip
    ],
)
def test_the_program_prints_the_answers_numbers(given, m):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values, m)["data"]
    assert ("own" in data) == bool(m)
    out = printed(LAB.program(values, m))
    assert_printed_data(out, data, rel=1e-9)  # angles of thousands of radians round at ~1e-12
