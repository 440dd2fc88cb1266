"""One real query row as the explorer computes it, at any length.

``explorer_row`` *is* :func:`attnlab.engine.single.trace_query` (plain Python
floats, ordered sums from ``0.0``, ``scale`` multiplied, one shared maximum over
the allowed scores) on a real head's q, keys and values. The explorer caps a
learner's input at ``MAX_SOURCES`` (64) keys; a real text has up to 256 tokens,
so the row lifts that cap to its own length (``max_sources``): the same engine
code runs, with the same input checks, at any N.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.engine.single import MAX_SOURCES, QueryTrace, trace_query


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
    return trace_query(
        q, keys, values, labels=labels, allowed=allowed, scale=scale, max_sources=max(len(keys), MAX_SOURCES)
    )
