"""Every block format's weights in NumPy: the readable statement the compiled kernels check themselves on.

:func:`values` restates ``gguf.quants``' float32 arithmetic for each format of
:mod:`attnlab.engine.fast.formats` (the layouts are described in
:mod:`attnlab.engine.fast.quant.ir`): the same operations, each rounded to float32
on its own, so its numbers are gguf's bit for bit (tested value by value).
:func:`valid_blocks` makes random stored rows whose every value is finite (random
quants and scale bytes, finite float16 ``d``/``m``), with a few special blocks.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.fast.formats import (
    BF16,
    BLOCK_BYTES,
    BLOCK_WEIGHTS,
    F16,
    F32,
    FORMATS,
    Q4_0,
    Q4_1,
    Q4_K,
    Q5_0,
    Q5_1,
    Q5_K,
    Q6_K,
    Q8_0,
    UnknownFormat,
)

# byte offsets of a block's float16 fields (d, and m or dmin)
HALVES = {Q4_0: (0,), Q4_1: (0, 2), Q5_0: (0,), Q5_1: (0, 2), Q8_0: (0,), Q4_K: (0, 2), Q5_K: (0, 2),
          Q6_K: (208,)}  # fmt: skip


def _code(fmt: str) -> int:
    if fmt not in FORMATS:
        raise UnknownFormat(fmt)
    return FORMATS[fmt]


def _half(b: np.ndarray, at: int) -> np.ndarray:
    """The float16 at byte ``at`` of every block (blocks, bytes), as float32 (blocks, 1)."""
    return b[:, at : at + 2].copy().view(np.float16).astype(np.float32)


def _nibbles(q: np.ndarray) -> np.ndarray:
    """16 bytes a block -> 32 nibbles: the low nibbles (weights 0..15), then the high ones (16..31)."""
    return np.concatenate([q & np.uint8(15), q >> np.uint8(4)], axis=-1)


def _fifth_bits(b: np.ndarray, at: int) -> np.ndarray:
    """The uint32 at byte ``at``: bit j for weight j (blocks, 32), 0 or 1."""
    qh = b[:, at : at + 4].copy().view("<u4")
    return ((qh >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(np.uint8)


def k_scales(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_K / Q5_K: the 12 scale bytes (blocks, 12) -> 6-bit scales and mins (blocks, 8) each."""
    s = s.astype(np.uint8)
    sc = np.concatenate([s[:, 0:4] & 63, (s[:, 8:12] & 15) | ((s[:, 0:4] >> 6) << 4)], axis=1)
    m = np.concatenate([s[:, 4:8] & 63, (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)], axis=1)
    return sc, m


