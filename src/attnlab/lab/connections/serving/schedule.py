"""Continuous batching's schedule, without a model: which requests each step decodes.

All requests arrive at once. A step first lets waiting requests join, in order,
while fewer than ``batch`` run (each join is the request's prompt pass, which
gives its first token; a request whose first token already ends it leaves at
once), then decodes every running request one token; a request that reaches its
length leaves after the step, and its place is free for the next step. One
request at a time is the same with ``batch`` 1. Given each request's length (the
tokens it made: the greedy run decides it, by reaching the cap or the end of its
turn), the schedule follows from the rule alone: :func:`schedule` gives it,
and a run's recorded steps are held to it (tests).
"""

from __future__ import annotations

from collections import deque


def schedule(lengths: list[int], batch: int) -> list[tuple[str, list[int]]]:
    """The steps, in order: ``("prefill", [r])`` for request r's prompt pass, ``("decode", [r, ...])``
    for a step of the running requests (in the order they joined)."""
    made = [0] * len(lengths)
    waiting, running = deque(range(len(lengths))), []
    steps: list[tuple[str, list[int]]] = []
    while waiting or running:
        while waiting and len(running) < batch:
            r = waiting.popleft()
            steps.append(("prefill", [r]))
            made[r] = 1
            if made[r] < lengths[r]:
                running.append(r)
        if not running:
            continue
        steps.append(("decode", list(running)))
        for r in running:
            made[r] += 1
        running = [r for r in running if made[r] < lengths[r]]
    return steps
