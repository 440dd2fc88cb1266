"""The live challenge: give the second source (B in the worked example) more than 90%."""

from __future__ import annotations

from attnlab.engine.single import trace_query
from attnlab.lab.explorer.challenge import check
from attnlab.lab.explorer.examples import WORKED


def worked(q, allowed=None, labels=None):
    return trace_query(q, WORKED.keys, WORKED.values, labels=labels, allowed=allowed)


def test_worked_example_is_not_met():
    state = check(worked((2.0, 1.0)))
    assert state.met is False
    assert state.available is True
    assert state.share == 0.575975345215362
    assert state.status.startswith("Not yet: B takes 58%")


def test_far_along_b_is_met():
    state = check(worked((4.0, 0.0)))
    assert state.met is True
    assert state.share > 0.9
    assert state.status == "Done: B takes 94% of the attention, more than 90%."


def test_threshold_is_strict_and_uses_the_float():
    t = worked((4.0, 0.0))
    share = t.weights[1]
    assert check(t, threshold=share).met is False
    assert check(t, threshold=share - 1e-15).met is True


def test_blocked_target_is_not_available():
    blocked = check(worked((4.0, 0.0), allowed=[True, False, True]))
    assert (blocked.available, blocked.met) == (False, False)
    assert blocked.status == "B is blocked by the mask here, so it cannot receive attention."


def test_renamed_sources_keep_the_challenge_by_role():
    # an own example with sources X/Y/Z: the second source is Y, not "no source labelled B"
    renamed = check(worked((4.0, 0.0), labels=["X", "Y", "Z"]))
    assert (renamed.available, renamed.met, renamed.target) == (True, True, "Y")
    assert renamed.goal == "Give source Y more than 90% of the attention."
    assert renamed.status == "Done: Y takes 94% of the attention, more than 90%."
    assert renamed.share == check(worked((4.0, 0.0))).share


def test_a_single_source_cannot_try_it():
    one = check(trace_query((1.0, 0.0), [(1.0, 0.0)], [(2.0, 3.0)], labels=["Solo"]))
    assert (one.available, one.met, one.share) == (False, False, None)
    assert one.status == "This example has 1 source; add another to try this challenge."
