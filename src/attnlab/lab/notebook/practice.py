"""Practice challenges: goals checked by the engine, feedback that teaches, tiered hints.

The challenges' words (title, prompt, response form, hints) are data in
``lab/data/practice.json``; each goal is checked here, on the held example the
learner has built, with :func:`attnlab.engine.trace_query`. "Row 0" means row
0's unmasked projection (the explorer's default view); "row r's output" means
the masked row.

A response is ``None`` (the goal is the state itself), a choice id, or a list
of numbers (a predicted vector, or predicted shares in percent).

``check`` returns ``{"met": bool, "words": str, "load": bool}``. Feedback on a
wrong answer says the *direction* of the error ("your share for A is too
high") and never the right numbers: those come only from :func:`answer`
(the page's "Show answer", which the study history records as help). Words
on the learner's own state (their q, their shares) are not the answer and may
name numbers. ``load`` is true when the challenge cannot be tried on the held
example at all (it is written for the worked A/B/C example and the learner's
sources are called X, Y, Z): the words then offer to load the worked example.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.challenge_set import ChallengeSet, validate_response
from attnlab.lab.explorer import challenge as live
from attnlab.lab.notebook import answers
from attnlab.lab.notebook.practice_trace import REFERENCE_Q, row0, shares
from attnlab.lab.notebook.sequence import STARTING, Held

SHARE_TOLERANCE = 0.005  # half a percentage point
NEAR_VB = 0.1
PREDICTION_TOLERANCE = 0.01  # "to two decimals"
PERCENT_TOLERANCE = 1.0  # percentage points
SAME = 1e-9  # outputs this close count as equal
FAR_OFF = 0.5  # a predicted coordinate this far off is "much" too high or low
FAR_OFF_PERCENT = 10.0  # a predicted share this many points off is "much" too high or low
MIN_STEP = 0.5  # "same-shares": how far q must move from the reference


CHALLENGES = ChallengeSet("practice.json")
challenges = CHALLENGES.listed  # every challenge as data (id, title, prompt, response form, hints)
challenge = CHALLENGES.find


def page_data() -> dict:
    """The practice section's data; ``worked_labels`` are the sources every challenge names,
    ``worked_keys`` the keys a challenge with ``needs_keys`` needs."""
    data = CHALLENGES.data()
    return {
        "title": data["title"],
        "note": data["note"],
        "worked_labels": list(STARTING.labels),
        "worked_keys": [list(k) for k in STARTING.keys],
        "challenges": challenges(),
    }


# --- does the held example fit the challenge? ------------------------------------


def misfit(c: dict, held: Held) -> str | None:
    """Why challenge ``c`` cannot be tried on ``held``, or ``None`` when it can.

    Every challenge names the worked example's sources A, B and C (its hints
    quote their keys), so it needs three sources with those labels; a challenge
    with ``needs_keys`` also needs the worked keys, without which it may have no
    solution. A challenge ``by_role`` (the explorer's live one) names its source
    by position and fits any example with enough sources.
    """
    if c.get("by_role"):
        n = len(held.labels)
        if n <= live.TARGET_INDEX:
            return f"This example has {n} source; add another to try this challenge."
        return None
    worked = ", ".join(STARTING.labels)
    if not held.sequence:  # an example of one query, even one whose sources are named A, B, C
        return (
            "This challenge is written for the worked A/B/C sequence; the explorer shows an "
            "example of one query of its own. Load the A/B/C example to try it."
        )
    if tuple(held.labels) != STARTING.labels:
        return (
            f"This challenge is written for the worked example's sources {worked}; yours are "
            f"{', '.join(held.labels)}. Load the A/B/C example to try it."
        )
    if c.get("needs_keys") and tuple(held.keys) != STARTING.keys:
        keys = ", ".join(fmt.vector(k) for k in STARTING.keys)
        return (
            f"This challenge needs the worked example's keys ({keys}); with other keys it may have "
            "no solution. Load the A/B/C example to try it."
        )
    return None


# --- words that point without telling ----------------------------------------------


def _direction(names: Sequence[str], predicted: Sequence[float], actual: Sequence[float],
               tol: float, far: float) -> str:
    """Say which entries are too high or too low (and whether by a lot), never by how much."""
    parts, right = [], []
    for name, p, a in zip(names, predicted, actual):
        if abs(p - a) <= tol:
            right.append(name)
            continue
        much = "much " if abs(p - a) > far else ""
        parts.append(f"your {name} is {much}too {'high' if p > a else 'low'}")
    words = "; ".join(parts)
    words = words[0].upper() + words[1:] if words else ""
    if right:
        words += f"; your {' and '.join(right)} {'is' if len(right) == 1 else 'are'} right"
    return words + "."


def _listing(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def _points(w: float) -> str:
    return fmt.rounded(w * 100, 2)


def _fb(met: bool, words: str, *, load: bool = False) -> dict:
    return {"met": met, "words": words, "load": load}


# --- the goals ------------------------------------------------------------------


def _second_over_90(held: Held, response) -> dict:
    """The explorer's live challenge, checked on what the explorer shows."""
    state = live.check(held.explorer_trace())
    label, threshold = state.target, fmt.percent(live.THRESHOLD)
    if not state.available:
        return _fb(False, state.status)
    shown = fmt.percent(state.share)
    if state.met:
        return _fb(True, f"{label} takes {shown} of the attention, more than {threshold}.")
    return _fb(
        False,
        f"{label} takes {shown}; it needs more than {threshold}. Point q further along "
        f"{label}'s key, away from the other keys.",
    )


def _equal_ac(held: Held, response) -> dict:
    t = row0(held)
    a, c = t.weights[0], t.weights[2]
    gap = abs(a - c)
    la, lc = t.labels[0], t.labels[2]
    if gap <= SHARE_TOLERANCE:
        return _fb(
            True,
            f"{la} takes {fmt.percent(a)} and {lc} {fmt.percent(c)} (a gap of {_points(gap)} "
            f"points): their scores are {fmt.rounded(t.scores[0])} and {fmt.rounded(t.scores[2])}. "
            "Equal scores give equal shares.",
        )
    more, less = (la, lc) if a > c else (lc, la)
    return _fb(
        False,
        f"{la} takes {fmt.percent(a)} and {lc} {fmt.percent(c)}: {more} is ahead by "
        f"{_points(gap)} points. Move q so that q meets {less}'s key as much as {more}'s.",
    )


def _near_vb(held: Held, response) -> dict:
    t = row0(held)
    vb = t.values[1]
    dist = math.dist(t.output, vb)
    if dist > NEAR_VB:
        return _fb(
            False,
            f"The output {fmt.vector(t.output)} is {fmt.rounded(dist)} from v_B = "
            f"{fmt.vector(vb)}; B takes {fmt.percent(t.weights[1])}. Give B a larger share.",
        )
    if response != "positive":
        return _fb(
            False,
            f"The output is {fmt.rounded(dist)} from v_B, close enough; but reconsider why it "
            "cannot reach v_B: what share does softmax give A and C?",
        )
    if dist == 0.0:
        return _fb(
            True,
            "The output equals v_B here only because A's and C's tiny shares underflowed to "
            "exactly 0 in floating point; in exact arithmetic softmax keeps every share positive.",
        )
    return _fb(
        True,
        f"The output is {fmt.rounded(dist)} from v_B with B at {fmt.percent(t.weights[1])}. "
        "Softmax keeps every allowed share positive, so A and C always pull a little.",
    )


def _zero_q(held: Held, response) -> dict:
    t = row0(held, q=[0.0] * len(held.queries[0]))
    actual = [w * 100 for w in t.weights]
    if max(abs(p - a) for p, a in zip(response, actual)) <= PERCENT_TOLERANCE:
        shares = ", ".join(f"{label} {fmt.rounded(a, 1)}%" for label, a in zip(t.labels, actual))
        return _fb(True, f"At q = [0, 0] every score is 0, so the shares are {shares}.")
    names = [f"share for {label}" for label in t.labels]
    words = _direction(names, response, actual, PERCENT_TOLERANCE, FAR_OFF_PERCENT)
    total = sum(response)
    if abs(total - 100) > PERCENT_TOLERANCE:
        words += f" Your shares add up to {fmt.rounded(total, 1)}%; shares always add up to 100%."
    return _fb(False, f"{words} What is every score q·k when q is the zero vector?")


def _double_q(held: Held, response) -> dict:
    t1 = row0(held)
    t2 = row0(held, q=[2.0 * x for x in held.queries[0]])
    if not max(t2.weights) > max(t1.weights):
        return _fb(
            False,
            f"Every score is equal at q = {fmt.vector(t1.q)}, so doubling changes nothing; pick "
            "a q whose scores differ.",
        )
    if response != "grows":
        return _fb(
            False,
            f"Not that one. Try it: note the largest share at q = {fmt.vector(t1.q)}, type "
            f"2q = {fmt.vector(t2.q)} into the query fields, and compare.",
        )
    return _fb(
        True,
        f"At q = {fmt.vector(t1.q)} the largest share is {fmt.percent(max(t1.weights))}; at 2q "
        f"it is {fmt.percent(max(t2.weights))}. Doubling q doubles the score differences, so "
        "softmax sharpens.",
    )


def _block_a_row2(held: Held, response) -> dict:
    want = (False, True, True)
    if held.mask[2] != want:
        return _fb(
            False,
            f"Row 2's mask allows {_allowed(held, 2)}; block {held.labels[0]} and keep "
            f"{held.labels[1]} and {held.labels[2]} allowed.",
        )
    return _prediction(held.row_trace(2), response, "Row 2")


def _row0_masked(held: Held, response) -> dict:
    return _prediction(held.row_trace(0), response, "Row 0")


def _prediction(t: QueryTrace, response, name: str) -> dict:
    err = max(abs(p - o) for p, o in zip(response, t.output))
    if err <= PREDICTION_TOLERANCE:
        return _fb(True, f"{name}'s masked output is {fmt.vector(t.output)} (shares {shares(t)}).")
    words = _direction(["x", "y"], response, t.output, PREDICTION_TOLERANCE, FAR_OFF)
    return _fb(
        False,
        f"{words} The output is the shares' blend of the allowed values: which sources does "
        f"{name.lower()} allow, and what share does each take?",
    )


def _same_shares(held: Held, response) -> dict:
    t = row0(held)
    ref = row0(held, q=REFERENCE_Q)
    start = fmt.vector(REFERENCE_Q)
    step = math.dist(t.q, REFERENCE_Q)
    if step < MIN_STEP:
        return _fb(
            False,
            f"Your q {fmt.vector(t.q)} is within {MIN_STEP} of {start}; move it further away "
            "and keep the shares.",
        )
    gaps = [w - r for w, r in zip(t.weights, ref.weights)]
    if max(abs(g) for g in gaps) > SHARE_TOLERANCE:
        moved = [
            f"{label}'s share is {'higher' if g > 0 else 'lower'}"
            for label, g in zip(t.labels, gaps)
            if abs(g) > SHARE_TOLERANCE
        ]
        return _fb(
            False,
            f"At q = {fmt.vector(t.q)}, {_listing(moved)} than at {start}. Look for a step "
            "that changes every score by the same amount.",
        )
    if response != "shift":
        return _fb(
            False,
            f"Your q {fmt.vector(t.q)} keeps the shares ({shares(t)}). But reconsider why: "
            "compare the scores at your q with those at q = [2, 1].",
        )
    rise = t.scores[0] - ref.scores[0]
    return _fb(
        True,
        f"At q = {fmt.vector(t.q)} the shares are {shares(t)}, as at {start}: every score rose "
        f"by {fmt.rounded(rise)}, and softmax only sees the differences.",
    )


def _value_moves(held: Held, response) -> dict:
    now = row0(held)
    before = row0(held, values=STARTING.values)
    if held.values == STARTING.values:
        return _fb(False, "The values are still the starting ones; edit a coordinate of a value.")
    moved = any(abs(a - b) > 1e-12 for a, b in zip(now.output, before.output))
    same = now.weights == before.weights
    if moved and same:
        return _fb(
            True,
            f"The output moved from {fmt.vector(before.output)} to {fmt.vector(now.output)} "
            f"while the shares stayed {shares(now)}: shares come from q and the keys only.",
        )
    return _fb(
        False,
        f"The shares stayed {shares(now)}, but the output did not move: the changed value "
        "belongs to a source with no share.",
    )


def _row2_eq_row1(held: Held, response) -> dict:
    o1, o2 = held.row_trace(1).output, held.row_trace(2).output
    gap = max(abs(a - b) for a, b in zip(o1, o2))
    words = f"Row 1 outputs {fmt.vector(o1)} and row 2 outputs {fmt.vector(o2)}"
    if gap <= SAME:
        return _fb(True, f"{words}: equal. Same allowed values and same shares give the same mix.")
    return _fb(False, f"{words}. Row 1 allows {_allowed(held, 1)}; row 2 allows {_allowed(held, 2)}.")


def _allowed(held: Held, r: int) -> str:
    return ", ".join(label for label, ok in zip(held.labels, held.mask[r]) if ok)


# Each challenge's check (held, response -> feedback) and its answer (held, challenge -> words).
GOALS: dict[str, tuple[Callable[[Held, object], dict], Callable[[Held, dict], str]]] = {
    live.CHALLENGE_ID: (_second_over_90, answers.second_over_90),
    "equal-ac": (_equal_ac, answers.equal_ac),
    "near-vb": (_near_vb, answers.near_vb),
    "zero-q": (_zero_q, answers.zero_q),
    "double-q": (_double_q, answers.double_q),
    "block-a-row2": (_block_a_row2, answers.block_a_row2),
    "same-shares": (_same_shares, answers.same_shares),
    "value-moves": (_value_moves, answers.value_moves),
    "row2-eq-row1": (_row2_eq_row1, answers.row2_eq_row1),
    "row0-masked": (_row0_masked, answers.row0_masked),
}


def check(challenge_id: object, held: Held, response: object = None) -> dict:
    """Check challenge ``challenge_id`` on ``held`` with the learner's ``response``."""
    c = challenge(challenge_id)
    response = validate_response(c, response)
    why = misfit(c, held)
    if why is not None:
        return _fb(False, why, load=True)
    return GOALS[c["id"]][0](held, response)


def answer(challenge_id: object, held: Held) -> str:
    """The challenge's answer for ``held``, with the engine's numbers (the page's "Show answer")."""
    c = challenge(challenge_id)
    why = misfit(c, held)
    if why is not None:
        return why
    return GOALS[c["id"]][1](held, c)
