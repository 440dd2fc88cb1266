"""The serving lab's practice: goals checked on the learner's input and SmolLM2's run.

Words: ``lab/data/connections/serving.json``.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.serving.answer import recorded
from attnlab.lab.connections.serving.walk import LETTERS

CHALLENGES = ChallengeSet("connections/serving.json")
NOT_IN = "SmolLM2's run is not in yet: wait until the words above show its numbers, then check again."
TOLERANCE = 0.05  # an answer to one decimal


def _batch_one(values: dict, measured: dict, response) -> dict:
    b = values["batch"]
    if b == 1:
        return feedback(
            True, "With a batch of 1 a request joins only when the one before it has left.", batch=b
        )
    return feedback(False, f"With a batch of {b}, up to {b} requests decode in one step: fewer.", batch=b)


def _longest_wait(values: dict, measured: dict, response) -> dict:
    s, _ = recorded(values, measured)
    claims: dict = {"choice": response, "run": s is not None}
    if s is not None:
        r = s.longest_wait("one")
        claims |= {"request": LETTERS[r], "seconds": s.first("one")[r]}
        here = f" Here request {LETTERS[r]} waited {fmt.rounded(s.first('one')[r], 2)} s."
    else:
        here = ""
    if response == "last":
        return feedback(
            True, f"The last one starts only when every request before it has finished.{here}", **claims
        )
    return feedback(False, "Everyone arrives at once: who starts last?", **claims)


def _throughput(values: dict, measured: dict, response) -> dict:
    s, _ = recorded(values, measured)
    if s is None:
        return feedback(False, NOT_IN, run=False)
    guess = response[0]
    claims = {"run": True, "ratio": s.ratio, "guess": guess}
    if abs(guess - s.ratio) <= TOLERANCE:
        return feedback(True, f"{fmt.rounded(s.ratio, 2)} times: the same tokens in less time.", **claims)
    way = "lower" if guess > s.ratio else "higher"
    return feedback(False, f"It is {way} than {guess:g}: divide the two tokens-a-second figures.", **claims)


CHECKS = {"batch-one": _batch_one, "longest-wait": _longest_wait, "throughput": _throughput}


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](values, measured or {}, response)
