"""The speculative-decoding lab's practice: goals checked on the learner's input and SmolLM2's run.

Words: ``lab/data/connections/speculate.json``.
"""

from __future__ import annotations

from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.speculate.answer import recorded
from attnlab.lab.connections.speculate.toy import TOKENS, fraction_text
from attnlab.lab.connections.speculate.walk import toy

CHALLENGES = ChallengeSet("connections/speculate.json")
NOT_IN = "SmolLM2's run is not in yet: wait until the words above show its numbers, then check again."


def _never_rejected(values: dict, measured: dict, response) -> dict:
    t = toy(values)
    over = [c for c, a in zip(TOKENS, t.accept) if a is not None and a < 1]
    claims = {"beta": fraction_text(t.beta), "over": over}
    if not over:
        return feedback(True, "Every draft is kept: q is p, so min(1, p/q) is 1 for every token.", **claims)
    which = ", ".join(over)
    return feedback(
        False,
        f"A draft is kept with probability {fraction_text(t.beta)}: q gives more than p to {which}, so "
        "drafts of them are sometimes rejected.",
        **claims,
    )


def _passes(values: dict, measured: dict, response) -> dict:
    r, _ = recorded(values, measured)
    if r is None:
        return feedback(False, NOT_IN, run=False)
    guess = response[0]
    claims = {"run": True, "passes": r.passes_spec, "guess": guess}
    if guess == r.passes_spec:
        return feedback(
            True, f"{r.passes_spec} passes: the prompt's and {r.passes_spec - 1} verifications.", **claims
        )
    way = "fewer" if guess > r.passes_spec else "more"
    return feedback(False, f"It made {way} than {guess:g}: count the rows of the steps picture.", **claims)


def _why_same(values: dict, measured: dict, response) -> dict:
    claims = {"choice": response}
    if response == "argmax":
        return feedback(
            True,
            "Each kept draft is the target's greedy token after exactly the tokens before it; a rejected one "
            "is replaced by that token.",
            **claims,
        )
    return feedback(
        False, "The draft here is no model at all: look at what decides whether one is kept.", **claims
    )


CHECKS = {"never-rejected": _never_rejected, "passes": _passes, "why-same": _why_same}


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](values, measured or {}, response)
