"""Practice challenges: goals checked by the engine, feedback in words, tiered hints.

The challenges' words (title, prompt, response form, hints) are data in
``lab/data/practice.json``; each goal is checked here, on the held example the
learner has built, with :func:`attnlab.engine.trace_query`. "Row 0" means row
0's unmasked projection (the explorer's default view); "row r's output" means
the masked row.

A response is ``None`` (the goal is the state itself), a choice id, or a list
of numbers (a predicted vector, or predicted shares in percent).
``check`` returns ``{"met": bool, "words": str}``; the words name the
engine's numbers so the learner can see why.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from importlib import resources

from attnlab.engine.errors import FieldError
from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.sequence import STARTING, Held

SHARE_TOLERANCE = 0.005  # half a percentage point
NEAR_VB = 0.1
PREDICTION_TOLERANCE = 0.01  # "to two decimals"
PERCENT_TOLERANCE = 1.0  # percentage points
SAME = 1e-9  # outputs this close count as equal


@cache
def _data() -> dict:
    text = resources.files("attnlab.lab").joinpath("data/practice.json").read_text("utf-8")
    return json.loads(text)


def challenges() -> list[dict]:
    """Return every challenge as data (id, title, prompt, response form, hints)."""
    return [dict(c) for c in _data()["challenges"]]


def challenge(challenge_id: object) -> dict:
    for c in _data()["challenges"]:
        if c["id"] == challenge_id:
            return c
    ids = ", ".join(c["id"] for c in _data()["challenges"])
    raise FieldError("challenge", f"challenge {challenge_id!r:.40} is not one of {ids}")


def page_data() -> dict:
    return {"title": _data()["title"], "note": _data()["note"], "challenges": challenges()}


# --- responses ----------------------------------------------------------------


def validate_response(c: dict, response: object) -> object:
    """Return ``response`` checked against challenge ``c``'s form, or raise ``FieldError``.

    Errors are located at ``("response",)`` or ``("response", j)``.
    """
    form = c["response"]
    if form is None:
        if response is not None:
            raise FieldError("response", f"response: challenge {c['id']} takes no typed response")
        return None
    if response is None:
        raise FieldError("response", f"response: challenge {c['id']} needs {form['label'].lower()}")
    if form["type"] == "choice":
        ids = [o["id"] for o in form["options"]]
        if response not in ids:
            raise FieldError("response", f"response must be one of {', '.join(ids)}")
        return response
    size = form["size"]
    if not isinstance(response, list) or len(response) != size:
        raise FieldError("response", f"response must be a list of {size} numbers")
    out = []
    for j, x in enumerate(response):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise FieldError(("response", j), f"response[{j}] must be a finite number")
        out.append(float(x))
    return out


# --- the goals ------------------------------------------------------------------


def _row0(held: Held, q=None, values=None) -> QueryTrace:
    """Row 0's unmasked projection, optionally with another q or other values."""
    return trace_query(
        held.queries[0] if q is None else q,
        held.keys,
        held.values if values is None else values,
        labels=held.labels,
    )


def _shares(t: QueryTrace) -> str:
    return ", ".join(
        f"{label} {fmt.percent(w) if ok else 'blocked'}"
        for label, w, ok in zip(t.labels, t.weights, t.allowed)
    )


def _points(w: float) -> str:
    return fmt.rounded(w * 100, 2)


def _equal_ac(held: Held, response) -> dict:
    t = _row0(held)
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
    t = _row0(held)
    vb = t.values[1]
    dist = math.dist(t.output, vb)
    why_ok = response == "positive"
    if dist > NEAR_VB:
        return _fb(
            False,
            f"The output {fmt.vector(t.output)} is {fmt.rounded(dist)} from v_B = "
            f"{fmt.vector(vb)}; B takes {fmt.percent(t.weights[1])}. Give B a larger share.",
        )
    if not why_ok:
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
    t = _row0(held, q=[0.0] * len(held.queries[0]))
    errors = [abs(p - w * 100) for p, w in zip(response, t.weights)]
    actual = ", ".join(f"{label} {fmt.rounded(w * 100, 1)}%" for label, w in zip(t.labels, t.weights))
    if max(errors) <= PERCENT_TOLERANCE:
        return _fb(True, f"Right: at q = [0, 0] every score is 0, so the shares are {actual}.")
    return _fb(
        False,
        f"Not yet: the engine gives {actual}. Every score q·k is 0 when q is the zero vector.",
    )


