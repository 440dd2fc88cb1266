"""The speculative-decoding lab's program (run in a subprocess): the toy rule's fractions, and a run's
drafts and accepted tokens from its recorded tokens alone."""

from __future__ import annotations

from hypothesis import given, settings
from labtools import printed
from specruns import runs

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.speculate import CONTROLS, LAB

TOY = ("p", "q", "kept", "beta", "residual", "output", "exact")


def test_without_a_run_the_program_prints_the_toy_rule():
    values = read(CONTROLS, {"q1": 5, "q2": 2, "q3": 2, "q4": 1}, "inputs")
    out = printed(LAB.program_for(values, {}))
    data = LAB.answer_for(values, {})["data"]["toy"]
    assert out == {k: data[k] for k in TOY} and out["residual"] is None and out["exact"] is True


@settings(max_examples=5, deadline=None)
@given(runs())
def test_the_program_gives_the_runs_steps_from_its_tokens(case):
    values, measured = case
    out = printed(LAB.program_for(values, measured))
    data = LAB.answer_for(values, measured)["data"]
    assert {k: out[k] for k in TOY} == {k: data["toy"][k] for k in TOY}
    verified = [s for s in data["run"]["steps"] if s["passes"]]
    assert out["proposed"] == [s["proposed"] for s in verified]
    assert out["accepted"] == out["accepted_from_rows"] == [s["accepted"] for s in verified]
    assert out["passes"] == data["run"]["passes"]["speculative"] and out["same_as_plain"] is True
