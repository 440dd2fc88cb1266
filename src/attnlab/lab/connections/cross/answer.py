"""The cross-attention lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.cross import words
from attnlab.lab.connections.cross.walk import CrossWalk, walk


def _pictures(w: CrossWalk) -> list[dict]:
    t = w.traces[w.patch]
    name = w.words[w.word]
    labels = [f"({p // w.grid},{p % w.grid})" for p in range(w.patches)] + list(w.words)
    return [
        pic.heatmap(
            "map",
            f"Cross-attention map of “{name}”",
            f"Each cell is a patch of the image; its ink is the share of that patch's attention that goes to "
            f"“{name}”. Patch ({w.row}, {w.col}) is outlined.",
            [str(r) for r in range(w.grid)],
            [str(c) for c in range(w.grid)],
            w.word_map(),
            texts=words.map_texts(w) if w.grid <= 6 else None,
            marks=[pic.mark("box", w.col, rows=(w.row, w.row + 1))],
        ),
        pic.bars(
            "match",
            f"Match: patch ({w.row}, {w.col}) against each word",
            "Each word's score, q · k / √d_k: how well the patch's query meets the word's key.",
            [
                {"label": f"“{x}”", "value": s, "text": fmt.rounded(s), "cls": "other"}
                for x, s in zip(w.words, t.scores)
            ],
        ),
        pic.bars(
            "share",
            "Share: the softmax over the words",
            "Each word's share of the patch's attention; they add up to 1.",
            [
                {"label": f"“{x}”", "value": s, "text": p, "cls": "full", "marked": i == w.word}
                for i, (x, s, p) in enumerate(zip(w.words, t.weights, words.patch_shares(w, w.patch)))
            ],
            top=1.0,
        ),
        pic.bars(
            "mix",
            "Mix: what the text writes into the patch",
            "The shares' blend of the words' values (red, green, blue).",
            [
                {"label": channel, "value": x, "text": fmt.rounded(x), "cls": "now"}
                for channel, x in zip(("red", "green", "blue"), t.output)
            ],
        ),
        pic.heatmap(
            "shared",
            "Shared attention: one sequence",
            f"Rows and columns are the {w.patches} patches, then the {len(w.words)} words; each row is one "
            f"position's weights under ordinary self-attention. Patch ({w.row}, {w.col})'s row is outlined; "
            "its "
            "cells right of the patches are its share for the words.",
            labels,
            labels,
            w.shared.weights,
            marks=[pic.mark("row", w.patch)],
        ),
    ]


def _numbers(w: CrossWalk) -> list[dict]:
    rows = []
    for p, t in enumerate(w.traces):
        rows.append(
            [
                f"({p // w.grid}, {p % w.grid})",
                words.shows(w, p),
                fmt.vector(t.q),
                fmt.vector(t.weights),
                fmt.vector(t.output),
            ]
        )
    return [
        {
            "title": "Every patch: its query, its shares over the words, its output",
            "columns": ["patch", "shows", "q", "shares (" + ", ".join(w.words) + ")", "output"],
            "rows": rows,
        },
        {
            "title": "The words: keys and values",
            "columns": ["word", "key (ball, grass, sky)", "value (red, green, blue)"],
            "rows": [
                [x, fmt.vector(k), fmt.vector(v)]
                for x, k, v in zip(w.words, w.traces[0].keys, w.traces[0].values)
            ],
        },
    ]


def data(w: CrossWalk) -> dict:
    return {
        "cross_weights": [list(t.weights) for t in w.traces],
        "cross_outputs": [list(t.output) for t in w.traces],
        "shared_weights": w.shared.weights.tolist(),
        "shared_text_share": w.shared_text_share(),
    }


def answer(values: dict) -> dict:
    w = walk(**values)
    return {"pictures": _pictures(w), "words": words.sentences(w), "numbers": _numbers(w), "data": data(w)}
