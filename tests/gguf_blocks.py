"""Random valid GGUF blocks of every format the products read, and gguf's own values of them.

The tests' own statement of where each format keeps its float16 scales (independent
of the engine's): every other byte of a block is random (every bit pattern of quants,
high bits and packed 6-bit scales is valid), the scales are finite float16, so
``gguf.quants.dequantize`` gives finite values. The test modules import this file
with ``tests/`` put on ``sys.path`` (as busy_runs).
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.fast.formats import BLOCK_BYTES, BLOCK_WEIGHTS, FORMATS

ALL = ("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K")
FLOATS = ("F32", "F16", "BF16")
# byte offsets of the float16 fields (d, then m or dmin) in a block: gguf.quants' dequantize_blocks
HALVES = {"Q4_0": (0,), "Q4_1": (0, 2), "Q5_0": (0,), "Q5_1": (0, 2), "Q8_0": (0,),
          "Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208,)}  # fmt: skip


def weights(fmt: str) -> int:
    """Weights a stored block of ``fmt`` holds (256 for a K-quant, else 32)."""
    return BLOCK_WEIGHTS[FORMATS[fmt]]


def width(fmt: str, n: int) -> int:
    """``n`` rounded up to whole blocks of ``fmt`` (a K-quant's rows are multiples of 256)."""
    return -(-n // weights(fmt)) * weights(fmt)


def random_blocks(rng, fmt: str, rows: int, n_in: int, scale: float = 0.05) -> np.ndarray:
    """Stored rows (rows, bytes) of random valid blocks, a few of them special.

    Quantized formats: random bytes, then float16 d (and m) ~ normal(0, scale); block (0, 0) has
    d = 0 (and m = 0): every weight 0; block (1, 1) a subnormal d; the last block's d (and m)
    negated. Float formats: normal(0, 1) numbers, stored.
    """
    if fmt in FLOATS:
        numbers = rng.standard_normal((rows, n_in)).astype(np.float32)
        if fmt == "F32":
            return numbers.view(np.uint8)
        if fmt == "F16":
            return numbers.astype(np.float16).view(np.uint8)
        return (numbers.view(np.uint32) >> np.uint32(16)).astype(np.uint16).view(np.uint8)
    per, n_blocks = BLOCK_BYTES[FORMATS[fmt]], n_in // weights(fmt)
    blocks = rng.integers(0, 256, (rows, n_blocks, per), dtype=np.uint8)
    offsets = HALVES[fmt]
    scales = (rng.standard_normal((rows, n_blocks, len(offsets))) * scale).astype(np.float16)
    scales[0, 0] = 0.0  # a block with d = 0 (and m = 0): every weight 0
    if rows > 1 and n_blocks > 1:
        scales[1, 1, 0] = np.float16(6e-8)  # a subnormal d
        scales[-1, -1] = -scales[-1, -1]  # negative d (and m)
    for i, at in enumerate(offsets):
        blocks[..., at : at + 2] = scales[..., i : i + 1].view(np.uint8)
    return blocks.reshape(rows, n_blocks * per)


def gguf_values(fmt: str, blocks: np.ndarray) -> np.ndarray:
    """gguf's own float32 values of stored rows (rows, bytes): (rows, n_in)."""
    from gguf.quants import GGMLQuantizationType, dequantize

    values = dequantize(np.ascontiguousarray(blocks), GGMLQuantizationType[fmt])
    return np.asarray(values, dtype=np.float32).reshape(blocks.shape[0], -1)
