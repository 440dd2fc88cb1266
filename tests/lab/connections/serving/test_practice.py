"""The serving lab's challenges, checked on the inputs and on a run's numbers."""

from __future__ import annotations

from hypothesis import given, settings
from serveruns import runs

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.serving import CONTROLS, LAB
from attnlab.lab.connections.serving.walk import LETTERS


def check(cid: str, response=None, measured=None, **given) -> dict:
    return LAB.check_for(cid, read(CONTROLS, given, "inputs"), response, measured or {})


def test_a_batch_of_one():
    assert check("batch-one", batch=1)["met"]
    miss = check("batch-one", batch=3)
    assert not miss["met"] and miss["words"]["claims"] == {"met": False, "batch": 3}


@settings(max_examples=20, deadline=None)
@given(runs())
def test_the_longest_wait_and_the_throughput_are_read_from_the_run(case):
    values, measured = case
    first = measured["serving"].data["one"]["first_s"]
    right = LAB.check_for("longest-wait", values, "last", measured)
    waited = first.index(max(first))
    assert right["met"] and right["words"]["claims"]["request"] == LETTERS[waited]
    assert not LAB.check_for("longest-wait", values, "first", measured)["met"]
    ratio = LAB.answer_for(values, measured)["data"]["run"]["ratio"]
    assert LAB.check_for("throughput", values, [round(ratio, 1)], measured)["met"]
    wrong = LAB.check_for("throughput", values, [ratio + 0.2], measured)
    assert not wrong["met"] and "It is lower than" in wrong["words"]["text"]


def test_without_the_run_the_throughput_cannot_be_checked():
    miss = check("throughput", [1.5])
    assert not miss["met"] and miss["words"]["claims"] == {"met": False, "run": False}
    assert check("longest-wait", "last")["met"]  # the rule needs no run
