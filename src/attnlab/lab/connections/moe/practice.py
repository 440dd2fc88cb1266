"""The MoE lab's practice: goals checked on the learner's input (words: lab/data/connections/moe.json)."""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, feedback, validate_response
from attnlab.lab.connections.moe.walk import MoEWalk, walk

CHALLENGES = ChallengeSet("connections/moe.json")
KEEP = 0.9  # "keep-90": the top k hold at least 90% of the probability
SAME = 1e-12  # two ratios this close are the same


def _keep_90(w: MoEWalk, response) -> dict:
    kept, before = w.kept_with(w.k), (w.kept_with(w.k - 1) if w.k > 1 else 0.0)
    claims = {"k": w.k, "kept": kept, "kept_one_fewer": before, "goal": KEEP}
    # what the top k hold, as the sum of the router bars' shown shares (largest first, ties: lower index)
    probs = w.routing.probs[w.token]
    order = sorted(range(len(probs)), key=lambda e: (-probs[e], e))
    shown, shown_before = (fmt.percent_together(probs, order[:k]) for k in (w.k, w.k - 1))
    if kept >= KEEP and before < KEEP:
        return feedback(
            True,
            f"The top {w.k} hold {shown} of token {w.token}'s probability and the top {w.k - 1} "
            f"only {shown_before}: {w.k} is the smallest k that keeps {fmt.percent(KEEP)}.",
            **claims,
        )
    if kept < KEEP:
        return feedback(
            False,
            f"The top {w.k} hold {shown}; that is under {fmt.percent(KEEP)}: keep more experts.",
            **claims,
        )
    return feedback(
        False,
        f"The top {w.k} hold {shown}, but a smaller k keeps {fmt.percent(KEEP)} too: find the "
        "smallest.",
        **claims,
    )


def _ratio(w: MoEWalk, response) -> dict:
    r, t = w.routing, w.token
    if w.k < 2:
        return feedback(False, "With k = 1 only one gate is kept; set k to 2 or more to compare two.", k=w.k)
    a, b = int(r.top[t][0]), int(r.top[t][1])
    before, after = float(r.probs[t][a] / r.probs[t][b]), float(r.gates[t][a] / r.gates[t][b])
    same = bool(abs(before - after) <= SAME * before)
    claims = {"before": before, "after": after, "same": same, "choice": response}
    if response == "same":
        return feedback(
            True,
            f"E{a + 1} over E{b + 1} is {fmt.rounded(before)} before and {fmt.rounded(after)} after: "
            "renormalising divides every kept gate by the same sum.",
            **claims,
        )
    return feedback(
        False,
        f"Compare E{a + 1} over E{b + 1} before ({fmt.rounded(before)}) and after ({fmt.rounded(after)}) "
        "renormalising. What is every kept gate divided by?",
        **claims,
    )


CHECKS: dict[str, Callable[[MoEWalk, object], dict]] = {"keep-90": _keep_90, "ratio": _ratio}


def check(challenge_id: object, values: dict, response: object = None) -> dict:
    c = CHALLENGES.find(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](walk(**values), response)
