"""The RoPE lab's practice: goals checked on the learner's input.

Words: ``lab/data/connections/rope.json``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.rope.answer import current
from attnlab.lab.connections.rope.smollm2 import OwnRope
from attnlab.lab.connections.rope.walk import SHIFT, RopeWalk
from attnlab.lab.connections.rope.words import SAME

CHALLENGES = ChallengeSet("connections/rope.json")


def _fit(w: RopeWalk, response) -> dict:
    last = w.train - 1
    fits = w.offset / w.factor <= last
    smaller = w.factor == 1 or w.offset / (w.factor - 1) > last
    claims = {"offset": w.offset, "factor": w.factor, "scaled_offset": w.offset / w.factor, "last": last}
    if w.offset <= last:
        return feedback(
            False,
            f"Offset {w.offset:,} is inside the training length already; pick a larger offset.",
            **claims,
        )
    if fits and smaller:
        return feedback(
            True,
            f"s = {w.factor} rotates offset {w.offset:,} as {fmt.rounded(w.offset / w.factor)}, inside the "
            f"training length (at most {last:,}); s = {w.factor - 1} would leave it outside.",
            **claims,
        )
    if not fits:
        return feedback(
            False,
            f"With s = {w.factor} offset {w.offset:,} is rotated as {fmt.rounded(w.offset / w.factor)}, "
            "still past "
            f"{last:,}: divide by more.",
            **claims,
        )
    return feedback(False, f"s = {w.factor} fits, but a smaller s fits too: find the smallest.", **claims)


def _depends(w: RopeWalk, response) -> dict:
    a, b = w.score(w.offset, 0), w.score(SHIFT + w.offset, SHIFT)
    claims = {"score": a, "shifted": b, "same": abs(a - b) <= SAME, "choice": response}
    if response == "offset":
        return feedback(
            True,
            f"At offset {w.offset:,} the score is {fmt.rounded(a)} with k at 0 and {fmt.rounded(b)} with k "
            f"at {SHIFT}: "
            "rotating both by the same angle leaves their dot product as it was.",
            **claims,
        )
    return feedback(
        False, "Compare the score with k at 0 and with k at 100, the same offset apart.", **claims
    )


CHECKS: dict[str, Callable[[RopeWalk, object], dict]] = {"fit": _fit, "depends": _depends}


def _slowest(own: OwnRope | None, response) -> dict:
    if own is None:
        words = "Turn on the model's own RoPE and read its pairs, then check."
        return feedback(False, words, choice=response)
    slowest = own.wavelengths[-1]
    options = {"8k": 8192.0, "100k": 100_000.0, "440k": 440_000.0}
    right = min(options, key=lambda o: abs(math.log(options[o] / slowest)))
    claims = {"slowest": slowest, "right": right, "choice": response}
    if response == right:
        how = ("2π ÷ its last pair's stretched frequency" if own.facts.get("scaling")
               else f"2π × {own.facts['base']:,.0f}^({own.d - 2}/{own.d})")  # fmt: skip
        return feedback(
            True,
            f"{how} = {slowest:,.0f} positions: "
            f"{'far longer' if slowest > own.context else 'not longer'} than its {own.context:,}-position "
            "context.",
            **claims,
        )
    return feedback(False, f"Read the last row of {own.called}'s pairs: positions per turn.", **claims)


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    w, own, _ = current(values, measured or {})
    if c["id"] == "slowest":
        return _slowest(own, response)
    return CHECKS[c["id"]](w, response)
