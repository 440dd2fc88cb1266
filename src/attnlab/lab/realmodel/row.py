"""One real query row as the Real model view lists it: every key's score and share, the top five, the words.

``row_view(row, index, tokens)`` takes the explorer's trace of the row
(:class:`attnlab.engine.single.QueryTrace`, labels ``"4 ⏎"``) and the trace's
tokens, and returns the strings the row panel shows: each key's label and exact
text (the hover title), its score and share rounded (the row's shares one set,
adding up to 100: :func:`attnlab.lab.numbers.percents`) and the share at full
precision, the sentence naming the ``TOP`` largest shares (with its claims and
its parts, so the page can mark each token and give its exact text on hover),
the table's caption and columns, and the explorer's own Summary, Match and
Share sentences.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.words import match_words, share_words, summary_words
from attnlab.lab.realmodel.neuron import TOP, ranked
from attnlab.lab.said import said


def top_words(row: QueryTrace, tokens: Sequence[str]) -> dict:
    """"Top 5 sources: 2 cat 40%, …; 3 more below." with its claims and ``parts``.

    ``parts`` is the sentence in pieces, in order: ``{"text"}`` as written, or
    ``{"token", "exact"}`` for a key's label (its exact text for the hover title);
    joined, the pieces are the text.
    """
    order = ranked(row)
    top = order[:TOP]
    rest = len(order) - len(top)
    shown = fmt.percents(row.weights)  # the row's set, as its table shows it
    parts: list[dict] = [{"text": f"Top {fmt.plural(len(top), 'source')}: "}]
    for n, i in enumerate(top):
        if n:
            parts.append({"text": ", "})
        parts += [{"token": row.labels[i], "exact": tokens[i]}, {"text": f" {shown[i]}"}]
    parts.append({"text": f"; {rest} more below." if rest > 0 else "."})
    text = "".join(p.get("text", p.get("token", "")) for p in parts)
    claims = {"top": [[row.labels[i], row.weights[i]] for i in top], "shown": [shown[i] for i in top],
              "more": rest}  # fmt: skip
    return {**said(text, **claims), "parts": parts}


def row_view(row: QueryTrace, index: int, tokens: Sequence[str]) -> dict:
    """The row panel's fields (``RowOut`` less the job's place) for query ``index``."""
    labels = list(row.labels)
    scale = fmt.rounded(row.scale)
    sources = []
    shown = fmt.percents(row.weights)  # one set: the row's shares add up to 100
    for i in range(len(labels)):
        ok = row.allowed[i]
        share = shown[i] if ok else "—"
        sources.append({
            "index": i,
            "label": labels[i],
            "exact": tokens[i],
            "allowed": ok,
            "score": row.scores[i] if ok else None,
            "score_display": fmt.rounded(row.scores[i]) if ok else "blocked",
            "share": row.weights[i],
            "share_display": share,
            "share_precise": fmt.precise(row.weights[i]) if ok else "",
            "title": f"{labels[i]}: {share}",  # its cell in the strip
        })  # fmt: skip
    top = [{"label": labels[i], "exact": tokens[i], "share": row.weights[i],
            "share_display": shown[i]} for i in ranked(row)[:TOP]]  # fmt: skip
    n = len(labels)
    # Only the words this answer carries: at 256 keys of 64 numbers, each paragraph
    # that lists vectors costs milliseconds (the Mix paragraph is not part of a row).
    return {
        "query": labels[index],
        "query_exact": tokens[index],
        "scale_display": scale,
        "sources": sources,
        "top": top,
        "top_words": top_words(row, tokens),
        "more": f"All {fmt.plural(n, 'key')}: scaled scores and shares",
        "table": {
            "caption": f"Scaled scores (scale {scale}) and shares of {labels[index]}",
            "columns": ["key", f"scaled score (× {scale})", "share", "share (full precision)"],
            "region": "Scores and shares of this query",
        },
        "strip_label": f"The row's shares in colour, key 0 to key {n - 1}",
        "summary": summary_words(row),
        "match": match_words(row),
        "share": share_words(row),
    }
