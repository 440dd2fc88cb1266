"""The embeddings lab's program prints the lab's numbers (run in a subprocess): on seeded vectors and on
recorded float32 ones written into it."""

from __future__ import annotations

import pytest
from labtools import assert_printed_data, printed
from synthetic import embeddings_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.embeddings import CONTROLS, LAB


@pytest.mark.parametrize(
    "given,m",
    [
        ({}, {}),
        ({"sentences": "a\nb", "matches": "c\nd", "tau": 0.5, "d": 64, "noise": 1.5, "seed": 11}, {}),
        ({"source": "minilm", "tau": 0.07}, embeddings_measured(5, 4)),
    ],
)
def test_the_program_prints_the_answers_numbers(given, m):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values, m)["data"]
    out = printed(LAB.program(values, m))
    assert_printed_data(out, data)
