"""The embeddings lab's practice: goals checked on the learner's input and vectors.

Words: ``lab/data/connections/embeddings.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.embeddings.answer import current
from attnlab.lab.connections.embeddings.walk import TAU_MAX, TAU_STEP, EmbeddingsWalk
from attnlab.lab.connections.embeddings.words import tau_text

CHALLENGES = ChallengeSet("connections/embeddings.json")
GOAL = 0.1  # "loss-below": the loss under 0.1 nats


def _loss_below(w: EmbeddingsWalk, response) -> dict:
    now = w.loss()
    hotter = round(w.tau + TAU_STEP, 10)
    after = w.loss(hotter) if hotter <= TAU_MAX else None
    claims = {"tau": w.tau, "loss": now, "hotter": hotter, "hotter_loss": after, "goal": GOAL}
    t = tau_text(w.tau)
    if now >= GOAL:
        right = sum(w.correct())
        if right < w.n:
            return feedback(
                False,
                f"At τ = {t} the loss is {fmt.significant(now)}; {w.n - right} of your sentences are closer "
                "to another match than to their own, so no τ brings it under 0.1: change those pairs.",
                correct=right,
                **claims,
            )
        return feedback(
            False, f"At τ = {t} the loss is {fmt.significant(now)}: sharpen the softmax.", **claims
        )
    if after is not None and after < GOAL:
        return feedback(
            False,
            f"At τ = {t} the loss is {fmt.significant(now)}, and still {fmt.significant(after)} a step "
            "hotter: find the highest such τ.",
            **claims,
        )
    then = f"; at τ = {tau_text(hotter)} it would be {fmt.significant(after)}" if after is not None else ""
    return feedback(True, f"At τ = {t} the loss is {fmt.significant(now)}{then}.", **claims)


def _sharper(w: EmbeddingsWalk | None, response) -> dict:
    claims = {"tau": 0.05, "attention_temperature": 384**0.5, "choice": response}
    if response == "flatter":
        return feedback(
            True,
            "√384 ≈ 19.6 is about 400 times 0.05: dividing by it leaves the cosines, all between −1 and 1, "
            "within about 0.1 of each other, and the softmax nearly even.",
            **claims,
        )
    return feedback(False, "Compare the two divisors: which one makes the scores larger?", **claims)


CHECKS: dict[str, Callable[[EmbeddingsWalk, object], dict]] = {"loss-below": _loss_below, "sharper": _sharper}


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    w, _ = current(values, measured or {})
    if w is None and c["id"] != "sharper":
        return feedback(False, "MiniLM's embeddings are not in yet: wait for them, then check.", waiting=True)
    return CHECKS[c["id"]](w, response)
