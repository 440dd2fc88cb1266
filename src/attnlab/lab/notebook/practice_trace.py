"""Row 0's trace and its shares in words, read off the learner's held example.

The notebook's challenge checks (``lab.notebook.practice``) and their answers
(``lab.notebook.answers``) both speak of row 0's *unmasked projection* (the
explorer's default view), optionally with another q or other values, and list
its shares as the page does ("A 33%, B blocked, ...").
"""

from __future__ import annotations

from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.sequence import Held

REFERENCE_Q = WORKED.q  # the worked example's starting q, [2, 1]


def row0(held: Held, q=None, values=None) -> QueryTrace:
    """Row 0's unmasked projection at the held scale, optionally with another q or other values."""
    return trace_query(
        held.queries[0] if q is None else q,
        held.keys,
        held.values if values is None else values,
        labels=held.labels,
        scale=held.scale,
    )


def shares(t: QueryTrace) -> str:
    """The trace's shares as the page lists them: ``A 33%, B blocked, C 67%``."""
    return ", ".join(
        f"{label} {fmt.percent(w) if ok else 'blocked'}"
        for label, w, ok in zip(t.labels, t.weights, t.allowed)
    )
