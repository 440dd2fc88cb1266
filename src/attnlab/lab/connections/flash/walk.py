"""FlashAttention's numbers for one input: a query block walked tile by tile under the causal mask,
plain causal attention, a causal sliding window.

Inputs are seeded: ``q, k, v = numpy.random.default_rng(seed).standard_normal((3, n, D))``
(d_k = d_v = D = 4, float64), so a link and the generated program rebuild them
exactly. Everything here is causal, top-left aligned (query i may see keys 0..i), as in
a decoder, so every comparison is causal against causal: the walk (the engine's
``tiled_steps`` with ``causal="top_left"``) against plain causal attention (the whole
matrix, masked), and the window against plain causal attention. Query blocks and key
tiles are both ``tile`` positions wide (FlashAttention-2's block_q = block_k); the
walked block is the one holding ``row``; it walks the key tiles up to the one holding
its last row, and skips the rest: every key in them comes after every row of the
block. ``keys`` (1 to n) says how far the walk has gone: the state shown is after the
key tile holding key ``keys - 1``, or after the block's last tile when that comes
first. The sliding window keeps ``window`` keys per query (``engine.window``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine.attention import AttentionResult, attention
from attnlab.engine.tiled import TileStep, tiled_steps
from attnlab.engine.window import sliding_window_mask

D = 4  # d_k = d_v
EXACT = 1e-15  # "equal to full attention": the largest difference over the largest |value|, at most this
UNCHANGED = 1e-12  # a row whose output moves by no more than this is unchanged by the window
PAGE_N = 100_000  # the page's own figure: n = 100,000
BYTES_16 = 2  # a 16-bit number


def inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The seeded q, k, v, each (n, D)."""
    q, k, v = np.random.default_rng(seed).standard_normal((3, n, D))
    return q, k, v


@dataclass(frozen=True, eq=False)
class FlashWalk:
    n: int
    tile: int
    row: int
    keys: int
    window: int
    seed: int
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    block: tuple[int, int]  # the walked query block's rows [start, stop)
    steps: list[TileStep]  # after each key tile the block walks (the causal mask skips the rest)
    causal: AttentionResult  # plain causal attention: the whole (n, n) matrix of weights, masked
    windowed: AttentionResult

    @property
    def full(self) -> AttentionResult:
        """What the walk equals: plain (untiled) attention under the same causal mask."""
        return self.causal

    @property
    def tiles(self) -> int:
        """How many key tiles the walked block walks (the causal mask skips those after its last row)."""
        return len(self.steps)

    @property
    def all_tiles(self) -> int:
        """How many key tiles the keys make: ceil(n / tile)."""
        return -(-self.n // self.tile)

    @property
    def skipped(self) -> int:
        """Key tiles the causal mask skips for the walked block: every key in them is after its rows."""
        return self.all_tiles - self.tiles

    @property
    def shown(self) -> int:
        """The index of the key tile the walk has just finished (0-based)."""
        return min((self.keys - 1) // self.tile, self.tiles - 1)

    @property
    def masked_in_tile(self) -> list[int]:
        """The keys of the shown tile that come after the walked row: masked for it (``[start, stop)``,
        empty when none)."""
        step = self.steps[self.shown]
        return [self.row + 1, step.k_stop] if step.k_stop > self.row + 1 else []

    @property
    def r(self) -> int:
        """The walked row's place in its block."""
        return self.row - self.block[0]

    def m(self, t: int) -> float:
        return float(self.steps[t].m[self.r])

    def l(self, t: int) -> float:  # noqa: E743 - the paper's name
        return float(self.steps[t].l[self.r])

    def so_far(self, t: int) -> list[float]:
        """The walked row's output after tile t: acc / l."""
        return [float(x) for x in self.steps[t].acc[self.r] / self.steps[t].l[self.r]]

    def factor(self, t: int) -> float:
        """The rescaling factor e^(m_before - m_after) applied at tile t (0 at the first tile:
        nothing came before)."""
        return 0.0 if t == 0 else math.exp(self.m(t - 1) - self.m(t))

    def tiled_block(self) -> np.ndarray:
        """The walked block's final output, acc / l after the last tile, (rows, D)."""
        last = self.steps[-1]
        return last.acc / last.l[:, None]

    def difference(self) -> float:
        """The largest |tiled - full| over the walked block, over the largest |value|."""
        i0, i1 = self.block
        return float(np.max(np.abs(self.tiled_block() - self.full.output[i0:i1])) / np.max(np.abs(self.v)))

    def identical(self) -> bool:
        i0, i1 = self.block
        return bool(np.array_equal(self.tiled_block(), self.full.output[i0:i1]))

    def tile_shares(self) -> list[float]:
        """The walked row's causal-attention weight in each key tile (0 in the tiles after the row)."""
        w = self.full.weights[self.row]
        return [float(w[j0 : j0 + self.tile].sum()) for j0 in range(0, self.n, self.tile)]

    def window_changes(self) -> list[float]:
        """Each row's largest |windowed - causal| output change."""
        return [float(x) for x in np.max(np.abs(self.windowed.output - self.causal.output), axis=1)]

    def held(self) -> int:
        """Numbers the tiled pass holds at once beside q, k, v: a tile of scores, m, l and O for its block."""
        return self.tile * self.tile + 2 * self.tile + self.tile * D


def walk(*, n: int, tile: int, row: int, keys: int, window: int, seed: int) -> FlashWalk:
    q, k, v = inputs(n, seed)
    i0 = (row // tile) * tile
    block = (i0, min(n, i0 + tile))
    # the whole causal pass (every block, as FlashAttention runs it); the walked block's steps kept
    _, every = tiled_steps(q, k, v, block_q=tile, block_k=tile, causal="top_left")
    steps = [step for step in every if step.q_start == i0]
    return FlashWalk(
        n=n,
        tile=tile,
        row=row,
        keys=keys,
        window=window,
        seed=seed,
        q=q,
        k=k,
        v=v,
        block=block,
        steps=steps,
        causal=attention(q, k, v, causal="top_left"),
        windowed=attention(q, k, v, mask=sliding_window_mask(n, window)),
    )
