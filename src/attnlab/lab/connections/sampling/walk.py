"""The sampling lab's numbers: the next-token softmax at a temperature, its limits, and attention's √d_k.

The logits are the k largest of a row: seeded random ones (``numpy.random.default_rng(seed)``,
:data:`MAX_K` draws of N(0, 2²), sorted largest first), or SmolLM2's next-token logits after
the learner's text (the largest :data:`MAX_K`, recorded by ``models.labs.logits``; float32
values, exactly). At temperature T the shares are ``softmax(logits / T)`` over the k
candidates, in float64 with the largest subtracted first: exactly what sampling with
top-k = k draws from at temperature T (dividing by T > 0 keeps the order, so the same k
survive). As T → 0 they tend to the argmax (the largest logit gets everything; tied largest
logits split it evenly); as T → ∞ to uniform, 1/k each. Attention's softmax(q·k / √d_k) is
this with T = √d_k on the dot products.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_K = 50  # candidates at most: the largest logits recorded
T_MIN, T_MAX, T_STEP = 0.05, 10.0, 0.05  # the temperature slider
SPREAD = 2.0  # the random logits' standard deviation
SWEEP = [round(10.0 ** (e / 4), 6) for e in range(-8, 9)]  # T from 0.01 to 100, 4 steps a decade


def shares(logits: np.ndarray, t: float) -> np.ndarray:
    """softmax(logits / t), float64, the largest subtracted first."""
    z = np.asarray(logits, dtype=np.float64) / t
    e = np.exp(z - z.max())
    return e / e.sum()


def entropy(p: np.ndarray) -> float:
    """-Σ p ln p in nats, 0 · ln 0 taken as 0."""
    nz = p[p > 0]
    return float(-(nz * np.log(nz)).sum())


def argmax_limit(logits: np.ndarray) -> np.ndarray:
    """The T → 0 limit: the largest logit's share 1 (ties: split evenly), the rest 0."""
    top = logits == logits.max()
    return top / top.sum()


def random_logits(seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).normal(0.0, SPREAD, MAX_K))[::-1]


@dataclass(frozen=True, eq=False)
class SamplingWalk:
    source: str  # "random" or "smollm2"
    k: int
    temperature: float
    logits: np.ndarray  # (k,) largest first
    labels: list[str]
    p_model: list[float] | None = None  # SmolLM2: each candidate's share of the whole vocabulary at T = 1
    vocab: int = 0
    context: list[str] | None = None  # SmolLM2: the text's tokens

    def p(self, t: float | None = None) -> np.ndarray:
        return shares(self.logits, self.temperature if t is None else t)

    def sweep(self) -> list[float]:
        return sorted(set(SWEEP) | {self.temperature})

    def top_share(self, t: float | None = None) -> float:
        return float(self.p(t).max())

    def spread(self, t: float | None = None) -> float:
        return entropy(self.p(t))

    @property
    def argmax(self) -> np.ndarray:
        return argmax_limit(self.logits)

    @property
    def uniform(self) -> float:
        return 1.0 / self.k

    def from_argmax(self, t: float) -> float:
        """The largest |share - its argmax limit| at temperature t."""
        return float(np.abs(self.p(t) - self.argmax).max())

    def from_uniform(self, t: float) -> float:
        """The largest |share - 1/k| at temperature t."""
        return float(np.abs(self.p(t) - self.uniform).max())

    @property
    def d_k(self) -> float:
        """The head size whose √d_k is this temperature."""
        return self.temperature**2

    @property
    def coverage(self) -> float | None:
        """SmolLM2: the share of its whole distribution (T = 1) the k candidates hold."""
        return None if self.p_model is None else math.fsum(self.p_model[: self.k])


def walk(values: dict, recorded: dict | None) -> SamplingWalk | None:
    """The walk for ``values``; ``recorded``: SmolLM2's logits (``None``: not in, and source is SmolLM2)."""
    k, t = values["k"], values["temperature"]
    if values["source"] == "random":
        logits = random_logits(values["seed"])[:k]
        return SamplingWalk("random", k, t, logits, [f"#{i + 1}" for i in range(k)])
    if recorded is None:
        return None
    return SamplingWalk(
        "smollm2",
        k,
        t,
        np.asarray(recorded["logits"][:k], dtype=np.float64),
        list(recorded["tokens"][:k]),
        p_model=list(recorded["p_model"]),
        vocab=recorded["vocab"],
        context=list(recorded["context"]),
    )
