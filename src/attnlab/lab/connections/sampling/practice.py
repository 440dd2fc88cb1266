"""The sampling lab's practice: goals checked on the learner's input and logits.

Words: ``lab/data/connections/sampling.json``.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.sampling.answer import recorded
from attnlab.lab.connections.sampling.walk import T_MAX, T_STEP, SamplingWalk, walk
from attnlab.lab.connections.sampling.words import temperature_text

CHALLENGES = ChallengeSet("connections/sampling.json")
GOAL = 0.9  # "top-90": the top candidate holds at least 90%


def _top_90(w: SamplingWalk, response) -> dict:
    now = w.top_share()
    hotter = round(w.temperature + T_STEP, 10)
    after = w.top_share(hotter) if hotter <= T_MAX else None
    claims = {"temperature": w.temperature, "top_share": now, "hotter": hotter, "hotter_share": after}
    t = temperature_text(w.temperature)
    p = w.p()
    shown = fmt.percents(p)[int(p.argmax())]  # the top candidate's share as its bar shows it
    claims["top_shown"] = shown
    if now < GOAL:
        words = f"At T = {t} the top candidate holds {shown}: cool it down."
        return feedback(False, words, goal=GOAL, **claims)
    if after is not None and after >= GOAL:
        return feedback(
            False,
            f"At T = {t} the top candidate holds {shown}, and still {fmt.percent(after)} a step "
            "hotter: find the highest such temperature.",
            goal=GOAL,
            **claims,
        )
    then = (
        f"; a step hotter, at T = {temperature_text(hotter)}, it would hold {fmt.percent(after)}"
        if after is not None
        else ", even at the hottest setting"
    )
    words = f"At T = {t} the top candidate holds {shown}{then}."
    return feedback(True, words, goal=GOAL, **claims)


def _head(w: SamplingWalk | None, response) -> dict:
    claims = {"d_k": 64, "temperature": 8, "choice": response}
    if response == "8":
        return feedback(True, "√64 = 8: attention's scores are the dot products at temperature 8.", **claims)
    return feedback(False, "Attention divides each dot product by √d_k; dividing by T is the temperature.",
                    **claims)  # fmt: skip


CHECKS: dict[str, Callable[[SamplingWalk, object], dict]] = {"top-90": _top_90, "head": _head}


def check(challenge_id: object, values: dict, response: object = None, measured: dict | None = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    w = walk(values, recorded(values, measured or {})[0])
    if w is None and c["id"] != "head":
        return feedback(False, "SmolLM2's logits are not in yet: wait for them, then check.", waiting=True)
    return CHECKS[c["id"]](w, response)
