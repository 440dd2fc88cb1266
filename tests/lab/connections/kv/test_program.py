"""The KV-cache lab's program prints the lab's numbers (run in a subprocess)."""

from __future__ import annotations

import pytest
from labtools import printed

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.kv import CONTROLS, LAB


@pytest.mark.parametrize("given", [{}, {"tokens": 7, "precision": "4", "requests": 8, "seed": 42}])
def test_the_program_prints_the_answers_numbers(given):
    values = read(CONTROLS, given, "inputs")
    assert printed(LAB.program(values)) == LAB.answer(values)["data"]  # integers: exactly
