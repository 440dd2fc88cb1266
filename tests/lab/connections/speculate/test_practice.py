"""The speculative-decoding lab's challenges, checked on the inputs and on a run's numbers."""

from __future__ import annotations

from hypothesis import given, settings
from specruns import runs

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.speculate import CONTROLS, LAB


def check(cid: str, response=None, measured=None, **given) -> dict:
    return LAB.check_for(cid, read(CONTROLS, given, "inputs"), response, measured or {})


def test_a_draft_never_rejected_is_q_proportional_to_p():
    met = check("never-rejected", p1=2, p2=4, p3=6, p4=8, q1=1, q2=2, q3=3, q4=4)
    assert met["met"] and met["words"]["claims"] == {"met": True, "beta": "1", "over": []}
    miss = check("never-rejected")  # p = (5, 2, 2, 1), q = (2, 4, 1, 3)
    assert not miss["met"] and miss["words"]["claims"]["over"] == ["B", "D"]
    assert "gives more than p to B, D" in miss["words"]["text"]


@settings(max_examples=20, deadline=None)
@given(runs())
def test_the_passes_are_read_from_the_run(case):
    values, measured = case
    passes = measured["speculate"].data["speculative"]["passes"]
    right = LAB.check_for("passes", values, [passes], measured)
    assert right["met"] and right["words"]["claims"]["passes"] == passes
    wrong = LAB.check_for("passes", values, [passes + 1], measured)
    assert not wrong["met"] and "It made fewer than" in wrong["words"]["text"]


def test_without_the_run_the_passes_cannot_be_checked():
    miss = check("passes", [8])
    assert not miss["met"] and miss["words"]["claims"] == {"met": False, "run": False}


def test_why_the_tokens_are_the_same():
    assert check("why-same", "argmax")["met"]
    assert not check("why-same", "same-model")["met"]
