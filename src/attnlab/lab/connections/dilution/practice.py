"""The dilution lab's practice: goals checked on the learner's input.

Words: ``lab/data/connections/dilution.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.dilution.answer import current
from attnlab.lab.connections.dilution.needle import Needle
from attnlab.lab.connections.dilution.walk import MAX_KEYS, DilutionWalk

CHALLENGES = ChallengeSet("connections/dilution.json")
GOAL = 0.1  # "below-10": the largest share under 10%


def _below_10(w: DilutionWalk, response) -> dict:
    now = w.largest(w.keys)
    before = w.largest(w.keys - 1) if w.keys > 2 else 1.0
    claims = {"keys": w.keys, "largest": now, "largest_one_fewer": before, "goal": GOAL, "scaling": w.scaling}
    # two shares said side by side read differently when they differ (the goal's 10% included)
    shown, goal = fmt.percent_pair(now, GOAL)
    if now < GOAL <= before:
        shown, was = fmt.percent_pair(now, before)
        return feedback(
            True,
            f"At {w.keys:,} keys the largest share is {shown}; at {w.keys - 1:,} it was {was}.",
            **claims,
        )
    if now >= GOAL:
        later = w.largest_by_n()[w.keys :]  # n = keys + 1 to MAX_KEYS
        claims["reachable"] = bool((later < GOAL).any())
        if claims["reachable"]:
            return feedback(
                False, f"At {w.keys:,} keys the largest share is {shown}: add keys.", **claims
            )
        turn = "turn the √d_k scaling on" if not w.scaled and w.d_k > 1 else "try another seed"
        return feedback(
            False,
            f"At {w.keys:,} keys the largest share is {shown}, and no number of keys up to "
            f"{MAX_KEYS:,} brings it under {goal} with these inputs: {turn}.",
            **claims,
        )
    return feedback(
        False,
        f"At {w.keys:,} keys the largest share is {shown}, under {goal}, but it "
        "already "
        f"was at {w.keys - 1:,}: find the fewest keys.",
        **claims,
    )


def _scaling(w: DilutionWalk, response) -> dict:
    on, off = w.largest(w.keys, True), w.largest(w.keys, False)
    claims = {"largest_on": on, "largest_off": off, "d_k": w.d_k, "choice": response}
    if w.d_k == 1:
        return feedback(
            False, "With d_k = 1 the scaling divides by 1; set d_k larger to see it act.", **claims
        )
    right = "sharper" if off > on else "flatter"
    if response == right:
        shown_off, shown_on = fmt.percent_pair(off, on)
        return feedback(
            True,
            f"Without the scaling the largest share is {shown_off}, with it {shown_on}: "
            "larger scores "
            "make a sharper softmax.",
            **claims,
        )
    return feedback(
        False,
        "Turn the scaling off and on and watch the largest share. What does multiplying every score do?",
        **claims,
    )


CHECKS: dict[str, Callable[[DilutionWalk, object], dict]] = {"below-10": _below_10, "scaling": _scaling}


def _needle(needle: Needle | None, response) -> dict:
    if needle is None:
        words = "Turn the needle on and wait for SmolLM2's traces, then check."
        return feedback(False, words, choice=response)
    s = needle.shares
    right = "keeps" if s[-1] >= s[0] / 2 else "dilutes"
    claims = {"first": s[0], "last": s[-1], "right": right, "choice": response}
    if response == right:
        first, last = fmt.percent_pair(s[0], s[-1])
        return feedback(
            True,
            f"The head's share on the needle is {first} at {needle.tokens[0]} tokens and "
            f"{last} at {needle.tokens[-1]}.",
            **claims,
        )
    return feedback(False, "Read the head's line in the needle picture against the even spread's.", **claims)


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    w, needle, _ = current(values, measured or {})
    if c["id"] == "needle":
        return _needle(needle, response)
    return CHECKS[c["id"]](w, response)
