"""Row 0's trace and its shares in words, read off the learner's held example.

The notebook's challenge checks (``lab.notebook.practice``) and their answers
(``lab.notebook.answers``) both speak of row 0's *unmasked projection* (the
explorer's default view), optionally with another q or other values, and list
its shares as the page does ("A 33%, B blocked, ...": the explorer's set of percents,
rounded together so that they add up to 100).
"""

from __future__ import annotations

from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab.explorer.display import share_percents
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
    """The trace's shares as the page lists them: ``A 33%, B blocked, C 67%`` (adding up to 100)."""
    return ", ".join(f"{label} {text}" for label, text in zip(t.labels, share_percents(t)))


def largest(t: QueryTrace) -> str:
    """The largest share as the explorer shows it at this trace (one of :func:`share_percents`)."""
    return share_percents(t)[max(range(len(t.weights)), key=lambda i: (t.weights[i], -i))]
