"""The sampling lab's program prints the lab's numbers (run in a subprocess): on seeded logits and on
recorded ones written into it."""

from __future__ import annotations

import numpy as np
import pytest
from labtools import assert_printed_data, printed
from synthetic import logits_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.sampling import CONTROLS, LAB

ROW = (np.random.default_rng(3).standard_normal(300) * 3).astype(np.float32)


@pytest.mark.parametrize(
    "given,m",
    [
        ({}, {}),
        ({"k": 50, "temperature": 0.05, "seed": 7}, {}),
        ({"source": "smollm2", "k": 12, "temperature": 2.5}, logits_measured(ROW)),
    ],
)
def test_the_program_prints_the_answers_numbers(given, m):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values, m)["data"]
    out = printed(LAB.program(values, m))
    assert_printed_data(out, data)


def test_logits_not_in_yet_print_nothing():
    values = read(CONTROLS, {"source": "smollm2"}, "inputs")
    assert LAB.answer(values, {})["data"] == {} == printed(LAB.program(values, {}))
