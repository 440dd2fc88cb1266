"""The embeddings lab's sentences, each built beside its numbers with the claims it makes."""

from __future__ import annotations

import math

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.embeddings.walk import EmbeddingsWalk
from attnlab.lab.connections.live import Measured, status_words
from attnlab.lab.said import said

DOING = "MiniLM embeds your sentences"


def tau_text(tau: float) -> str:
    return fmt.significant(tau)


def source(w: EmbeddingsWalk, values: dict) -> dict:
    if w.source == "random":
        return said(
            f"The vectors are seeded random (seed {values['seed']}): {w.n} sentence vectors of {w.d} numbers "
            f"and {w.n} matches, each its sentence's vector plus noise × {fmt.rounded(values['noise'], 2)}, "
            "all of length 1, so each dot product is a cosine similarity.",
            source="random",
            n=w.n,
            d=w.d,
            noise=values["noise"],
        )
    return said(
        f"MiniLM embedded your {w.n} sentences and their {w.n} matches: {w.d} numbers each, of length 1, so "
        "each dot product is a cosine similarity.",
        source="minilm",
        n=w.n,
        d=w.d,
    )


def softmax_rows(w: EmbeddingsWalk) -> dict:
    p = w.contrastive().weights
    own = np.diagonal(p)
    least = int(own.argmin())
    return said(
        f"Row i takes sentence i's similarities with every match, divides them by τ = {tau_text(w.tau)} and "
        f"applies softmax: on average a sentence gives its own match {fmt.percent(own.mean())}; the least is "
        f"sentence {least + 1}'s, {fmt.percents(p[least])[least]}.",
        tau=w.tau,
        own_mean=float(own.mean()),
        least=least + 1,
        least_share=float(own[least]),
    )


def loss(w: EmbeddingsWalk) -> dict:
    value = w.loss()
    right = sum(w.correct())
    return said(
        f"The contrastive (InfoNCE) loss is the mean of −ln(the share on the own match): "
        f"{fmt.significant(value)} here. {right} of {w.n} sentences are most similar to their own match, so "
        f"as τ → 0 the loss tends to {'0' if right == w.n else 'infinity'}; as τ → ∞ every share tends to "
        f"1/{w.n} and the loss to ln {w.n} = {fmt.rounded(w.chance)}.",
        loss=value,
        correct=right,
        n=w.n,
        cold_to_zero=right == w.n,
        hot_limit=w.chance,
    )


def attention(w: EmbeddingsWalk) -> dict:
    weights = w.attention().weights
    i, j = np.unravel_index(int(weights.argmax()), weights.shape)
    largest = fmt.percents(weights[i])[j]  # as its row of the attention map shows it
    root = math.sqrt(w.d)
    c_tau = float(np.mean(w.cosines(w.contrastive().output, w.b)))
    c_att = float(np.mean(w.cosines(w.attention().output, w.b)))
    return said(
        "Attention does the same three steps: dot products, divided by "
        f"√d_k = √{w.d} = {fmt.rounded(root, 2)} (a temperature of {fmt.rounded(root, 2)}), softmax, then "
        f"the average of the values (here the matches' vectors). At ÷{fmt.rounded(root, 2)} the largest "
        f"share is {largest}, against an even {fmt.percent(1 / w.n)}. A sentence's "
        f"average has a cosine of {fmt.rounded(c_tau, 2)} with its own match at ÷τ, on average, and "
        f"{fmt.rounded(c_att, 2)} at ÷{fmt.rounded(root, 2)}.",
        d=w.d,
        temperature=root,
        largest=float(weights.max()),
        even=1 / w.n,
        cos_tau_mean=c_tau,
        cos_attention_mean=c_att,
    )


def sentences(w: EmbeddingsWalk | None, values: dict, m: Measured | None) -> list[dict]:
    if w is None:
        return [status_words(m, DOING)]
    return [source(w, values), softmax_rows(w), loss(w), attention(w)]
