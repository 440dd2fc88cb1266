"""The KV-cache lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import printed
from synthetic import kv_run, shapes_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.kv import CONTROLS, LAB
from attnlab.lab.connections.live import Measured
from attnlab.models.labs.facts import shapes

RUN = {"kv": Measured("done", data=kv_run(5, 6, shapes("smollm2"), itemsize=4))}


@pytest.mark.parametrize(
    "given,m",
    [
        ({}, {}),
        ({}, "shapes"),
        ({"tokens": 7, "precision": "4", "requests": 8, "seed": 42}, "shapes"),
        ({"live": "on", "prompt": "The capital of France is", "new": 6}, "live"),
    ],
)
def test_the_program_prints_the_answers_numbers(given, m):
    values = read(CONTROLS, given, "inputs")
    measured = {} if m == {} else shapes_measured() | (RUN if m == "live" else {})
    data = LAB.answer(values, measured)["data"]
    assert ("live" in data) == (m == "live") and ("sizes" in data) == (m != {})
    assert printed(LAB.program(values, measured)) == data  # integers: exactly
