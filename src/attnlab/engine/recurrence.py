"""Causal linear attention two ways: a masked matrix and a recurrence (Katharopoulos et al., 2020).

Softmax attention's weight exp(q·k) is replaced by a product of features,
φ(q)·φ(k), so the sum over the past factors through a fixed-size state:

    matrix:      A = (φ(Q) φ(K)^T) ⊙ causal          (n, n), lower triangular
                 O = (A V) / rowsum(A)               (n, d_v)
    recurrence:  S_t = S_{t-1} + φ(k_t) v_t^T        (d, d_v), the state
                 z_t = z_{t-1} + φ(k_t)              (d,)
                 o_t = S_t^T φ(q_t) / (z_t · φ(q_t))

The two are the same numbers up to rounding (the sums are taken in another
order): the matrix costs O(n² d) and holds n × n weights; the recurrence costs
O(n d d_v) and holds one d × d_v state however long the sequence. Features:
``"elu+1"`` (φ(x) = elu(x) + 1 > 0, the paper's, so every denominator is
positive) or ``"identity"`` (φ(x) = x; then ``normalize=False``: o_t = S_t^T q_t,
attention as a fast-weight memory). Shapes: q, k (n, d), v (n, d_v), NumPy
float64; one head, no batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.engine.threads import holds_one_blas_thread

FEATURES = ("elu+1", "identity")


def feature_map(x: np.ndarray, feature: str = "elu+1") -> np.ndarray:
    """Return φ(x) elementwise: elu(x) + 1 (``"elu+1"``) or x itself (``"identity"``)."""
    if feature == "elu+1":
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # elu(x) + 1, never 0
    if feature == "identity":
        return np.asarray(x, dtype=np.float64)
    raise FieldError("feature", f"is {feature!r}; use one of {', '.join(FEATURES)}")


def _check(q, k, v, feature: str, normalize: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim != 2 or a.shape[0] < 1:
            raise FieldError(name, f"has shape {a.shape}; it must be (n, d) with n >= 1")
        if not np.all(np.isfinite(a)):
            raise FieldError(name, "holds NaN or infinity; every number must be finite")
    if k.shape != q.shape:
        raise FieldError("k", f"has shape {k.shape}; it must match q's {q.shape}")
    if v.shape[0] != q.shape[0]:
        raise FieldError("v", f"has {v.shape[0]} rows; q has {q.shape[0]}")
    if normalize and feature == "identity":
        raise FieldError("normalize", "needs positive features: use feature 'elu+1' or normalize=False")
    feature_map(q[:0], feature)  # refuses an unknown feature
    return q, k, v


@dataclass(frozen=True, eq=False)
class LinearMatrix:
    """The matrix form: ``weights`` (n, n), lower triangular (rows sum to 1 when normalised);
    ``output`` (n, d_v)."""

    weights: np.ndarray
    output: np.ndarray


@dataclass(frozen=True, eq=False)
class LinearRecurrence:
    """The recurrent form: ``states`` (n, d, d_v) S_t, ``sums`` (n, d) z_t, ``output`` (n, d_v)."""

    states: np.ndarray
    sums: np.ndarray
    output: np.ndarray


@holds_one_blas_thread
def linear_attention_matrix(q, k, v, *, feature: str = "elu+1", normalize: bool = True) -> LinearMatrix:
    """Causal linear attention as one masked (n, n) matrix (see the module docstring)."""
    q, k, v = _check(q, k, v, feature, normalize)
    n = q.shape[0]
    phi_q, phi_k = feature_map(q, feature), feature_map(k, feature)  # (n, d) each
    a = (phi_q @ phi_k.T) * np.tri(n)  # (n, n), zero above the diagonal
    if normalize:
        a = a / a.sum(axis=1, keepdims=True)  # each row sums to 1
    return LinearMatrix(weights=a, output=a @ v)  # (n, d_v)


@holds_one_blas_thread
def linear_attention_recurrent(
    q, k, v, *, feature: str = "elu+1", normalize: bool = True
) -> LinearRecurrence:
    """Causal linear attention as a recurrence over a (d, d_v) state (see the module docstring)."""
    q, k, v = _check(q, k, v, feature, normalize)
    n, d = q.shape
    d_v = v.shape[1]
    phi_q, phi_k = feature_map(q, feature), feature_map(k, feature)
    s = np.zeros((d, d_v))  # S_0
    z = np.zeros(d)  # z_0
    states, sums, out = np.empty((n, d, d_v)), np.empty((n, d)), np.empty((n, d_v))
    for t in range(n):
        s = s + np.outer(phi_k[t], v[t])  # 1) write: S_t = S_{t-1} + φ(k_t) v_t^T
        z = z + phi_k[t]
        o = s.T @ phi_q[t]  # 2) read: S_t^T φ(q_t), (d_v,)
        out[t] = o / (z @ phi_q[t]) if normalize else o
        states[t], sums[t] = s, z
    return LinearRecurrence(states=states, sums=sums, output=out)


def multiply_adds(n: int, d: int, d_v: int) -> dict[str, int]:
    """Multiply-adds each form performs for n tokens (normalisation left out of both).

    ``matrix``: φ(q_i)·φ(k_j) and the weighted sum of values over the n(n+1)/2
    allowed pairs, (d + d_v) each; ``recurrence``: per token, the outer product
    written into the state and the state read by φ(q_t), d·d_v each.
    """
    return {"matrix": n * (n + 1) // 2 * (d + d_v), "recurrence": n * 2 * d * d_v}
