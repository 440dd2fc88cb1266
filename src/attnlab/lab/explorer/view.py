"""The held example as the page draws it: the held table, its rows' words and the explorer's row.

:func:`sequence_view` traces every row of the held example
(``lab.explorer.sequence``) and returns the T x S scores and shares, each row's
output and summary, and what the explorer shows, with every string the held
table places (``"q = [2, 1]"``, ``"s 0.707"``, the mask boxes' names) and every
sentence as ``{"text", "claims"}`` (``lab.said``).
"""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import row_strings
from attnlab.lab.explorer.sequence import WIDTH, Held
from attnlab.lab.explorer.texts import (
    explorer_heading,
    explorer_label,
    explorer_line,
    explorer_note,
    explorer_texts,
    worked_fit,
)
from attnlab.lab.explorer.words import summary_said
from attnlab.lab.said import said


def _count(n: int, one: str, many: str) -> str:
    return fmt.plural(n, one, many)


def held_scale(held: Held) -> dict:
    """How the held example's scores are scaled: ``{"op": "divide" | "multiply", "by", "shown"}``."""
    if held.scale is None:
        return {"op": "divide", "by": math.sqrt(WIDTH), "d_k": WIDTH, "shown": f"√{WIDTH}"}
    return {"op": "multiply", "by": held.scale, "shown": fmt.significant(held.scale)}


def caption(held: Held) -> dict:
    """The held table's caption: how its scores are scaled, and what a row and a check mean."""
    sc = held_scale(held)
    scaled = f"s = q·k/{sc['shown']}" if sc["op"] == "divide" else f"s = q·k × {sc['shown']}"
    rows = "one row per token’s query" if held.sequence else "one row: the query"
    return said(
        f"Scaled scores {scaled} and shares, {rows}; checked cells may attend",
        scale=sc, rows=len(held.queries), sequence=held.sequence,
    )


def title(held: Held) -> dict:
    """The held table's heading: ``Held example · 3 queries · 3 sources``."""
    t, s = len(held.queries), len(held.labels)
    return said(
        f"Held example · {_count(t, 'query', 'queries')} · {_count(s, 'source', 'sources')}",
        queries=t, sources=s,
    )


def _row(held: Held, r: int, trace) -> dict:
    name = f"Row {r} ({held.labels[r]})"
    summary, claims = summary_said(trace)
    return {
        "row": r,
        "label": held.labels[r],
        "name": name,
        "query": list(held.queries[r]),
        "query_text": f"q = {fmt.vector(held.queries[r])}",
        "output": list(trace.output),
        **row_strings(trace),
        "score_marks": [
            f"s {fmt.rounded(s)}" if ok else None for s, ok in zip(trace.scores, trace.allowed)
        ],
        "mask_labels": [f"{name} may attend to {label}" for label in held.labels],
        "summary": said(f"Row {r}: {summary}", row=r, **claims),
    }


def sequence_view(held: Held) -> dict:
    """Return the T x S scaled scores and weights, each row's output and words, and the explorer's row.

    ``scores[r][i]`` is computed for every cell (blocked ones too, as the
    engine does); ``blocked[r][i]`` says the mask refuses it, so a view shows
    it blocked rather than as a share of 0. ``weights`` of blocked cells are 0.
    """
    traces = [held.row_trace(r) for r in range(len(held.queries))]
    explorer = held.explorer_trace()
    return {
        "example": held.to_dict(),
        "title": title(held),
        "caption": caption(held),
        "labels": list(held.labels),
        "sources": [f"Source {label}" for label in held.labels],
        "scores": [list(t.scores) for t in traces],
        "weights": [list(t.weights) for t in traces],
        "blocked": [[not ok for ok in row] for row in held.mask],
        "outputs": [list(t.output) for t in traces],
        "rows": [_row(held, r, t) for r, t in enumerate(traces)],
        "worked_fit": worked_fit(held),
        "explorer": {
            "row": held.row,
            "masked": held.masked,
            "label": explorer_label(held),
            "heading": explorer_heading(held),
            "note": explorer_note(held),
            "line": explorer_line(held),
            "texts": explorer_texts(held),
            "trace": explorer.to_dict(),
        },
    }
