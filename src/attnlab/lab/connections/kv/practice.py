"""The KV-cache lab's practice: goals checked on the learner's input.

Words: ``lab/data/connections/kv.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.kv.answer import current
from attnlab.lab.connections.kv.walk import BLOCK, KVWalk, per_token

CHALLENGES = ChallengeSet("connections/kv.json")


def _mha_ratio(w: KVWalk, response) -> dict:
    if w.shapes is None:
        return feedback(
            False, "The model's shapes are not in: this runs where the lab is served.", choice=response
        )
    s = w.shapes
    b = per_token(s, w.bytes_each)
    ratio = b["mha"] // b["gqa"]
    claims = {"mha": b["mha"], "gqa": b["gqa"], "ratio": ratio, "choice": response}
    if response == str(ratio):
        return feedback(
            True,
            f"{b['mha']:,} bytes per token against {b['gqa']:,}: {ratio} times, one key/value head per "
            "query head "
            f"instead of one per group of {s.query_heads // s.kv_heads}.",
            **claims,
        )
    return feedback(False, "Count the key/value heads each layer caches, with and without sharing.", **claims)


def _waste_bound(w: KVWalk, response) -> dict:
    claims = {"bound": BLOCK - 1, "here": max(w.paged_waste()), "choice": response}
    if response == str(BLOCK - 1):
        return feedback(
            True,
            f"Only a request's last block can be partly filled, and it holds at least one position: at most "
            f"{BLOCK - 1} unused. Here the most is {max(w.paged_waste())}.",
            **claims,
        )
    return feedback(
        False, "Which of a request's blocks can be partly empty, and how empty can it be?", **claims
    )


CHECKS: dict[str, Callable[[KVWalk, object], dict]] = {"mha-ratio": _mha_ratio, "waste-bound": _waste_bound}


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    w, _ = current(values, measured or {})
    return CHECKS[c["id"]](w, response)
