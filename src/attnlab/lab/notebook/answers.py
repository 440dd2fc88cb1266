"""The practice challenges' answers: what the page's "Show answer" reveals.

Each answer is worked out on the learner's held example (its keys, values and
mask) with :func:`attnlab.engine.trace_query`, so it names numbers the learner
can type and check. Each takes the held example and its challenge (for the
words of its choices); ``lab.practice.GOALS`` pairs it with its challenge's
check, and :func:`attnlab.lab.notebook.practice.answer` calls it after it has made
sure the example fits the challenge (three sources labelled A, B, C).
Feedback on a wrong check never says these numbers; the study history records
a shown answer as help.
"""

from __future__ import annotations

import math

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import challenge as live
from attnlab.lab.explorer.sequence import Held
from attnlab.lab.notebook.practice_trace import REFERENCE_Q, row0, shares


def _option(c: dict, option: str) -> str:
    """The words of challenge ``c``'s choice ``option``, as the learner reads them."""
    return next(o["text"] for o in c["response"]["options"] if o["id"] == option)


def second_over_90(held: Held, c: dict) -> str:
    # Walk q out along the target's key (1, 2, 4, ... times it) until its share passes 90%.
    t = held.explorer_trace()
    i = live.TARGET_INDEX
    label, key = t.labels[i], t.keys[i]
    if not t.allowed[i]:
        return f"{label} is blocked by the mask here, so no q gives it any attention."
    for times in (1, 2, 4, 8, 16, 32, 64):
        q = [times * x for x in key]
        try:
            moved = trace_query(q, t.keys, t.values, labels=t.labels, allowed=t.allowed, scale=t.scale)
        except FieldError:
            break
        if live.check(moved).met:
            return (
                f"Move q along {label}'s key: at q = {fmt.vector(q)} {label} takes "
                f"{fmt.percent(moved.weights[i])} of the attention."
            )
    return (
        f"No q from 1 to 64 times {label}'s key gives {label} more than "
        f"{fmt.percent(live.THRESHOLD)} of the attention here; try directions that point away "
        "from the other keys."
    )


def equal_ac(held: Held, c: dict) -> str:
    # A and C tie where q·(k_A − k_C) = 0: the line through 0 perpendicular to d.
    q = held.queries[0]
    d = [a - c for a, c in zip(held.keys[0], held.keys[2])]
    dd = sum(x * x for x in d)
    if dd == 0.0:
        return "k_A and k_C are equal here, so A and C take equal shares at every q."
    f = sum(x * y for x, y in zip(q, d)) / dd
    tie = [x - f * y for x, y in zip(q, d)]
    t = row0(held, q=tie)
    return (
        f"A and C tie wherever q·k_A = q·k_C. The nearest such q to yours is {fmt.vector(tie)}: "
        f"there the shares are {shares(t)}."
    )


def near_vb(held: Held, c: dict) -> str:
    q = [6.0, -3.0]
    t = row0(held, q=q)
    return (
        f"At q = {fmt.vector(q)} B takes {fmt.percent(t.weights[1])} and the output "
        f"{fmt.vector(t.output)} is {fmt.rounded(math.dist(t.output, t.values[1]))} from v_B. "
        f"Why it never gets there: {_option(c, 'positive')}"
    )


def zero_q(held: Held, c: dict) -> str:
    t = row0(held, q=[0.0] * len(held.queries[0]))
    shares = ", ".join(f"{label} {fmt.rounded(w * 100, 1)}%" for label, w in zip(t.labels, t.weights))
    return f"At q = [0, 0] every score is 0, so softmax splits evenly: {shares}."


def double_q(held: Held, c: dict) -> str:
    q = held.queries[0]
    t1 = row0(held)
    if max(t1.weights) == min(t1.weights):
        q = REFERENCE_Q
        t1 = row0(held, q=q)
    t2 = row0(held, q=[2.0 * x for x in q])
    why = _option(c, "grows")
    return (
        f"It {why} At q = {fmt.vector(q)} the largest share is {fmt.percent(max(t1.weights))}; "
        f"at 2q = {fmt.vector(t2.q)} it is {fmt.percent(max(t2.weights))}."
    )


def block_a_row2(held: Held, c: dict) -> str:
    t = trace_query(held.queries[2], held.keys, held.values, labels=held.labels,
                    allowed=(False, True, True), scale=held.scale)
    return (
        f"Block A in row 2 (keep B and C). Row 2's masked output is then {fmt.vector(t.output)} "
        f"(shares {shares(t)})."
    )


def row0_masked(held: Held, c: dict) -> str:
    t = held.row_trace(0)
    return f"Row 0's masked output is {fmt.vector(t.output)} (shares {shares(t)})."


def same_shares(held: Held, c: dict) -> str:
    q = [x + 1.0 for x in REFERENCE_Q]
    t, ref = row0(held, q=q), row0(held, q=REFERENCE_Q)
    why = _option(c, "shift")
    return (
        f"q = {fmt.vector(q)}: the step [1, 1] adds {fmt.rounded(t.scores[0] - ref.scores[0])} to "
        f"every score, so the shares stay {shares(t)}. Any q = [2 + t, 1 + t] works. "
        f"The shares stayed the same because {why}"
    )


def value_moves(held: Held, c: dict) -> str:
    return (
        "Change any coordinate of a value whose source has a share, for example v_C's y: the "
        "output moves, while the shares, which come from q and the keys only, stay."
    )


def row2_eq_row1(held: Held, c: dict) -> str:
    return (
        f"Block B in row 1 and block B and C in row 2: both rows then allow only A, so both "
        f"output v_A = {fmt.vector(held.values[0])}."
    )