def _blocks_values(code: int, b: np.ndarray) -> np.ndarray:
    """(blocks, bytes) -> (blocks, weights) float32."""
    n = b.shape[0]
    if code == F32:
        return b.copy().view(np.float32)
    if code == F16:
        return b.copy().view(np.float16).astype(np.float32)
    if code == BF16:
        return (b.copy().view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
    if code == Q8_0:
        return b[:, 2:].copy().view(np.int8).astype(np.float32) * _half(b, 0)
    if code == Q4_0:
        return _half(b, 0) * (_nibbles(b[:, 2:]).astype(np.float32) - np.float32(8))
    if code == Q4_1:
        return _half(b, 0) * _nibbles(b[:, 4:]).astype(np.float32) + _half(b, 2)
    if code == Q5_0:
        q = _nibbles(b[:, 6:]) | (_fifth_bits(b, 2) << np.uint8(4))
        return _half(b, 0) * (q.astype(np.float32) - np.float32(16))
    if code == Q5_1:
        q = _nibbles(b[:, 8:]) | (_fifth_bits(b, 4) << np.uint8(4))
        return _half(b, 0) * q.astype(np.float32) + _half(b, 2)
    if code in (Q4_K, Q5_K):
        sc, m = k_scales(b[:, 4:16])
        dl = (_half(b, 0) * sc.astype(np.float32))[:, :, None]  # (blocks, 8, 1): d * sc, rounded once
        ml = (_half(b, 2) * m.astype(np.float32))[:, :, None]
        at = 16 if code == Q4_K else 48
        pairs = b[:, at : at + 128].reshape(n, 4, 1, 32)  # sub-blocks 2c, 2c + 1: low, high nibbles
        q = np.concatenate([pairs & np.uint8(15), pairs >> np.uint8(4)], axis=2).reshape(n, 8, 32)
        if code == Q5_K:
            bits = b[:, 16:48][:, None, :] >> np.arange(8, dtype=np.uint8)[None, :, None]  # bit i: block i
            q = q | ((bits & np.uint8(1)) << np.uint8(4))
        return (dl * q.astype(np.float32) - ml).reshape(n, 256)
    assert code == Q6_K
    low = b[:, 0:128].reshape(n, 2, 1, 64)
    low = np.concatenate([low & np.uint8(15), low >> np.uint8(4)], axis=2).reshape(n, 256)
    top = b[:, 128:192].reshape(n, 2, 1, 32) >> (2 * np.arange(4, dtype=np.uint8))[None, None, :, None]
    top = (top & np.uint8(3)).reshape(n, 256)
    q = (low | (top << np.uint8(4))).astype(np.int8) - np.int8(32)
    dl = _half(b, 208) * b[:, 192:208].copy().view(np.int8).astype(np.float32)  # (blocks, 16)
    return (np.repeat(dl, 16, axis=1) * q.astype(np.float32)).reshape(n, 256)


def values(fmt: str, rows: np.ndarray) -> np.ndarray:
    """The float32 values of stored rows ``rows`` (rows, bytes) uint8 of format ``fmt``: (rows, n_in).

    A float format's rows may be any length (numbers, not blocks); a quantized format's are whole blocks.
    """
    code = _code(fmt)
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    if code in (F32, F16, BF16):
        return _blocks_values(code, rows.reshape(rows.shape[0], -1))
    blocks = rows.reshape(-1, BLOCK_BYTES[code])
    return _blocks_values(code, blocks).reshape(rows.shape[0], -1)


def valid_blocks(rng: np.random.Generator, fmt: str, rows: int, n_blocks: int, *, scale: float = 0.05,
                 special: bool = True) -> np.ndarray:  # fmt: skip
    """Stored rows (rows, n_blocks * bytes) uint8 of random blocks of ``fmt`` whose values are all finite.

    Quants and scale bytes are random (every bit pattern is valid); the float16 ``d`` (and ``m`` /
    ``dmin``) are normal(0, ``scale``); float formats hold normal(0, 1) numbers. With ``special``,
    block (0, 0) has d = m = 0 (every weight 0), block (1, 1) a subnormal d, and the last block
    negative d and m (when the rows have those blocks).
    """
    code = _code(fmt)
    per, weights = BLOCK_BYTES[code], BLOCK_WEIGHTS[code]
    if code in (F32, F16, BF16):
        numbers = rng.standard_normal((rows, n_blocks * weights)).astype(np.float32)
        if code == F32:
            return numbers.view(np.uint8)
        if code == F16:
            return numbers.astype(np.float16).view(np.uint8)
        return (numbers.view(np.uint32) >> np.uint32(16)).astype(np.uint16).view(np.uint8)
    blocks = rng.integers(0, 256, (rows, n_blocks, per), dtype=np.uint8)
    halves = HALVES[code]
    scales = (rng.standard_normal((rows, n_blocks, len(halves))) * scale).astype(np.float16)
    if special:
        scales[0, 0] = 0.0
        if rows > 1 and n_blocks > 1:
            scales[1, 1, 0] = np.float16(6e-8)  # a subnormal d
        scales[-1, -1] = -np.abs(scales[-1, -1])
    for i, at in enumerate(halves):
        blocks[..., at : at + 2] = scales[..., i : i + 1].view(np.uint8)
    return blocks.reshape(rows, n_blocks * per)
