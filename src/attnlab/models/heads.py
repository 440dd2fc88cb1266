"""Name what an attention head does, from its weights: the patterns to spot in a real model.

For one head's weights ``w`` (T, T) (rows = queries, each summing to 1),
the first rule that holds names it:

- *previous-token*: the mean share a query gives the token just before it
  (queries 1..T-1) is above 0.5;
- *first-token* (an "attention sink"): the mean share given to token 0 is above 0.5;
- *self*: the mean share a query gives itself is above 0.5;
- *broad*: the mean entropy of the rows, divided by the entropy of a uniform
  row over the keys each query may see, is above 0.8;
- otherwise *focused* (most of each row on few tokens, no single rule).

Token 0 is left out of the self and first-token means in a causal model (it
can only see itself, so it says nothing about the head).
"""

from __future__ import annotations

import math

import numpy as np

KINDS = ("previous-token", "first-token", "self", "broad", "focused")

KIND_WORDS = {
    "previous-token": "Most of each token's attention goes to the token just before it.",
    "first-token": "Most of each token's attention goes to the first token (a resting place, or sink).",
    "self": "Most of each token's attention stays on the token itself.",
    "broad": "Each token spreads its attention over many tokens, almost evenly: a blur, not a pointer.",
    "focused": "Each token puts most of its attention on a few tokens, chosen by content.",
}
SHORT = {
    "previous-token": "previous token",
    "first-token": "first token",
    "self": "self",
    "broad": "broad",
    "focused": "focused",
}


def head_profile(weights: np.ndarray, allowed: np.ndarray) -> dict:
    """Scores and a kind for one head's ``weights`` (T, T); ``allowed`` (T, T) True = may attend."""
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[0]
    previous = float(np.mean(np.diagonal(w, offset=-1))) if n > 1 else 0.0
    first = float(np.mean(w[1:, 0])) if n > 1 else float(w[0, 0])
    own = float(np.mean(np.diagonal(w)[1:])) if n > 1 else float(w[0, 0])
    seen = allowed.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0).sum(axis=1)
        spread = np.where(seen > 1, ent / np.log(np.maximum(seen, 2)), 0.0)
    breadth = float(np.mean(spread[seen > 1])) if (seen > 1).any() else 0.0
    if previous > 0.5:
        kind = "previous-token"
    elif first > 0.5:
        kind = "first-token"
    elif own > 0.5:
        kind = "self"
    elif breadth > 0.8:
        kind = "broad"
    else:
        kind = "focused"
    return {"kind": kind, "previous": previous, "first": first, "self": own, "breadth": breadth}


def breadth_words(breadth: float, n_tokens: int) -> str:
    """What a breadth means, in tokens: a row as spread as a uniform row over about N tokens."""
    if n_tokens <= 1:
        return "breadth: with one token there is nothing to spread over"
    even = max(1, round(math.exp(breadth * math.log(n_tokens))))
    return (
        f"breadth {breadth:.2f}: on average a row is as spread out as an even split over about "
        f"{even} of the up to {n_tokens} tokens it may see (0 = all on one token, 1 = perfectly even)"
    )


def layer_profiles(trace, layer: int) -> list[dict]:
    """:func:`head_profile` for every head of ``layer`` in a ModelTrace."""
    trace.check(layer=layer)
    return [head_profile(trace.weights[layer, h], trace.allowed) for h in range(trace.n_head)]


def top_sources(row: np.ndarray, labels: list[str], k: int = 3) -> list[tuple[str, float]]:
    """The ``k`` keys with the largest shares in one query ``row``, largest first (ties: earlier)."""
    order = np.argsort(-np.asarray(row, dtype=np.float64), kind="stable")[:k]
    return [(labels[i], float(row[i])) for i in order]