def _double_q(held: Held, response) -> dict:
    t1 = _row0(held)
    t2 = _row0(held, q=[2.0 * x for x in held.queries[0]])
    top1, top2 = max(t1.weights), max(t2.weights)
    numbers = (
        f"At q = {fmt.vector(t1.q)} the largest share is {fmt.percent(top1)}; at 2q = "
        f"{fmt.vector(t2.q)} it is {fmt.percent(top2)}."
    )
    if not top2 > top1:
        return _fb(
            False,
            f"{numbers} Every score is equal at this q, so doubling changes nothing; pick a q "
            "whose scores differ.",
        )
    if response != "grows":
        return _fb(False, f"{numbers} Look again at what doubling does to the differences.")
    return _fb(True, f"{numbers} Doubling q doubles the score differences, so softmax sharpens.")


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
    detail = f"{name}'s masked output is {fmt.vector(t.output)} (shares {_shares(t)})."
    if err <= PREDICTION_TOLERANCE:
        return _fb(True, f"Right: {detail}")
    return _fb(False, f"Your prediction {fmt.vector(response)} is off by {fmt.rounded(err)}. {detail}")


def _tie_top(held: Held, response) -> dict:
    t = _row0(held)
    pairs = [
        (i, j) for i in range(3) for j in range(i + 1, 3)
        if abs(t.weights[i] - t.weights[j]) <= SHARE_TOLERANCE
    ]
    if not pairs:
        return _fb(False, f"No two shares are within half a point: {_shares(t)}.")
    i, j = pairs[0]
    names = f"{t.labels[i]} and {t.labels[j]}"
    third = 3 - i - j
    if response != "ties":
        return _fb(
            False,
            f"{names} tie ({_shares(t)}). Look at the third source's share: what does it do?",
        )
    if abs(t.weights[third] - t.weights[i]) > SHARE_TOLERANCE:
        return _fb(
            False,
            f"{names} tie, but {t.labels[third]} does not here ({_shares(t)}); with the "
            "current keys the third source need not tie.",
        )
    return _fb(
        True,
        f"{names} tie and so does {t.labels[third]} ({_shares(t)}): with these keys, "
        "k_A = 2k_C − k_B, so a tie between two forces a tie of all three.",
    )


def _value_moves(held: Held, response) -> dict:
    now = _row0(held)
    before = _row0(held, values=STARTING.values)
    if held.values == STARTING.values:
        return _fb(False, "The values are still the starting ones; edit a coordinate of a value.")
    moved = any(abs(a - b) > 1e-12 for a, b in zip(now.output, before.output))
    same = now.weights == before.weights
    if moved and same:
        return _fb(
            True,
            f"The output moved from {fmt.vector(before.output)} to {fmt.vector(now.output)} "
            f"while the shares stayed {_shares(now)}: shares come from q and the keys only.",
        )
    return _fb(
        False,
        f"The shares stayed {_shares(now)}, but the output did not move: the changed value "
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


def _fb(met: bool, words: str) -> dict:
    return {"met": met, "words": words}


CHECKS: dict[str, Callable[[Held, object], dict]] = {
    "equal-ac": _equal_ac,
    "near-vb": _near_vb,
    "zero-q": _zero_q,
    "double-q": _double_q,
    "block-a-row2": _block_a_row2,
    "tie-top": _tie_top,
    "value-moves": _value_moves,
    "row2-eq-row1": _row2_eq_row1,
    "row0-masked": _row0_masked,
}


def check(challenge_id: object, held: Held, response: object = None) -> dict:
    """Check challenge ``challenge_id`` on ``held`` with the learner's ``response``."""
    c = challenge(challenge_id)
    response = validate_response(c, response)
    return CHECKS[c["id"]](held, response)
