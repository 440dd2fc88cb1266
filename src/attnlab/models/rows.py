"""One real query row as the explorer computes it, at any length.

``explorer_row`` is :func:`attnlab.engine.single.trace_query`'s calculation
(plain Python floats, ordered sums from ``0.0``, ``scale`` multiplied, one
shared maximum over the allowed scores) on a real head's q, keys and values.
Up to the explorer's ``MAX_SOURCES`` keys it *is* ``trace_query``; beyond
(a real text of up to 256 tokens) the same steps run here, because the
explorer's input checks cap what a learner types, not what a model holds.
A test checks the two give ``==`` numbers on the same vectors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attnlab.engine.single import MAX_SOURCES, QueryTrace, ordered_sum, trace_query


def explorer_row(
    q: Sequence[float],
    keys: Sequence[Sequence[float]],
    values: Sequence[Sequence[float]],
    *,
    labels: Sequence[str],
    allowed: Sequence[bool],
    scale: float,
) -> QueryTrace:
    """The explorer's trace of ``q`` over ``keys``/``values``.

    ``scale`` is explicit (multiplied); ``allowed[i]`` True = the query may attend key i.
    """
    if len(keys) <= MAX_SOURCES:
        return trace_query(q, keys, values, labels=labels, allowed=allowed, scale=scale)
    return same_steps(q, keys, values, labels=labels, allowed=allowed, scale=scale)


def same_steps(q, keys, values, *, labels, allowed, scale: float) -> QueryTrace:
    """``trace_query``'s steps 1-3 without its input limits (a model's vectors, already checked)."""
    q_ = tuple(float(x) for x in q)
    keys_ = tuple(tuple(float(x) for x in k) for k in keys)
    values_ = tuple(tuple(float(x) for x in v) for v in values)
    allowed_ = tuple(bool(a) for a in allowed)
    d_v = len(values_[0])
    # 1) Match: ordered dot products, then scale (multiplied: an explicit scale)
    dots = tuple(ordered_sum(qj * kj for qj, kj in zip(q_, k)) for k in keys_)
    scores = tuple(s * scale for s in dots)
    # 2) Share: one shared maximum over the allowed scores, one denominator
    m = max(s for s, ok in zip(scores, allowed_) if ok)
    exps = tuple(math.exp(s - m) if ok else 0.0 for s, ok in zip(scores, allowed_))
    z = ordered_sum(e for e, ok in zip(exps, allowed_) if ok)
    weights = tuple(e / z if ok else 0.0 for e, ok in zip(exps, allowed_))
    # 3) Mix: each allowed source carries w_i * v_i; the output sums the carries
    carries = tuple(
        tuple(w * x for x in v) if ok else (0.0,) * d_v for w, v, ok in zip(weights, values_, allowed_)
    )
    output = tuple(ordered_sum(c[j] for c, ok in zip(carries, allowed_) if ok) for j in range(d_v))
    return QueryTrace(
        q=q_,
        keys=keys_,
        values=values_,
        labels=tuple(labels),
        allowed=allowed_,
        scale=float(scale),
        dots=dots,
        scores=scores,
        m=m,
        exps=exps,
        z=z,
        weights=weights,
        carries=carries,
        output=output,
        blocked=tuple(i for i, ok in enumerate(allowed_) if not ok),
        underflowed=tuple(i for i, (w, ok) in enumerate(zip(weights, allowed_)) if ok and w == 0.0),
    )
