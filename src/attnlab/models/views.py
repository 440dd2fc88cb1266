"""The model view: every layer's and head's attention as small thumbnails, with what each head does.

A thumbnail of a head's weights ``(T, T)`` is ``size x size`` with
``size = min(T, THUMB)``: the tokens are cut into ``size`` runs as even as
possible (``bins[r] = [start, end)``), and cell ``(r, c)`` is the *largest*
share any query of run r gives any key of run c (a maximum, not a mean, so a
sharp pattern such as the previous-token diagonal stays visible). ``None``
where every pair in the block is blocked (a causal model's upper corner).
"""

from __future__ import annotations

import numpy as np

from attnlab.models.heads import KIND_WORDS, SHORT, head_profile

THUMB = 32


def bins(n_tokens: int, size: int) -> list[list[int]]:
    """``size`` runs ``[start, end)`` covering tokens 0..n_tokens-1, as even as possible."""
    edges = [(r * n_tokens) // size for r in range(size + 1)]
    return [[edges[r], edges[r + 1]] for r in range(size)]


def thumbnails(weights: np.ndarray, allowed: np.ndarray, size: int) -> np.ndarray:
    """Block maxima of ``weights`` (..., T, T) on a ``size x size`` grid; NaN where all blocked."""
    n = weights.shape[-1]
    starts = np.array([b[0] for b in bins(n, size)])
    w = np.where(allowed, weights, -np.inf)
    rows = np.maximum.reduceat(w, starts, axis=-2)
    cells = np.maximum.reduceat(rows, starts, axis=-1).astype(np.float64)
    return np.where(np.isneginf(cells), np.nan, cells)


def model_view(trace) -> dict:
    """JSON-ready: every head's thumbnail, kind and scores (layer-major), and the runs of tokens."""
    n = len(trace.tokens)
    size = min(n, THUMB)
    cells = thumbnails(trace.weights, trace.allowed, size)  # (L, H, size, size)
    heads = []
    for layer in range(trace.n_layer):
        for h in range(trace.n_head):
            p = head_profile(trace.weights[layer, h], trace.allowed)
            thumb = [[None if np.isnan(x) else round(float(x), 4) for x in row] for row in cells[layer, h]]
            heads.append(
                {
                    "layer": layer,
                    "head": h,
                    "kv_head": trace.kv_head(h),
                    **p,
                    "label": f"L{layer} H{h} · {SHORT[p['kind']]}",
                    "thumb": thumb,
                }
            )
    return {
        "n_layer": trace.n_layer,
        "n_head": trace.n_head,
        "n_tokens": n,
        "size": size,
        "bins": bins(n, size),
        "kinds": dict(KIND_WORDS),
        "heads": heads,
    }
