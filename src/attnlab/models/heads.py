"""Name what an attention head does, from its weights: the patterns to spot in a real model.

For one head's weights ``w`` (T, T) (rows = queries, each summing to 1):

- *previous-token*: the mean share a query gives the token just before it
  (queries 1..T-1) is above 0.5;
- *first-token* (an "attention sink"): the mean share given to token 0 is above 0.5;
- *broad*: the mean entropy of the rows, divided by the entropy of a uniform
  row over the keys each query may see, is above 0.8;
- otherwise *focused* (most of each row on few tokens, no single rule).
"""

from __future__ import annotations

import numpy as np

KINDS = ("previous-token", "first-token", "broad", "focused")


def head_profile(weights: np.ndarray, allowed: np.ndarray) -> dict:
    """Scores and a kind for one head's ``weights`` (T, T); ``allowed`` (T, T) True = may attend."""
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[0]
    previous = float(np.mean(np.diagonal(w, offset=-1))) if n > 1 else 0.0
    first = float(np.mean(w[1:, 0])) if n > 1 else float(w[0, 0])
    seen = allowed.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(w > 0, w * np.log(w), 0.0).sum(axis=1)
        spread = np.where(seen > 1, ent / np.log(np.maximum(seen, 2)), 0.0)
    breadth = float(np.mean(spread[seen > 1])) if (seen > 1).any() else 0.0
    if previous > 0.5:
        kind = "previous-token"
    elif first > 0.5:
        kind = "first-token"
    elif breadth > 0.8:
        kind = "broad"
    else:
        kind = "focused"
    return {"kind": kind, "previous": previous, "first": first, "breadth": breadth}


def layer_profiles(trace, layer: int) -> list[dict]:
    """:func:`head_profile` for every head of ``layer`` in a ModelTrace."""
    trace.check(layer=layer)
    return [head_profile(trace.weights[layer, h], trace.allowed) for h in range(trace.n_head)]


def top_sources(row: np.ndarray, labels: list[str], k: int = 3) -> list[tuple[str, float]]:
    """The ``k`` keys with the largest shares in one query ``row``, largest first (ties: earlier)."""
    order = np.argsort(-np.asarray(row, dtype=np.float64), kind="stable")[:k]
    return [(labels[i], float(row[i])) for i in order]
