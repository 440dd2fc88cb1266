"""The MoE lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.moe import words
from attnlab.lab.connections.moe.walk import MoEWalk, walk
from attnlab.lab.connections.moe.words import expert


def _pictures(w: MoEWalk) -> list[dict]:
    r, t = w.routing, w.token
    top = {int(e) for e in r.top[t]}
    names = [expert(e) for e in range(w.experts)]
    # each bar chart is one set (a token's probabilities, gates, attention): its texts add up to 100
    probs, gates = fmt.percents(r.probs[t]), fmt.percents(r.gates[t])
    attention = fmt.percents(w.attention.weights[t])
    return [
        pic.bars(
            "router",
            f"Token {t}'s router probabilities",
            f"The softmax over experts, dense like attention's; the top {w.k} are teal and outlined.",
            [
                {
                    "label": names[e],
                    "value": float(r.probs[t][e]),
                    "text": probs[e],
                    "cls": "full" if e in top else "",
                    "marked": e in top,
                }
                for e in range(w.experts)
            ],
            top=1.0,
        ),
        pic.bars(
            "gates",
            f"Token {t}'s gates after top-{w.k}",
            f"Only the top {w.k} keep a gate, renormalised to add up to 1; the others are exactly 0.",
            [
                {
                    "label": names[e],
                    "value": float(r.gates[t][e]),
                    "text": gates[e],
                    "cls": "now",
                }
                for e in range(w.experts)
            ],
            top=1.0,
        ),
        pic.heatmap(
            "batch",
            "Every token's gates",
            f"Rows are tokens, columns experts: each row has {w.k} inked cells, its gates. Token {t} is "
            "outlined.",
            [f"token {i}" for i in range(w.tokens)],
            names,
            r.gates,
            marks=[pic.mark("row", t)],
        ),
        pic.bars(
            "load",
            "Tokens per expert",
            f"How many of the {fmt.plural(w.tokens, 'token')} each expert receives.",
            [
                {"label": names[e], "value": int(r.load[e]), "text": str(int(r.load[e])), "cls": "other"}
                for e in range(w.experts)
            ],
        ),
        pic.bars(
            "attention",
            f"Token {t}'s attention over positions",
            "Self-attention over the same tokens: every position keeps a positive weight.",
            [
                {
                    "label": f"position {j}",
                    "value": float(w.attention.weights[t][j]),
                    "text": attention[j],
                    "cls": "full",
                    "marked": j == t,
                }
                for j in range(w.tokens)
            ],
            top=1.0,
        ),
    ]


def _numbers(w: MoEWalk) -> list[dict]:
    r = w.routing
    rows = []
    for i in range(w.tokens):
        rows.append(
            [
                str(i),
                fmt.vector(w.logits[i]),
                fmt.vector(r.probs[i]),
                ", ".join(expert(int(e)) for e in r.top[i]),
                fmt.rounded(float(r.kept[i])),
                fmt.vector(r.gates[i]),
            ]
        )
    return [
        {
            "title": "Every token's routing",
            "columns": ["token", "logits", "probabilities", "top k", "kept", "gates"],
            "rows": rows,
        },
        {
            "title": "Every expert",
            "columns": ["expert", "tokens", "importance (Σ p)"],
            "rows": [
                [expert(e), str(int(r.load[e])), fmt.rounded(float(r.importance[e]))]
                for e in range(w.experts)
            ],
        },
        {
            "title": "Inputs (seeded)",
            "columns": ["token", "x"],
            "rows": [[str(i), fmt.vector(w.x[i])] for i in range(w.tokens)],
        },
    ]


def data(w: MoEWalk) -> dict:
    r = w.routing
    return {
        "logits": w.logits.tolist(),
        "probs": r.probs.tolist(),
        "top": r.top.tolist(),
        "kept": r.kept.tolist(),
        "gates": r.gates.tolist(),
        "load": r.load.tolist(),
        "importance": r.importance.tolist(),
        "attention_weights": w.attention.weights[w.token].tolist(),
    }


def answer(values: dict) -> dict:
    w = walk(**values)
    return {"pictures": _pictures(w), "words": words.sentences(w), "numbers": _numbers(w), "data": data(w)}
