"""One real query row as the Real model view lists it: every key's score and share, the top three, the words.

``row_view(row, index, tokens)`` takes the explorer's trace of the row
(:class:`attnlab.engine.single.QueryTrace`, labels ``"4 ⏎"``) and the trace's
tokens, and returns the strings the row panel shows: each key's label and exact
text (the hover title), its score and share rounded, the three largest shares,
and the explorer's own Summary, Match and Share sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.words import match_words, share_words, summary_words
from attnlab.lab.realmodel.neuron import ranked

TOP = 3


def row_view(row: QueryTrace, index: int, tokens: Sequence[str]) -> dict:
    """The row panel's fields (``RowOut`` less the job's place) for query ``index``."""
    labels = list(row.labels)
    sources = [
        {
            "index": i,
            "label": labels[i],
            "exact": tokens[i],
            "allowed": row.allowed[i],
            "score": row.scores[i] if row.allowed[i] else None,
            "score_display": fmt.rounded(row.scores[i]) if row.allowed[i] else "blocked",
            "share": row.weights[i],
            "share_display": fmt.percent(row.weights[i]) if row.allowed[i] else "—",
        }
        for i in range(len(labels))
    ]
    top = [
        {
            "label": labels[i],
            "exact": tokens[i],
            "share": row.weights[i],
            "share_display": fmt.percent(row.weights[i]),
        }
        for i in ranked(row)[:TOP]
    ]
    # Only the words this answer carries: at 256 keys of 64 numbers, each paragraph
    # that lists vectors costs milliseconds (the Mix paragraph is not part of a row).
    return {
        "query": labels[index],
        "query_exact": tokens[index],
        "scale_display": fmt.rounded(row.scale),
        "sources": sources,
        "top": top,
        "summary": summary_words(row),
        "match": match_words(row),
        "share": share_words(row),
    }
