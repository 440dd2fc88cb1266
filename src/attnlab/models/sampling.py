"""Choose the next token from a row of logits: greedy, or sampled.

Sampling follows the usual order (as in Hugging Face ``generate``):
divide the logits by the temperature, keep the ``top_k`` largest, keep the
smallest set of those whose shares add up to at least ``top_p``, renormalise,
draw. ``temperature == 0`` means greedy (the arg-max; ties go to the lowest id).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, kw_only=True)
class Sampling:
    """How to pick tokens. ``temperature=0`` is greedy; ``seed`` makes draws repeatable."""

    temperature: float = 0.0
    top_k: int | None = None  # None or 0: no cut
    top_p: float = 1.0  # 1.0: no cut
    seed: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.temperature, (int, float)) or not math.isfinite(self.temperature):
            raise ValueError(f"temperature must be a finite number, got {self.temperature!r}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k is not None and (
            isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0
        ):
            raise ValueError(f"top_k must be a whole number >= 0, got {self.top_k!r}")
        if not isinstance(self.top_p, (int, float)) or not (0.0 < self.top_p <= 1.0):
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)


def shares(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """The probabilities ``sampling`` draws from, shape ``(V,)`` float64, zeros outside the cut."""
    z = np.asarray(logits, dtype=np.float64) / sampling.temperature
    keep = np.ones(z.shape, dtype=bool)
    if sampling.top_k:
        k = min(sampling.top_k, z.size)
        kth = np.partition(z, -k)[-k]
        keep &= z >= kth
    z = np.where(keep, z, -np.inf)
    p = np.exp(z - z.max())
    p /= p.sum()
    if sampling.top_p < 1.0:
        # rank by the logits, not the shares: shares that round equal must keep the logits' order
        order = np.argsort(-z, kind="stable")
        cumulative = np.cumsum(p[order])
        # keep every token whose preceding mass is still below top_p (the first always stays)
        cut = np.empty_like(keep)
        cut[order] = (cumulative - p[order]) < sampling.top_p
        p = np.where(cut, p, 0.0)
        p /= p.sum()
    return p


def pick(logits: np.ndarray, sampling: Sampling, rng: np.random.Generator) -> int:
    """The next token id for one row of ``logits`` (shape ``(V,)``)."""
    if sampling.greedy:
        return int(np.argmax(logits))
    p = shares(logits, sampling)
    return int(rng.choice(p.size, p=p))
