"""The cross-attention lab's program prints the lab's numbers (run in a subprocess): the patches' rows
bit for bit (the explorer's arithmetic), shared attention within 1e-12."""

from __future__ import annotations

import pytest
from labtools import printed, same_numbers

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.cross import CONTROLS, LAB


@pytest.mark.parametrize(
    "given", [{}, {"grid": 3, "prompt": "grass-sky", "row": 2, "col": 0, "sharpness": 0.5}]
)
def test_the_program_prints_the_answers_numbers(given):
    values = read(CONTROLS, given, "inputs")
    data = LAB.answer(values)["data"]
    out = printed(LAB.program(values))
    assert list(out) == list(data)
    assert out["cross_weights"] == data["cross_weights"] and out["cross_outputs"] == data["cross_outputs"]
    for name in ("shared_weights", "shared_text_share"):
        assert same_numbers(out[name], data[name]), name
