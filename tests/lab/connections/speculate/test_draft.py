"""Speculative decoding's greedy rule (lab/connections/speculate/draft.py): prompt lookup and verifying."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab.connections.speculate.draft import accepted, propose, replay


def test_propose_continues_the_latest_earlier_occurrence():
    context = [7, 1, 2, 3, 4, 1, 2, 9, 1, 2]
    assert propose(context, 2, 3) == [9, 1, 2]  # [1, 2] last occurred before at 5, followed by 9, 1, 2
    assert propose(context, 1, 2) == [9, 1]
    assert propose(context, 3, 4) == []  # [9, 1, 2] never occurred before
    assert propose([5, 5, 5], 2, 4) == [5]  # overlapping: the match ends before the tail does
    assert propose([1, 2], 2, 4) == [] and propose([1, 1], 1, 0) == []


def test_accepted_stops_at_the_first_disagreement_and_after_the_end_of_the_text():
    assert accepted([4, 5, 6], [4, 5, 7, 8], set()) == 2
    assert accepted([4, 0, 6], [4, 0, 6, 1], {0}) == 2  # 0 ends the text: nothing after it is kept
    assert accepted([], [3], set()) == 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=10),
    st.lists(st.integers(1, 4), min_size=1, max_size=30),
    st.integers(1, 4),
    st.integers(1, 8),
)
def test_replay_makes_the_targets_tokens_in_at_most_as_many_passes(prompt, target, ngram, draft):
    steps = replay(prompt, target, ngram=ngram, draft=draft, max_new_tokens=len(target), stop_ids=set())
    assert [t for s in steps for t in s.tokens] == target
    assert sum(s.passes for s in steps) <= len(target) - 1
    assert all(s.accepted <= len(s.proposed) <= draft for s in steps)
