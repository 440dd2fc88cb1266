"""The RoPE lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.connections.models import called, settings_file
from attnlab.lab.connections.rope import words
from attnlab.lab.connections.rope.smollm2 import OwnRope
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
            "columns": ["vector", "coordinates"],
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


RUN = "rope"
DOING = "{called}'s RoPE comes from its {files}"


def current(values: dict, measured: dict) -> tuple[RopeWalk, OwnRope | None, Measured | None]:
    """The controls' walk, the chosen model's own RoPE (when asked and in) and its run's state."""
    w = walk(
        head_dim=values["head_dim"], base=values["base"], train=values["train"], factor=values["factor"],
        offset=values["offset"], seed=values["seed"],
    )  # fmt: skip
    m = measured.get(RUN) if values["own"] == "on" else None
    own = OwnRope(m.data, values["seed"], values["factor"]) if m is not None and m.status == "done" else None
    return w, own, m


def answer(values: dict, measured: dict) -> dict:
    w, own, m = current(values, measured)
    pictures, said, numbers, out = _pictures(w), words.sentences(w), _numbers(w), data(w)
    if own is not None:
        pictures += own.pictures()
        said += own.sentences()
        numbers.insert(1, own.table())
        out["own"] = own.data()
    elif values["own"] == "on":
        model = values["model"]
        said.append(status_words(m, DOING.format(called=called(model), files=settings_file(model))))
    return {"pictures": pictures, "words": said, "numbers": numbers, "data": out}
