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

from attnlab.models.errors import Refusal


@dataclass(frozen=True, kw_only=True)
class Sampling:
    """How to pick tokens. ``temperature=0`` is greedy; ``seed`` makes draws repeatable.

    A bad control is a ``FieldError`` at its name (``top_p``), its problem in the lab's words.
    """

    temperature: float = 0.0
    top_k: int | None = None  # None or 0: no cut
    top_p: float = 1.0  # 1.0: no cut
    seed: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.temperature, (int, float)) or not math.isfinite(self.temperature):
            raise Refusal(("temperature",), "not_finite", self.temperature)
        if self.temperature < 0:
            raise Refusal(("temperature",), "below_zero", self.temperature)
        if self.top_k is not None and (
            isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0
        ):
            raise Refusal(("top_k",), "not_whole", self.top_k)
        if not isinstance(self.top_p, (int, float)) or not (0.0 < self.top_p <= 1.0):
            raise Refusal(("top_p",), "not_a_share", self.top_p)
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise Refusal(("seed",), "not_whole", seed)

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def generator(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)


@dataclass(frozen=True, kw_only=True)
class Cut:
    """What each control did to one row of logits (shapes ``(V,)``, float64).

    ``p_model``: the softmax of the raw logits (temperature 1, nothing cut);
    ``p_tempered``: after the temperature alone; ``p``: what sampling draws from.
    ``after_top_k`` / ``after_top_p``: which tokens each cut left (cumulative:
    top-p works on what top-k kept). Greedy (temperature 0) puts all of ``p``
    on the arg-max (ties: the lowest id) and cuts nothing else.
    """

    p_model: np.ndarray
    p_tempered: np.ndarray
    p: np.ndarray
    after_top_k: np.ndarray
    after_top_p: np.ndarray


def _softmax(z: np.ndarray) -> np.ndarray:
    """exp(z - max) / sum, with -inf entries exactly 0 (no warning: the max is finite)."""
    finite = np.isfinite(z)
    top = z[finite].max()
    p = np.zeros(z.shape, dtype=np.float64)
    p[finite] = np.exp(z[finite] - top)
    return p / p.sum()


def cut(logits: np.ndarray, sampling: Sampling) -> Cut:
    """Apply temperature, then top-k, then top-p (Hugging Face's order) to one row of ``logits``."""
    raw = np.asarray(logits, dtype=np.float64)
    if raw.ndim != 1 or raw.size == 0:
        raise ValueError(f"logits must be one non-empty row, got shape {raw.shape}")
    if np.isnan(raw).any() or np.isposinf(raw).any() or not np.isfinite(raw).any():
        raise ValueError("logits must be finite numbers or -inf, with at least one finite")
    p_model = _softmax(raw)
    if sampling.greedy:
        p = np.zeros_like(p_model)
        p[int(np.argmax(raw))] = 1.0
        everything = np.ones(raw.shape, dtype=bool)
        return Cut(p_model=p_model, p_tempered=p_model, p=p, after_top_k=everything, after_top_p=everything)
    z = raw / sampling.temperature
    p_tempered = _softmax(z)
    keep = np.isfinite(z)
    if sampling.top_k:
        k = min(sampling.top_k, z.size)
        kth = np.partition(z, -k)[-k]
        keep &= z >= kth  # ties with the k-th all stay, as in transformers' TopKLogitsWarper
    after_top_k = keep.copy()
    p = _softmax(np.where(keep, z, -np.inf))
    if sampling.top_p < 1.0:
        # rank by the logits, not the shares: shares that round equal must keep the logits' order
        order = np.argsort(-np.where(keep, z, -np.inf), kind="stable")
        cumulative = np.cumsum(p[order])
        # keep every token whose preceding mass is still below top_p (the first always stays)
        inside = np.empty_like(keep)
        inside[order] = (cumulative - p[order]) < sampling.top_p
        keep &= inside
        p = np.where(keep, p, 0.0)
        p /= p.sum()
    return Cut(p_model=p_model, p_tempered=p_tempered, p=p, after_top_k=after_top_k, after_top_p=keep)


def shares(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """The probabilities ``sampling`` draws from, shape ``(V,)`` float64, zeros outside the cut."""
    return cut(logits, sampling).p


def pick(logits: np.ndarray, sampling: Sampling, rng: np.random.Generator) -> int:
    """The next token id for one row of ``logits`` (shape ``(V,)``)."""
    if sampling.greedy:
        return int(np.argmax(logits))
    p = shares(logits, sampling)
    return int(rng.choice(p.size, p=p))
