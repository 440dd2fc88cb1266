"""The dilution lab's numbers: one query's weights over more and more random keys, with and without √d_k.

Inputs are seeded: ``rng = numpy.random.default_rng(seed)``, then ``q =
rng.standard_normal(d_k)`` and ``K = rng.standard_normal((MAX_KEYS, d_k))``;
n keys are the first n rows of K. For each n the weights are one attention
row (``engine.attention``) with scale 1/√d_k (on) or 1 (off). The largest
share says how much one key can win; the entropy -Σ w ln w (nats) how spread
the row is, at most ln n when every key gets 1/n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.attention import attention

MAX_KEYS = 4096
SWEEP = [2**e for e in range(1, 13)]  # 2 to 4,096 keys


def weights(q: np.ndarray, keys: np.ndarray, scaled: bool) -> np.ndarray:
    """One attention row of q over ``keys`` (values are not needed: zeros)."""
    scale = None if scaled else 1.0
    return attention(q[None, :], keys, np.zeros((keys.shape[0], 1)), scale=scale).weights[0]


def entropy(w: np.ndarray) -> float:
    """-Σ w ln w in nats, 0 · ln 0 taken as 0."""
    nz = w[w > 0]
    return float(-(nz * np.log(nz)).sum())


@dataclass(frozen=True, eq=False)
class DilutionWalk:
    keys: int
    d_k: int
    scaling: str
    seed: int
    q: np.ndarray
    k: np.ndarray

    @property
    def scaled(self) -> bool:
        return self.scaling == "on"

    def row(self, n: int, scaled: bool | None = None) -> np.ndarray:
        return weights(self.q, self.k[:n], self.scaled if scaled is None else scaled)

    def largest(self, n: int, scaled: bool | None = None) -> float:
        return float(self.row(n, scaled).max())

    def spread(self, n: int, scaled: bool | None = None) -> float:
        return entropy(self.row(n, scaled))

    def largest_by_n(self, scaled: bool | None = None) -> np.ndarray:
        """The largest share for every n from 1 to MAX_KEYS, (MAX_KEYS,): ``[n - 1]`` is n keys'.

        From the running maximum and the running log-sum-exp of the scores, in one pass: the same
        numbers as :meth:`largest` up to float rounding (about 1e-15), for a question about every n.
        """
        on = self.scaled if scaled is None else scaled
        s = (self.k @ self.q) * (1 / math.sqrt(self.d_k) if on else 1.0)  # (MAX_KEYS,)
        return np.exp(np.maximum.accumulate(s) - np.logaddexp.accumulate(s))

    def sweep(self) -> list[int]:
        return sorted(set(SWEEP) | {self.keys})


def walk(*, keys: int, d_k: int, scaling: str, seed: int) -> DilutionWalk:
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(d_k)
    k = rng.standard_normal((MAX_KEYS, d_k))
    return DilutionWalk(keys=keys, d_k=d_k, scaling=scaling, seed=seed, q=q, k=k)
