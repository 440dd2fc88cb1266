"""The practice challenges' answers: what the page's "Show answer" reveals, with their claims.

Each answer is worked out on the learner's held example (its keys, values and
mask) with :func:`attnlab.engine.trace_query`, so it names numbers the learner
can type and check. Each takes the held example and its challenge (for the
words of its choices) and returns ``{"text", "claims"}`` (``lab.said``): the q
it proposes, the shares and outputs it names, so
``tests/lab/notebook/test_practice_claims.py`` can check that the proposed q
meets the goal. ``lab.notebook.practice.GOALS`` pairs each with its challenge's
check, and :func:`attnlab.lab.notebook.practice.answer` calls it after it has
made sure the example fits the challenge (three sources labelled A, B, C).
Feedback on a wrong check never says these numbers; the study history records
a shown answer as help.
"""

from __future__ import annotations

import math
from fractions import Fraction

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import challenge as live
from attnlab.lab.explorer.display import share_percents
from attnlab.lab.explorer.sequence import Held
from attnlab.lab.notebook.practice_trace import REFERENCE_Q, largest, row0, shares
from attnlab.lab.said import said


def _option(c: dict, option: str) -> str:
    """The words of challenge ``c``'s choice ``option``, as the learner reads them."""
    return next(o["text"] for o in c["response"]["options"] if o["id"] == option)


def _shares(t) -> dict[str, float | None]:
    """The shares an answer lists, by label (None: blocked)."""
    return {label: w if ok else None for label, w, ok in zip(t.labels, t.weights, t.allowed)}


def second_over_90(held: Held, c: dict) -> dict:
    # Walk q out along the target's key (1, 2, 4, ... times it) until its share passes 90%.
    t = held.explorer_trace()
    i = live.TARGET_INDEX
    label, key = t.labels[i], t.keys[i]
    if not t.allowed[i]:
        return said(
            f"{label} is blocked by the mask here, so no q gives it any attention.",
            target=label, blocked=True,
        )
    for times in (1, 2, 4, 8, 16, 32, 64):
        q = [times * x for x in key]
        try:
            moved = trace_query(q, t.keys, t.values, labels=t.labels, allowed=t.allowed, scale=t.scale)
        except FieldError:
            break
        if live.check(moved).met:
            return said(
                f"Move q along {label}'s key: at q = {fmt.vector(q)} {label} takes "
                f"{share_percents(moved)[i]} of the attention.",
                target=label, q=q, share=moved.weights[i], threshold=live.THRESHOLD, times=times,
            )
    return said(
        f"No q from 1 to 64 times {label}'s key gives {label} more than "
        f"{fmt.percent(live.THRESHOLD)} of the attention here; try directions that point away "
        "from the other keys.",
        target=label, found=False, threshold=live.THRESHOLD,
    )


def equal_ac(held: Held, c: dict) -> dict:
    # A and C tie where q·(k_A − k_C) = 0: the line through 0 perpendicular to d.
    q = held.queries[0]
    d = [a - c for a, c in zip(held.keys[0], held.keys[2])]
    if all(x == 0.0 for x in d):
        return said("k_A and k_C are equal here, so A and C take equal shares at every q.", keys_equal=True)
    largest = max(abs(x) for x in d)
    d = [x / largest for x in d]  # the same direction, so d·d neither underflows nor overflows
    dd = sum(x * x for x in d)
    f = sum(x * y for x, y in zip(q, d)) / dd
    tie = [x - f * y for x, y in zip(q, d)]
    t = row0(held, q=tie)
    return said(
        f"A and C tie wherever q·k_A = q·k_C. The nearest such q to yours is {fmt.vector(tie)}: "
        f"there the shares are {shares(t)}.",
        q=tie, shares=_shares(t),
    )


