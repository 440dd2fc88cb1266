"""Speculative decoding's greedy rule, as the model's run applies it: a prompt-lookup draft proposes,
the target's own argmax decides (the lab's :mod:`attnlab.lab.connections.speculate.draft` explains it
and replays it on a recorded run).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence


def propose(context: Sequence[int], ngram: int, draft: int) -> list[int]:
    """The tokens after the latest earlier occurrence of ``context``'s last ``ngram`` tokens (at most
    ``draft``); ``[]`` when they do not occur earlier with a token after them."""
    n = len(context)
    if draft < 1 or n <= ngram:
        return []
    tail = list(context[n - ngram :])
    for start in range(n - ngram - 1, -1, -1):  # latest first; the match ends before the tail does
        if list(context[start : start + ngram]) == tail:
            return list(context[start + ngram : start + ngram + draft])
    return []


def accepted(proposed: Sequence[int], argmax: Sequence[int], stop_ids: Collection[int]) -> int:
    """How many drafts the target keeps: while d_i equals row i's argmax, up to one that ends the text."""
    kept = 0
    for d, a in zip(proposed, argmax):
        if d != a:
            break
        kept += 1
        if d in stop_ids:
            break
    return kept
