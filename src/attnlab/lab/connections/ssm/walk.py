"""The state-space lab's numbers: causal linear attention two ways, a selective scan and its
matrix, a copy task.

Inputs are seeded: ``rng = numpy.random.default_rng(seed)``, then
``q, k, v = rng.standard_normal((3, n, D))`` (D = 4) for linear attention and
``x = rng.standard_normal(n)`` for the scan, whose parameters are fixed
(:data:`SSM`, N = 4 state entries). The copy task stores ``L`` tokens (one-hot
values over :data:`VOCAB` symbols, drawn from ``numpy.random.default_rng(seed + 1)``)
under keys of ``d`` numbers (the first ``d`` keys orthonormal, later ones random
unit vectors), then asks for each token back with its own key: linear attention
reads the state S = Σ k_i v_i^T (identity features, no normalisation), softmax
attention reads with scale :data:`SHARP`. A token counts as copied when the
largest coordinate of the answer is the token's own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.attention import attention
from attnlab.engine.recurrence import (
    LinearMatrix,
    LinearRecurrence,
    linear_attention_matrix,
    linear_attention_recurrent,
    multiply_adds,
)
from attnlab.engine.scan import ScanResult, SelectiveSSM, scan_matrix, selective_scan

D = 4  # d_k = d_v of the linear attention shown
SSM = SelectiveSSM(
    rates=(0.25, 0.5, 1.0, 2.0), b=(1.0, 1.0, 1.0, 1.0), c=(0.5, -0.25, 1.0, 0.75), w=2.0, beta=-0.5
)
EQUAL = (
    1e-12  # two forms "give the same numbers": the largest difference over the largest |output|, at most this
)
VOCAB = 8  # the copy task's symbols
SHARP = 20.0  # softmax attention's scale in the copy task
MAX_COPY = 32  # copy lengths 1 to this are drawn


@dataclass(frozen=True, eq=False)
class CopyTask:
    """For each length L (1..MAX_COPY): how many of the L tokens each reader gets right, and
    linear attention's largest error."""

    lengths: list[int]
    linear_right: list[int]
    softmax_right: list[int]
    linear_error: list[float]

    def exact_up_to(self) -> int:
        """The longest L up to which linear attention copies every token exactly (error at most EQUAL)."""
        best = 0
        for L, right, err in zip(self.lengths, self.linear_right, self.linear_error):
            if right == L and err <= EQUAL:
                best = L
            else:
                break
        return best


def copy_keys(d: int, seed: int) -> tuple[np.ndarray, list[int]]:
    """MAX_COPY keys of d numbers (the first d orthonormal) and the tokens stored under them."""
    rng = np.random.default_rng(seed + 1)
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))  # (d, d), orthonormal columns
    extra = rng.standard_normal((max(0, MAX_COPY - d), d))
    extra = extra / np.linalg.norm(extra, axis=1, keepdims=True)  # random unit keys
    keys = np.concatenate([basis.T, extra])[:MAX_COPY]  # (MAX_COPY, d)
    tokens = [int(t) for t in rng.integers(0, VOCAB, MAX_COPY)]
    return keys, tokens


def copy_task(d: int, seed: int) -> CopyTask:
    keys, tokens = copy_keys(d, seed)
    lengths, lin_right, soft_right, lin_err = [], [], [], []
    for L in range(1, MAX_COPY + 1):
        k = keys[:L]
        values = np.eye(VOCAB)[tokens[:L]]  # (L, VOCAB) one-hot
        state = linear_attention_recurrent(k, k, values, feature="identity", normalize=False).states[-1]
        linear = k @ state  # (L, VOCAB): each key asks the final state for its token
        soft = attention(k, k, values, scale=SHARP).output  # (L, VOCAB)
        lengths.append(L)
        lin_right.append(int(np.sum(np.argmax(linear, axis=1) == tokens[:L])))
        soft_right.append(int(np.sum(np.argmax(soft, axis=1) == tokens[:L])))
        lin_err.append(float(np.max(np.abs(linear - values))))
    return CopyTask(lengths=lengths, linear_right=lin_right, softmax_right=soft_right, linear_error=lin_err)


@dataclass(frozen=True, eq=False)
class SSMWalk:
    n: int
    step: int
    d: int
    seed: int
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    x: np.ndarray
    matrix: LinearMatrix
    recurrence: LinearRecurrence
    scan: ScanResult
    dual: np.ndarray  # (n, n): the scan's M
    copy: CopyTask

    def linear_difference(self) -> float:
        top = float(np.max(np.abs(self.matrix.output)))
        return float(np.max(np.abs(self.matrix.output - self.recurrence.output))) / top

    def scan_difference(self) -> float:
        top = max(float(np.max(np.abs(self.scan.output))), 1e-300)
        return float(np.max(np.abs(self.dual @ self.x - self.scan.output))) / top

    def costs(self) -> dict[str, int]:
        return multiply_adds(self.n, D, D)


def walk(*, n: int, step: int, d: int, seed: int) -> SSMWalk:
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((3, n, D))
    x = rng.standard_normal(n)
    return SSMWalk(
        n=n,
        step=step,
        d=d,
        seed=seed,
        q=q,
        k=k,
        v=v,
        x=x,
        matrix=linear_attention_matrix(q, k, v),
        recurrence=linear_attention_recurrent(q, k, v),
        scan=selective_scan(x, SSM),
        dual=scan_matrix(x, SSM),
        copy=copy_task(d, seed),
    )