def between(p, a, b) -> bool:
    """Whether point ``p`` lies on the closed segment from ``a`` to ``b``, in exact arithmetic."""
    p, a, b = ([Fraction(x) for x in v] for v in (p, a, b))
    cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
    along = (p[0] - a[0]) * (b[0] - a[0]) + (p[1] - a[1]) * (b[1] - a[1])
    length = (b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2
    if length == 0:  # a single point
        return p == a
    return cross == 0 and 0 <= along <= length


def near_vb(held: Held, c: dict) -> dict:
    # The output is v_B only where A's and C's pulls cancel: w_A (v_A − v_B) + w_C (v_C − v_B) = 0
    # with both shares positive, so only when v_B lies between v_A and v_C.
    q = [6.0, -3.0]
    t = row0(held, q=q)
    dist = math.dist(t.output, t.values[1])
    reachable = between(t.values[1], t.values[0], t.values[2])
    if reachable:
        why = "Here v_B lies between v_A and v_C, so the output can reach it where A's and C's pulls cancel."
    elif dist == 0.0:
        why = (
            "It equals v_B here only in floating point: A's and C's shares are too small to move it. "
            f"In exact arithmetic it never gets there: {_option(c, 'positive')}"
        )
    else:
        why = f"Why it never gets there: {_option(c, 'positive')}"
    return said(
        f"At q = {fmt.vector(q)} B takes {share_percents(t)[1]} and the output "
        f"{fmt.vector(t.output)} is {fmt.rounded(dist)} from v_B. {why}",
        q=q, share_b=t.weights[1], output=list(t.output), distance=dist, choice="positive",
        reachable=reachable,
    )


def zero_q(held: Held, c: dict) -> dict:
    t = row0(held, q=[0.0] * len(held.queries[0]))
    texts = fmt.percents(t.weights, 1)
    listed = ", ".join(f"{label} {text}" for label, text in zip(t.labels, texts))
    rounding = " (rounded to add up to 100)" if len(set(texts)) > 1 else ""
    return said(
        f"At q = [0, 0] every score is 0, so softmax splits evenly: {listed}{rounding}.",
        q=list(t.q), scores=list(t.scores), shares=_shares(t),
    )


def double_q(held: Held, c: dict) -> dict:
    q = held.queries[0]
    t1 = row0(held)
    if max(t1.weights) == min(t1.weights):
        q = REFERENCE_Q
        t1 = row0(held, q=q)
    t2 = row0(held, q=[2.0 * x for x in q])
    why = _option(c, "grows")
    return said(
        f"It {why} At q = {fmt.vector(q)} the largest share is {largest(t1)}; "
        f"at 2q = {fmt.vector(t2.q)} it is {largest(t2)}.",
        q=list(q), doubled=list(t2.q), largest=max(t1.weights), largest_doubled=max(t2.weights),
        choice="grows",
    )


def block_a_row2(held: Held, c: dict) -> dict:
    allowed = (False, True, True)
    t = trace_query(held.queries[2], held.keys, held.values, labels=held.labels, allowed=allowed,
                    scale=held.scale)
    return said(
        f"Block A in row 2 (keep B and C). Row 2's masked output is then {fmt.vector(t.output)} "
        f"(shares {shares(t)}).",
        row=2, allowed=list(allowed), output=list(t.output), shares=_shares(t),
    )


def row0_masked(held: Held, c: dict) -> dict:
    t = held.row_trace(0)
    return said(
        f"Row 0's masked output is {fmt.vector(t.output)} (shares {shares(t)}).",
        row=0, output=list(t.output), shares=_shares(t),
    )


def same_shares(held: Held, c: dict) -> dict:
    q = [x + 1.0 for x in REFERENCE_Q]
    t, ref = row0(held, q=q), row0(held, q=REFERENCE_Q)
    why = _option(c, "shift")
    rise = t.scores[0] - ref.scores[0]
    return said(
        f"q = {fmt.vector(q)}: the step [1, 1] adds {fmt.rounded(rise)} to "
        f"every score, so the shares stay {shares(t)}. Any q = [2 + t, 1 + t] works. "
        f"The shares stayed the same because {why}",
        q=q, reference=list(REFERENCE_Q), rises=[s - r for s, r in zip(t.scores, ref.scores)],
        shares=_shares(t), choice="shift",
    )


def value_moves(held: Held, c: dict) -> dict:
    return said(
        "Change any coordinate of a value whose source has a share, for example v_C's y: the "
        "output moves, while the shares, which come from q and the keys only, stay.",
        weights_ignore_values=True, example={"source": "C", "coord": 1},
    )


def row2_eq_row1(held: Held, c: dict) -> dict:
    return said(
        f"Block B in row 1 and block B and C in row 2: both rows then allow only A, so both "
        f"output v_A = {fmt.vector(held.values[0])}.",
        mask={"1": [True, False, False], "2": [True, False, False]}, output=list(held.values[0]),
    )
