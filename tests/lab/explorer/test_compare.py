"""Comparison with the reference q = [2, 1], number by number within 1e-12."""

import pytest

from attnlab.engine.single import trace_query
from attnlab.lab.explorer.compare import compare, reference_query

KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]


def test_reference_itself_is_all_same():
    c = compare(trace_query([2, 1], KEYS, VALUES))
    assert c.summary["text"] == "Scores same; shares same; output same."
    assert not any(c.scores + c.weights + c.output + c.dots) and not c.m and not c.z


def test_moving_q_changes_everything():
    c = compare(trace_query([-1, 3], KEYS, VALUES))
    assert c.summary["text"] == "Scores changed; shares changed; output changed."
    assert c.dots == (True, True, True)
    assert c.reference.q == (2.0, 1.0)


def test_shift_along_equal_direction_changes_scores_not_shares():
    # Keys whose dots all move by the same amount: shares and output stay the same.
    keys = [[1, 1], [2, 1], [0, 1]]
    c = compare(trace_query([2, 1.5], keys, VALUES))
    assert c.summary["text"] == "Scores changed; shares same; output same."
    assert c.weights == (False, False, False)


def test_within_tolerance_counts_as_same():
    c = compare(trace_query([2 + 1e-14, 1], KEYS, VALUES))
    assert c.summary["text"] == "Scores same; shares same; output same."


def test_reference_query_fits_dk():
    assert reference_query(1) == (2.0,)
    assert reference_query(4) == (2.0, 1.0, 0.0, 0.0)


def test_mismatched_reference_is_refused():
    with pytest.raises(ValueError, match="reference has 2 sources"):
        compare(trace_query([2, 1], KEYS, VALUES), trace_query([2, 1], KEYS[:2], VALUES[:2]))
