"""The embeddings lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

import math

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.controls import lines
from attnlab.lab.connections.embeddings import words
from attnlab.lab.connections.embeddings.walk import SWEEP, EmbeddingsWalk, loss_rows, walk
from attnlab.lab.connections.embeddings.words import tau_text
from attnlab.lab.connections.live import Measured

RUN = "embeddings"


def _labels(n: int) -> tuple[list[str], list[str]]:
    return [f"S{i + 1}" for i in range(n)], [f"M{j + 1}" for j in range(n)]


def _diagonal(n: int) -> list[dict]:
    return [pic.mark("box", i, i + 1, rows=(i, i + 1)) for i in range(n)]


def _pictures(w: EmbeddingsWalk) -> list[dict]:
    rows, cols = _labels(w.n)
    s = w.similarity
    p = w.contrastive().weights
    a = w.attention().weights
    root = fmt.rounded(math.sqrt(w.d), 2)
    taus = w.sweep()
    return [
        pic.heatmap(
            "similarity",
            "Similarities: sentence · match",
            "Row i: sentence Si's cosine similarity with every match Mj; the outlined cells are the pairs "
            "that belong together.",
            rows,
            cols,
            s,
            signed=True,
            texts=[[fmt.rounded(float(x), 2) for x in r] for r in s],
            marks=_diagonal(w.n),
        ),
        pic.heatmap(
            "contrastive",
            f"Softmax of similarity ÷ τ = {tau_text(w.tau)}",
            "Each row sums to 100%: the share a sentence gives each match. The loss is the mean of −ln of "
            "the outlined shares.",
            rows,
            cols,
            p,
            texts=[fmt.percents(r) for r in p],  # each row one set: adding up to 100
            marks=_diagonal(w.n),
        ),
        pic.heatmap(
            "attention",
            f"Attention's softmax of similarity ÷ √{w.d} = {root}",
            f"The same rows at attention's scaling, a temperature of {root}: near an even "
            f"{fmt.percent(1 / w.n)} each.",
            rows,
            cols,
            a,
            texts=[fmt.percents(r) for r in a],
            marks=_diagonal(w.n),
        ),
        pic.lines(
            "loss",
            "The loss as τ changes",
            f"InfoNCE loss for τ from {tau_text(SWEEP[0])} to {tau_text(SWEEP[-1])}, beside ln {w.n}, its "
            f"limit as τ → ∞. The marker is τ = {tau_text(w.tau)}.",
            pic.axis("temperature τ", SWEEP[0], SWEEP[-1], log=True),
            pic.axis("loss (nats)", 0.0, max(w.chance, *(w.loss(t) for t in taus))),
            [
                {"name": "loss", "cls": "now", "xs": taus, "ys": [w.loss(t) for t in taus]},
                {
                    "name": f"ln {w.n}",
                    "cls": "other",
                    "xs": taus,
                    "ys": [w.chance] * len(taus),
                    "dots": False,
                },  # fmt: skip
            ],
            marker=w.tau,
            marker_text=f"τ = {tau_text(w.tau)}",
        ),
    ]


def _matrix(title: str, m: np.ndarray, digits: int = 4) -> dict:
    rows, cols = _labels(m.shape[0])
    return {
        "title": title,
        "columns": ["sentence", *cols],
        "rows": [[rows[i], *(fmt.rounded(float(x), digits) for x in m[i])] for i in range(m.shape[0])],
    }


def _numbers(w: EmbeddingsWalk) -> list[dict]:
    c = w.contrastive()
    losses = loss_rows(c.weights)
    c_tau = w.cosines(c.output, w.b)
    c_att = w.cosines(w.attention().output, w.b)
    rows, _ = _labels(w.n)
    return [
        _matrix("Similarities S = A Bᵀ", w.similarity),
        _matrix(f"Softmax of S ÷ τ = {tau_text(w.tau)}", c.weights),
        _matrix(f"Softmax of S ÷ √{w.d} (attention)", w.attention().weights),
        {
            "title": "Each sentence",
            "columns": [
                "label",
                "sentence",
                "match",
                "−ln share on own match",
                "cosine of ÷τ average with match",
                "cosine of ÷√d average with match",
            ],  # fmt: skip
            "rows": [
                [
                    rows[i],
                    w.sentences[i],
                    w.matches[i],
                    fmt.rounded(float(losses[i]), 4),
                    fmt.rounded(c_tau[i], 4),
                    fmt.rounded(c_att[i], 4),
                ]  # fmt: skip
                for i in range(w.n)
            ],
        },
        {
            "title": "Loss by τ",
            "columns": ["τ", "loss"],
            "rows": [[tau_text(t), fmt.rounded(w.loss(t), 4)] for t in w.sweep()],
        },
        {
            "title": "The vectors",
            "columns": ["vector", f"{w.d} numbers"],
            "rows": [[f"S{i + 1}", fmt.vector(w.a[i].tolist())] for i in range(w.n)]
            + [[f"M{i + 1}", fmt.vector(w.b[i].tolist())] for i in range(w.n)],
        },
    ]


def data(w: EmbeddingsWalk | None) -> dict:
    if w is None:
        return {}
    c = w.contrastive()
    att = w.attention()
    taus = w.sweep()
    return {
        "similarity": w.similarity.tolist(),
        "tau": w.tau,
        "p": c.weights.tolist(),
        "loss_rows": loss_rows(c.weights).tolist(),
        "loss": w.loss(),
        "correct": w.correct(),
        "sweep": taus,
        "sweep_loss": [w.loss(t) for t in taus],
        "attention_scale": 1 / math.sqrt(w.d),
        "attention_weights": att.weights.tolist(),
        "cos_tau": w.cosines(c.output, w.b),
        "cos_attention": w.cosines(att.output, w.b),
    }


def recorded(measured: dict) -> tuple[dict | None, Measured | None]:
    m = measured.get(RUN)
    return (m.data if m is not None and m.status == "done" else None), m


def current(values: dict, measured: dict) -> tuple[EmbeddingsWalk | None, Measured | None]:
    vectors, m = recorded(measured)
    return walk(values, lines(values["sentences"]), lines(values["matches"]), vectors), m


def answer(values: dict, measured: dict) -> dict:
    w, m = current(values, measured)
    return {
        "pictures": [] if w is None else _pictures(w),
        "words": words.sentences(w, values, m),
        "numbers": [] if w is None else _numbers(w),
        "data": data(w),
    }
