"""The serving lab's program (run in a subprocess): both ways' steps and rates from the recorded run."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from labtools import printed, same_numbers
from serveruns import runs

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.serving import CONTROLS, LAB


def test_without_a_run_the_program_says_so():
    values = read(CONTROLS, {}, "inputs")
    assert printed(LAB.program_for(values, {})) == {}


@settings(max_examples=5, deadline=None)
@given(runs())
def test_the_program_gives_the_runs_numbers(case):
    values, measured = case
    out = printed(LAB.program_for(values, measured))
    run = LAB.answer_for(values, measured)["data"]["run"]
    assert out["same"] == run["same"]
    assert out["one_steps"] == run["steps"]["one"] and out["batched_steps"] == run["steps"]["batched"]
    assert same_numbers(out["throughput"], run["throughput"]) and out["ratio"] == pytest.approx(run["ratio"])
    mean = {w: sum(f) / len(f) for w, f in run["first_s"].items()}
    assert same_numbers(out["mean_first"], mean)
