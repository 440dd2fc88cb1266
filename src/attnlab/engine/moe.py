"""A mixture-of-experts router: a softmax over experts, the top k kept and renormalised.

For each token (a row of ``logits``, (n, E), from a learned linear layer x W_r):

    p      = softmax(logits)                 (E,) dense, like attention's weights over positions
    top    = the k experts with the largest p (ties: the lower index first)
    gate_e = p_e / Σ_{top} p                 for e in top, 0 for every other expert

so the kept gates sum to 1 again, and the token is sent to k experts only.
Over a batch, ``load[e]`` counts the tokens sent to expert e and
``importance[e]`` adds up p_e over the tokens (the quantity load-balancing
losses push towards uniform). NumPy float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.errors import FieldError


@dataclass(frozen=True, eq=False)
class Routing:
    """``probs`` (n, E) the dense softmax; ``top`` (n, k) expert indices, largest first;
    ``gates`` (n, E) renormalised over the top k, 0 elsewhere; ``kept`` (n,) Σ_top p before
    renormalising; ``load`` (E,) tokens per expert; ``importance`` (E,) Σ_tokens p."""

    probs: np.ndarray
    top: np.ndarray
    gates: np.ndarray
    kept: np.ndarray
    load: np.ndarray
    importance: np.ndarray


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Softmax of each row, the row maximum subtracted first."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def route(logits, k: int) -> Routing:
    """Route each row of ``logits`` (n, E) to its top ``k`` experts (see the module docstring)."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2 or 0 in logits.shape:
        raise FieldError("logits", f"has shape {logits.shape}; it must be (n, E) with n, E >= 1")
    if not np.all(np.isfinite(logits)):
        raise FieldError("logits", "holds NaN or infinity; every number must be finite")
    n, n_experts = logits.shape
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= n_experts:
        raise FieldError("k", f"is {k!r}; it must be a whole number from 1 to {n_experts}")
    probs = softmax_rows(logits)
    top = np.argsort(-probs, axis=-1, kind="stable")[:, :k]  # (n, k), ties to the lower index
    rows = np.arange(n)[:, None]
    kept = probs[rows, top].sum(axis=-1)  # (n,)
    gates = np.zeros_like(probs)
    gates[rows, top] = probs[rows, top] / kept[:, None]
    load = np.bincount(top.ravel(), minlength=n_experts)
    return Routing(probs=probs, top=top, gates=gates, kept=kept, load=load, importance=probs.sum(axis=0))
