"""The dilution lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.dilution import words
from attnlab.lab.connections.dilution.needle import Needle
from attnlab.lab.connections.dilution.walk import MAX_KEYS, DilutionWalk, walk
from attnlab.lab.connections.live import Measured, status_words

SHOWN = 8  # the largest shares drawn as bars


def _pictures(w: DilutionWalk) -> list[dict]:
    ns = w.sweep()
    x = pic.axis("number of keys n", 2, MAX_KEYS, log=True)
    mine = "now"
    other = "other"
    row = w.row(w.keys)
    top = sorted(range(w.keys), key=lambda j: -row[j])[:SHOWN]
    return [
        pic.lines(
            "largest",
            "The largest share as n grows",
            f"One query over the first n random keys: its largest weight, with the √d_k scaling and without. "
            f"The marker is n = {w.keys:,}.",
            x,
            pic.axis("largest share", 0.0, 1.0),
            [
                {
                    "name": "scaled by √d_k",
                    "cls": mine if w.scaled else other,
                    "xs": ns,
                    "ys": [w.largest(n, True) for n in ns],
                },
                {
                    "name": "not scaled",
                    "cls": other if w.scaled else mine,
                    "xs": ns,
                    "ys": [w.largest(n, False) for n in ns],
                },
            ],
            marker=w.keys,
            marker_text=f"n = {w.keys:,}",
        ),
        pic.lines(
            "entropy",
            "How spread the weights are",
            "The entropy of the weights in nats, beside ln n, the most it can be (every key alike).",
            x,
            pic.axis("entropy (nats)", 0.0, math.log(MAX_KEYS)),
            [
                {"name": "ln n", "cls": "full", "xs": ns, "ys": [math.log(n) for n in ns], "dots": False},
                {
                    "name": "scaled by √d_k",
                    "cls": mine if w.scaled else other,
                    "xs": ns,
                    "ys": [w.spread(n, True) for n in ns],
                },
                {
                    "name": "not scaled",
                    "cls": other if w.scaled else mine,
                    "xs": ns,
                    "ys": [w.spread(n, False) for n in ns],
                },
            ],
            marker=w.keys,
            marker_text=f"n = {w.keys:,}",
        ),
        pic.bars(
            "top",
            f"The {min(SHOWN, w.keys)} largest shares at n = {w.keys:,}",
            f"Scaling {w.scaling}: the keys that win the most weight, largest first.",
            [
                {"label": f"key {j}", "value": float(row[j]), "text": fmt.percent(row[j]), "cls": "now"}
                for j in top
            ],
            top=1.0,
        ),
    ]


def _numbers(w: DilutionWalk) -> list[dict]:
    rows = [
        [
            f"{n:,}",
            fmt.rounded(w.largest(n, True)),
            fmt.rounded(w.spread(n, True)),
            fmt.rounded(w.largest(n, False)),
            fmt.rounded(w.spread(n, False)),
            fmt.rounded(math.log(n)),
        ]
        for n in w.sweep()
    ]
    return [
        {
            "title": "Largest share and entropy by number of keys",
            "columns": [
                "n",
                "largest (scaled)",
                "entropy (scaled)",
                "largest (not scaled)",
                "entropy (not scaled)",
                "ln n",
            ],
            "rows": rows,
        },
        {"title": "The query (seeded)", "columns": ["q"], "rows": [[fmt.vector(w.q)]]},
    ]


def data(w: DilutionWalk) -> dict:
    ns = w.sweep()
    return {
        "sweep": ns,
        "largest_scaled": [w.largest(n, True) for n in ns],
        "largest_unscaled": [w.largest(n, False) for n in ns],
        "entropy_scaled": [w.spread(n, True) for n in ns],
        "entropy_unscaled": [w.spread(n, False) for n in ns],
    }


RUN = "needle"
DOING = "SmolLM2 traces the needle texts"


def current(values: dict, measured: dict) -> tuple[DilutionWalk, Needle | None, Measured | None]:
    """The random-key walk, the needle (when asked and in) and the needle run's state."""
    w = walk(keys=values["keys"], d_k=values["d_k"], scaling=values["scaling"], seed=values["seed"])
    m = measured.get(RUN) if values["needle"] == "on" else None
    needle = Needle(values["word"], m.data["rows"]) if m is not None and m.status == "done" else None
    return w, needle, m


def answer(values: dict, measured: dict) -> dict:
    w, needle, m = current(values, measured)
    pictures, said, numbers, out = _pictures(w), words.sentences(w), _numbers(w), data(w)
    if needle is not None:
        pictures.append(needle.picture())
        said += needle.sentences()
        numbers.insert(1, needle.table())
        out["needle"] = needle.data()
    elif values["needle"] == "on":
        said.append(status_words(m, DOING))
    return {"pictures": pictures, "words": said, "numbers": numbers, "data": out}
