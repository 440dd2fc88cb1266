"""The sampling lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.sampling import words
from attnlab.lab.connections.sampling.walk import SWEEP, SamplingWalk, walk
from attnlab.lab.connections.sampling.words import shown, temperature_text

RUN = "logits"


def _pictures(w: SamplingWalk) -> list[dict]:
    p = w.p()
    texts = fmt.percents(p)  # the candidates' shares: one set, adding up to 100
    top = int(p.argmax())
    ts = w.sweep()
    t = temperature_text(w.temperature)
    x = pic.axis("temperature T", SWEEP[0], SWEEP[-1], log=True)
    return [
        pic.bars(
            "shares",
            f"The {w.k} candidates at T = {t}",
            "softmax(logit ÷ T) over the candidates, largest logit first; the outlined bar is the argmax, "
            "where everything goes as T → 0.",
            [
                {
                    "label": f"{shown(w.labels[i])} · logit {fmt.rounded(float(w.logits[i]), 2)}",
                    "value": float(p[i]),
                    "text": texts[i],
                    "cls": "now",
                    "marked": i == top,
                }
                for i in range(w.k)
            ],
            top=1.0,
        ),
        pic.lines(
            "temperature",
            "From argmax to uniform",
            f"The top candidate's share and the entropy ÷ ln {w.k} (1 = uniform) as T goes from "
            f"{temperature_text(SWEEP[0])} to {temperature_text(SWEEP[-1])}; the flat line is 1/{w.k}. The "
            f"marker is T = {t}.",
            x,
            pic.axis("share", 0.0, 1.0),
            [
                {"name": "top share", "cls": "now", "xs": ts, "ys": [w.top_share(s) for s in ts]},
                {
                    "name": f"entropy ÷ ln {w.k}",
                    "cls": "full",
                    "xs": ts,
                    "ys": [w.spread(s) / math.log(w.k) for s in ts],
                },
                {"name": f"1/{w.k}", "cls": "other", "xs": ts, "ys": [w.uniform] * len(ts), "dots": False},
            ],
            marker=w.temperature,
            marker_text=f"T = {t}",
        ),
    ]


def _numbers(w: SamplingWalk) -> list[dict]:
    p = w.p()
    top = w.argmax
    t = temperature_text(w.temperature)
    columns = ["rank", "candidate", "logit", f"logit ÷ {t}", f"share at T = {t}", "T → 0", "T → ∞"]
    if w.p_model is not None:
        columns.append("of the whole vocabulary at T = 1")
    rows = []
    for i in range(w.k):
        row = [
            str(i + 1),
            shown(w.labels[i]),
            fmt.rounded(float(w.logits[i])),
            fmt.rounded(float(w.logits[i]) / w.temperature),
            fmt.rounded(float(p[i]), 4),
            fmt.rounded(float(top[i]), 4),
            fmt.rounded(w.uniform, 4),
        ]
        if w.p_model is not None:
            row.append(fmt.rounded(w.p_model[i], 4))
        rows.append(row)
    sweep = [
        [temperature_text(s), fmt.rounded(w.top_share(s), 4), fmt.rounded(w.spread(s), 4)] for s in w.sweep()
    ]
    return [
        {"title": "The candidates", "columns": columns, "rows": rows},
        {"title": "Temperature sweep", "columns": ["T", "top share", "entropy (nats)"], "rows": sweep},
    ]


def data(w: SamplingWalk | None) -> dict:
    if w is None:
        return {}
    ts = w.sweep()
    return {
        "logits": [float(x) for x in w.logits],
        "temperature": w.temperature,
        "p": [float(x) for x in w.p()],
        "argmax_limit": [float(x) for x in w.argmax],
        "uniform_limit": w.uniform,
        "sweep": ts,
        "top_share": [w.top_share(s) for s in ts],
        "entropy": [w.spread(s) for s in ts],
        "from_argmax": w.from_argmax(SWEEP[0]),
        "from_uniform": w.from_uniform(SWEEP[-1]),
    }


def recorded(values: dict, measured: dict) -> tuple[dict | None, Measured | None]:
    """SmolLM2's recorded logits when they are in (and the source is SmolLM2), and their run's state."""
    m = measured.get(RUN)
    return (m.data if m is not None and m.status == "done" else None), m


def answer(values: dict, measured: dict) -> dict:
    logits, m = recorded(values, measured)
    w = walk(values, logits)
    return {
        "pictures": [] if w is None else _pictures(w),
        "words": words.sentences(w, values, m),
        "numbers": [] if w is None else _numbers(w),
        "data": data(w),
    }
