"""The state-space lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.ssm.walk import EQUAL, SHARP, VOCAB, D, SSMWalk
from attnlab.lab.said import said


def two_ways(w: SSMWalk) -> dict:
    diff = w.linear_difference()
    claims = {"difference": diff, "bound": EQUAL, "within": diff <= EQUAL}
    if diff <= EQUAL:
        return said(
            "Causal linear attention as a masked matrix and as a recurrence give the same outputs: largest "
            f"difference {fmt.scientific(diff)} of the largest output, within {fmt.scientific(EQUAL, 1)}.",
            **claims,
        )
    return said(
        "Causal linear attention as a masked matrix and as a recurrence differ by up to "
        f"{fmt.scientific(diff)} of the largest output, more than {fmt.scientific(EQUAL, 1)}.",
        **claims,
    )


def state(w: SSMWalk) -> dict:
    t = w.step - 1
    return said(
        f"At step {w.step} the recurrence reads the output from its state alone: S_{w.step} ({D} × {D} = "
        f"{D * D} numbers) and z_{w.step} ({D} numbers), whatever the length. The matrix form reads row {t} "
        f"of the {w.n} × {w.n} matrix: {w.step} weight{'s' if w.step != 1 else ''}, one per key so far. Row "
        f"{t}'s output is "
        f"{fmt.vector(w.recurrence.output[t])}.",
        step=w.step,
        state_numbers=D * D + D,
        row_weights=w.step,
        output=[float(x) for x in w.recurrence.output[t]],
    )


def cost(w: SSMWalk) -> dict:
    c = w.costs()
    ratio = c["matrix"] / c["recurrence"]
    if ratio >= 1:
        versus = f"the matrix does {fmt.rounded(ratio)} times as many"
    else:
        versus = f"the recurrence does {fmt.rounded(1 / ratio)} times as many"
    return said(
        f"For n = {w.n}, the matrix form does {c['matrix']:,} multiply-adds (it grows as n²) and the "
        "recurrence "
        f"{c['recurrence']:,} (it grows as n): {versus}.",
        n=w.n,
        matrix=c["matrix"],
        recurrence=c["recurrence"],
        ratio=ratio,
    )


def scan(w: SSMWalk) -> dict:
    diff = w.scan_difference()
    upper = float(np.max(np.abs(np.triu(w.dual, 1)))) if w.n > 1 else 0.0
    t = w.step - 1
    row_sum = float(np.sum(w.dual[t]))
    within = "within" if diff <= EQUAL else "more than"
    return said(
        f"The selective scan's outputs equal M x, with M the lower-triangular matrix pictured: largest "
        f"difference {fmt.scientific(diff)} of the largest output, {within} {fmt.scientific(EQUAL, 1)}. "
        "Above the "
        f"diagonal M is 0: no step reads a later input. Unlike attention's weights, its rows need not add up "
        f"to 1: row {t} adds up to {fmt.rounded(row_sum)}.",
        difference=diff,
        bound=EQUAL,
        within=diff <= EQUAL,
        upper=upper,
        row=t,
        row_sum=row_sum,
    )


def copy(w: SSMWalk) -> dict:
    c = w.copy
    L = w.n
    exact = c.exact_up_to()
    lin, soft = c.linear_right[L - 1], c.softmax_right[L - 1]
    return said(
        f"Copying: with keys of d = {w.d} numbers, linear attention's state holds {w.d} × {VOCAB} numbers "
        "and "
        f"gives every token back exactly up to {exact} tokens; of n = {L} tokens it gets {lin} right. "
        "Softmax "
        f"attention over the same keys (scale {fmt.rounded(SHARP)}) gets {soft} of {L} right: it can pick "
        "one "
        "key out, where the state has mixed them.",
        d=w.d,
        exact_up_to=exact,
        length=L,
        linear_right=lin,
        softmax_right=soft,
    )


def sentences(w: SSMWalk) -> list[dict]:
    return [two_ways(w), state(w), cost(w), scan(w), copy(w)]
