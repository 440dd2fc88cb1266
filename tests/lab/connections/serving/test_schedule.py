"""Continuous batching's schedule (lab/connections/serving/schedule.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab.connections.serving.schedule import schedule


def test_a_worked_schedule():
    assert schedule([3, 1, 2], 2) == [
        ("prefill", [0]),
        ("prefill", [1]),  # its first token ends it: it leaves at once
        ("prefill", [2]),
        ("decode", [0, 2]),
        ("decode", [0]),
    ]


def test_a_batch_of_one_is_one_at_a_time():
    assert schedule([2, 3], 1) == [("prefill", [0]), ("decode", [0]), ("prefill", [1]), ("decode", [1]),
                                   ("decode", [1])]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=8), st.integers(1, 8))
def test_every_request_gets_its_tokens_and_the_batch_is_never_exceeded(lengths, batch):
    steps = schedule(lengths, batch)
    made = [0] * len(lengths)
    for kind, requests in steps:
        assert len(requests) <= (1 if kind == "prefill" else batch)
        for r in requests:
            made[r] += 1
    assert made == lengths
    joined = [rs[0] for kind, rs in steps if kind == "prefill"]
    assert joined == list(range(len(lengths)))  # in arrival order
