"""The state-space lab's practice: goals checked on the learner's input.

Words: ``lab/data/connections/ssm.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.ssm.walk import EQUAL, D, SSMWalk, walk

CHALLENGES = ChallengeSet("connections/ssm.json")


def _state_size(w: SSMWalk, response) -> dict:
    guess, size = response[0], D * D + D
    claims = {"guess": guess, "state_numbers": size}
    if guess == size:
        return feedback(
            True, f"S holds {D} × {D} = {D * D} numbers and z another {D}: {size}, for any n.", **claims
        )
    direction = "too high" if guess > size else "too low"
    return feedback(
        False,
        f"Your count is {direction}. The state is S (one number per pair of a key coordinate and a value "
        "coordinate) and z (one per key coordinate); does n enter?",
        direction=direction,
        **claims,
    )


def _copy_all(w: SSMWalk, response) -> dict:
    L = w.n
    right, err = w.copy.linear_right[L - 1], w.copy.linear_error[L - 1]
    met = right == L and err <= EQUAL
    claims = {"d": w.d, "n": L, "linear_right": right, "error": err, "bound": EQUAL}
    if met:
        return feedback(
            True,
            f"With keys of d = {w.d} numbers, linear attention gives all {L} tokens back exactly: at most d "
            "keys can be orthogonal, and these are.",
            **claims,
        )
    return feedback(
        False,
        f"With keys of d = {w.d} and n = {L} tokens, linear attention gets {right} of {L} right and is not "
        "exact. How many keys of d numbers can be orthogonal to one another?",
        **claims,
    )


CHECKS: dict[str, Callable[[SSMWalk, object], dict]] = {"state-size": _state_size, "copy-all": _copy_all}


def check(challenge_id: object, values: dict, response: object = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](walk(**values), response)
