"""The practice challenges' answers: what the page's "Show answer" reveals.

Each answer is worked out on the learner's held example (its keys, values and
mask) with :func:`attnlab.engine.trace_query`, so it names numbers the learner
can type and check. :func:`attnlab.lab.practice.answer` calls these after it
has made sure the example fits the challenge (three sources labelled A, B, C).
Feedback on a wrong check never says these numbers; the study history records
a shown answer as help.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.practice import REFERENCE_Q, _row0, _shares, challenge
from attnlab.lab.sequence import Held


def _option(cid: str, option: str) -> str:
    """The words of a choice option, as the learner reads them."""
    options = challenge(cid)["response"]["options"]
    return next(o["text"] for o in options if o["id"] == option)


def _equal_ac(held: Held) -> str:
    # A and C tie where q·(k_A − k_C) = 0: the line through 0 perpendicular to d.
    q = held.queries[0]
    d = [a - c for a, c in zip(held.keys[0], held.keys[2])]
    dd = sum(x * x for x in d)
    if dd == 0.0:
        return "k_A and k_C are equal here, so A and C take equal shares at every q."
    f = sum(x * y for x, y in zip(q, d)) / dd
    tie = [x - f * y for x, y in zip(q, d)]
    t = _row0(held, q=tie)
    return (
        f"A and C tie wherever q·k_A = q·k_C. The nearest such q to yours is {fmt.vector(tie)}: "
        f"there the shares are {_shares(t)}."
    )


def _near_vb(held: Held) -> str:
    q = [6.0, -3.0]
    t = _row0(held, q=q)
    return (
        f"At q = {fmt.vector(q)} B takes {fmt.percent(t.weights[1])} and the output "
        f"{fmt.vector(t.output)} is {fmt.rounded(math.dist(t.output, t.values[1]))} from v_B. "
        f"Why it never gets there: {_option('near-vb', 'positive')}"
    )


def _zero_q(held: Held) -> str:
    t = _row0(held, q=[0.0] * len(held.queries[0]))
    shares = ", ".join(f"{label} {fmt.rounded(w * 100, 1)}%" for label, w in zip(t.labels, t.weights))
    return f"At q = [0, 0] every score is 0, so softmax splits evenly: {shares}."


def _double_q(held: Held) -> str:
    q = held.queries[0]
    t1 = _row0(held)
    if max(t1.weights) == min(t1.weights):
        q = REFERENCE_Q
        t1 = _row0(held, q=q)
    t2 = _row0(held, q=[2.0 * x for x in q])
    why = _option("double-q", "grows")
    return (
        f"It {why} At q = {fmt.vector(q)} the largest share is {fmt.percent(max(t1.weights))}; "
        f"at 2q = {fmt.vector(t2.q)} it is {fmt.percent(max(t2.weights))}."
    )


def _block_a_row2(held: Held) -> str:
    t = trace_query(held.queries[2], held.keys, held.values, labels=held.labels,
                    allowed=(False, True, True))
    return (
        f"Block A in row 2 (keep B and C). Row 2's masked output is then {fmt.vector(t.output)} "
        f"(shares {_shares(t)})."
    )


def _row0_masked(held: Held) -> str:
    t = held.row_trace(0)
    return f"Row 0's masked output is {fmt.vector(t.output)} (shares {_shares(t)})."


def _same_shares(held: Held) -> str:
    q = [x + 1.0 for x in REFERENCE_Q]
    t, ref = _row0(held, q=q), _row0(held, q=REFERENCE_Q)
    why = _option("same-shares", "shift")
    return (
        f"q = {fmt.vector(q)}: the step [1, 1] adds {fmt.rounded(t.scores[0] - ref.scores[0])} to "
        f"every score, so the shares stay {_shares(t)}. Any q = [2 + t, 1 + t] works. "
        f"The shares stayed the same because {why}"
    )


def _value_moves(held: Held) -> str:
    return (
        "Change any coordinate of a value whose source has a share, for example v_C's y: the "
        "output moves, while the shares, which come from q and the keys only, stay."
    )


def _row2_eq_row1(held: Held) -> str:
    return (
        f"Block B in row 1 and block B and C in row 2: both rows then allow only A, so both "
        f"output v_A = {fmt.vector(held.values[0])}."
    )


ANSWERS: dict[str, Callable[[Held], str]] = {
    "equal-ac": _equal_ac,
    "near-vb": _near_vb,
    "zero-q": _zero_q,
    "double-q": _double_q,
    "block-a-row2": _block_a_row2,
    "same-shares": _same_shares,
    "value-moves": _value_moves,
    "row2-eq-row1": _row2_eq_row1,
    "row0-masked": _row0_masked,
}
