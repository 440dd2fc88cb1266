"""The RoPE lab's numbers: one q, k pair's score against their offset, past the training length, and
position interpolation.

Inputs are seeded: ``q, k = numpy.random.default_rng(seed).standard_normal((2, head_dim))``.
RoPE is the engine's (``engine.positions.RoPE``, the "half" pairing, frequencies
``base^(-2i/head_dim)``); a score is ``RoPE(q at i) · RoPE(k at j) / √head_dim``,
and depends on i - j only. Interpolation (``engine.interpolation``) rotates
position p as p / factor. The curves sample offsets 0 to :data:`SPAN` × the
training length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.interpolation import rotate_interpolated
from attnlab.engine.positions import RoPE

SPAN = 4  # the curves go to this many training lengths
SAMPLES = 257  # offsets drawn per curve
SHIFT = 100  # the second placement: q at SHIFT + offset, k at SHIFT


@dataclass(frozen=True, eq=False)
class RopeWalk:
    head_dim: int
    base: int
    train: int
    factor: int
    offset: int
    seed: int
    q: np.ndarray
    k: np.ndarray

    @property
    def rope(self) -> RoPE:
        return RoPE(self.head_dim, base=float(self.base))

    def score(self, i: int, j: int, factor: float = 1.0) -> float:
        """RoPE(q at i) · RoPE(k at j) / √head_dim, positions divided by ``factor``."""
        qi = rotate_interpolated(self.rope, self.q[None, :], [i], factor)[0]
        kj = rotate_interpolated(self.rope, self.k[None, :], [j], factor)[0]
        return float(qi @ kj) / math.sqrt(self.head_dim)

    def offsets(self) -> list[int]:
        top = SPAN * self.train
        return sorted({round(top * t / (SAMPLES - 1)) for t in range(SAMPLES)} | {self.offset})

    def turns(self, offset: float) -> list[float]:
        """How many whole turns each pair has rotated at ``offset``: angle / 2π."""
        return [float(offset * f / (2 * math.pi)) for f in self.rope.inverse_frequencies]


def walk(*, head_dim: int, base: str, train: int, factor: int, offset: int, seed: int) -> RopeWalk:
    q, k = np.random.default_rng(seed).standard_normal((2, int(head_dim)))
    return RopeWalk(
        head_dim=int(head_dim), base=int(base), train=train, factor=factor, offset=offset, seed=seed, q=q, k=k
    )
