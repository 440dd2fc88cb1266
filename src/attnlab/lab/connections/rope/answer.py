"""The RoPE lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.rope import words
from attnlab.lab.connections.rope.walk import SPAN, RopeWalk, walk


def _pictures(w: RopeWalk) -> list[dict]:
    xs = w.offsets()
    plain = [w.score(x, 0) for x in xs]
    interp = [w.score(x, 0, w.factor) for x in xs]
    pairs = list(range(w.head_dim // 2))
    now, interp_turns, trained = w.turns(w.offset), w.turns(w.offset / w.factor), w.turns(w.train - 1)
    low = min(v for v in (*now, *interp_turns, *trained) if v > 0)
    high = max(*now, *interp_turns, *trained)
    return [
        pic.lines(
            "score",
            "Score against offset",
            f"q · k / √d after rotating q to the offset and k to 0, from 0 to {SPAN} training lengths "
            f"({SPAN * w.train:,}); plain RoPE and with interpolation s = {w.factor}. The marker is offset "
            f"{w.offset:,}.",
            pic.axis("offset", 0, SPAN * w.train),
            pic.axis("score", min(*plain, *interp), max(*plain, *interp)),
            [
                {"name": "plain RoPE", "cls": "now", "xs": xs, "ys": plain, "dots": False},
                {
                    "name": f"interpolated, s = {w.factor}",
                    "cls": "full",
                    "xs": xs,
                    "ys": interp,
                    "dots": False,
                },
            ],
            marker=w.offset,
            marker_text=f"offset {w.offset:,}",
        ),
        pic.lines(
            "turns",
            "How far each pair has turned",
            f"Turns (angle / 2π) of each of the {w.head_dim // 2} pairs, fastest first, on a log scale: at "
            "the "
            f"offset, with interpolation, and at the end of the training length.",
            pic.axis("pair i", 0, max(1, w.head_dim // 2 - 1)),
            pic.axis("turns", max(low, 1e-6), high, log=True),
            [
                {"name": "end of training", "cls": "other", "xs": pairs, "ys": trained, "dots": False},
                {"name": f"offset {w.offset:,}", "cls": "now", "xs": pairs, "ys": now, "dots": False},
                {"name": "interpolated", "cls": "full", "xs": pairs, "ys": interp_turns, "dots": False},
            ],
        ),
    ]


def _numbers(w: RopeWalk) -> list[dict]:
    freqs = w.rope.inverse_frequencies
    return [
        {
            "title": "Each pair",
            "columns": ["pair i", "frequency", "turns in training", f"turns at {w.offset:,}", "interpolated"],
            "rows": [
                [
                    str(i),
                    fmt.scientific(float(f), 3),
                    fmt.rounded(a),
                    fmt.rounded(b),
                    fmt.rounded(c),
                ]
                for i, (f, a, b, c) in enumerate(
                    zip(freqs, w.turns(w.train - 1), w.turns(w.offset), w.turns(w.offset / w.factor))
                )
            ],
        },
        {
            "title": "q and k (seeded)",
            "columns": ["", "vector"],
            "rows": [["q", fmt.vector(w.q)], ["k", fmt.vector(w.k)]],
        },
    ]


def data(w: RopeWalk) -> dict:
    xs = w.offsets()
    return {
        "offsets": xs,
        "score": [w.score(x, 0) for x in xs],
        "interpolated": [w.score(x, 0, w.factor) for x in xs],
        "turns": w.turns(w.offset),
    }


def answer(values: dict) -> dict:
    w = walk(**values)
    return {"pictures": _pictures(w), "words": words.sentences(w), "numbers": _numbers(w), "data": data(w)}
