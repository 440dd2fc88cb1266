"""The numba-compiled loops of :mod:`attnlab.engine.fast.quant` (imported on first use: numba imports slowly).

Each function takes a format code (:mod:`attnlab.engine.fast.formats`: ``Q4_1`` = 0,
``Q8_0`` = 1, ...) and stored rows ``blocks`` (rows, bytes per row) uint8,
C-contiguous and read-only; float32 arrays are C-contiguous. The per-block
arithmetic is LLVM IR written in :mod:`attnlab.engine.fast.quant.ir`, which also
fixes each dot product's order. ``n_blocks`` counts stored blocks (a K-quant's
holds 256 weights, the others' 32).
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.fast.compiled import _jit
from attnlab.engine.fast.formats import (
    BF16,
    BLOCK_BYTES,
    BLOCK_WEIGHTS,
    F16,
    F32,
    Q4_0,
    Q4_1,
    Q4_K,
    Q5_0,
    Q5_1,
    Q5_K,
    Q6_K,
    Q8_0,
)
from attnlab.engine.fast.quant.ir import (
    TILE_ROWS,
    dot_bf16,
    dot_f16,
    dot_f32,
    dot_q4_0,
    dot_q4_1,
    dot_q4_k,
    dot_q5_0,
    dot_q5_1,
    dot_q5_k,
    dot_q6_k,
    dot_q8_0,
    load_f32,
    load_i64,
    store_f32,
    tile8,
    tile16,
    tile24,
    tile32,
    transpose8,
    values_bf16,
    values_f16,
    values_f32,
    values_q4_0,
    values_q4_1,
    values_q4_k,
    values_q5_0,
    values_q5_1,
    values_q5_k,
    values_q6_k,
    values_q8_0,
)

# per format code: bytes and weights a stored block holds (tuples: numba indexes them at run time)
BYTES = tuple(BLOCK_BYTES[code] for code in range(len(BLOCK_BYTES)))
WEIGHTS = tuple(BLOCK_WEIGHTS[code] for code in range(len(BLOCK_WEIGHTS)))


@_jit(error_model="numpy", inline="always")
def dot(fmt, row, x, n_blocks):
    """quant.ir's dot product of the stored row at address ``row`` (``n_blocks`` blocks of ``fmt``) with
    the float32 activations at address ``x``. Inlined where it is called (a decoding step's hot loop)."""
    if fmt == Q4_1:
        return dot_q4_1(row, x, n_blocks)
    if fmt == Q8_0:
        return dot_q8_0(row, x, n_blocks)
    if fmt == Q4_K:
        return dot_q4_k(row, x, n_blocks)
    if fmt == Q6_K:
        return dot_q6_k(row, x, n_blocks)
    if fmt == Q5_K:
        return dot_q5_k(row, x, n_blocks)
    if fmt == Q5_0:
        return dot_q5_0(row, x, n_blocks)
    if fmt == Q4_0:
        return dot_q4_0(row, x, n_blocks)
    if fmt == Q5_1:
        return dot_q5_1(row, x, n_blocks)
    if fmt == F16:
        return dot_f16(row, x, n_blocks)
    if fmt == BF16:
        return dot_bf16(row, x, n_blocks)
    return dot_f32(row, x, n_blocks)


@_jit(error_model="numpy")
def values(fmt, row, out, n_blocks):
    """Write the float32 values of the ``n_blocks`` stored blocks of ``fmt`` at address ``row`` to the
    address ``out`` (``n_blocks * WEIGHTS[fmt]`` float32)."""
    if fmt == Q4_1:
        values_q4_1(row, out, n_blocks)
    elif fmt == Q8_0:
        values_q8_0(row, out, n_blocks)
    elif fmt == Q4_K:
        values_q4_k(row, out, n_blocks)
    elif fmt == Q6_K:
        values_q6_k(row, out, n_blocks)
    elif fmt == Q5_K:
        values_q5_k(row, out, n_blocks)
    elif fmt == Q5_0:
        values_q5_0(row, out, n_blocks)
    elif fmt == Q4_0:
        values_q4_0(row, out, n_blocks)
    elif fmt == Q5_1:
        values_q5_1(row, out, n_blocks)
    elif fmt == F16:
        values_f16(row, out, n_blocks)
    elif fmt == BF16:
        values_bf16(row, out, n_blocks)
    elif fmt == F32:
        values_f32(row, out, n_blocks)


@_jit(error_model="numpy")
def matvec_parts(fmt, starts, rows, stride, x, out):
    """``out[o] = values(stored row o) . x`` (quant.ir's fixed order) over parts side by side:
    part p's ``rows[p]`` stored rows begin at address ``starts[p]``, ``stride`` bytes apart."""
    n_blocks = x.shape[0] // WEIGHTS[fmt]
    x_at = np.int64(x.ctypes.data)
    o = 0
    for p in range(starts.shape[0]):
        base = starts[p]
        for r in range(rows[p]):
            out[o] = dot(fmt, base + r * stride, x_at, n_blocks)
            o += 1


@_jit(error_model="numpy")
def fill(fmt, blocks, rows, out):
    """``out[i] = values(stored row rows[i])`` (float32, C-contiguous (len(rows), n_in))."""
    n_in = out.shape[1]
    n_blocks = n_in // WEIGHTS[fmt]
    base, stride = np.int64(blocks.ctypes.data), np.int64(blocks.strides[0])
    out_at = np.int64(out.ctypes.data)
    for i in range(rows.shape[0]):
        values(fmt, base + rows[i] * stride, out_at + i * n_in * 4, n_blocks)


def packed_size(n_t: int, n_in: int) -> tuple[int, int]:
    """``(floats, last tile's width)`` of x (n_t, n_in) packed by :func:`pack`."""
    full, left = divmod(n_t, 32)
    width = -(-left // 8) * 8 if left else 32
    return (full - (0 if left else 1)) * 32 * n_in + width * n_in, width


def pack(x: np.ndarray) -> tuple[np.ndarray, int]:
    """x (T, n_in) float32 as tile_rows takes it: tiles of 32 tokens, each k-major (n_in, 32), then the
    last tile zero-padded to a width of 8, 16, 24 or 32; returns (packed, last tile's width)."""
    size, width = packed_size(*x.shape)
    packed = np.empty(size, np.float32)
    pack_into(x, packed, width)
    return packed, width


@_jit(error_model="numpy")
def pack_into(x, dst, last_width):
    """Write x (T, n_in), C-contiguous, packed (see :func:`pack`) into dst[:packed size] (1-D), padding
    included: 8 x 8 blocks transposed in registers (quant.ir.transpose8; element by element took
    a third of a short prompt's time outside the products), the last block of fewer than 8 tokens
    element by element."""
    n_t, n_in = x.shape
    n_tiles = (n_t + 31) // 32
    x_at, dst_at = np.int64(x.ctypes.data), np.int64(dst.ctypes.data)
    for i in range(n_tiles):
        width = 32 if i < n_tiles - 1 else last_width
        tile_at = dst_at + i * 32 * n_in * 4
        for t0 in range(32 * i, min(n_t, 32 * i + width), 8):
            to = tile_at + (t0 - 32 * i) * 4
            if t0 + 8 <= n_t:
                for k0 in range(0, n_in, 8):
                    transpose8(x_at + (t0 * n_in + k0) * 4, n_in * 4, to + k0 * width * 4, width * 4)
                continue
            first = i * 32 * n_in + (t0 - 32 * i)  # token t0's number for k = 0 in dst
            for k in range(n_in):
                for t in range(8):  # the tokens past the last one are the tile's zero padding
                    dst[first + k * width + t] = x[t0 + t, k] if t0 + t < n_t else np.float32(0.0)


@_jit(error_model="numpy")
def tile_rows(fmt, starts_at, rows_at, stride, xp_at, n_t, last_width, n_in, o0, o1, out_at, n_out):
    """``out[t, o] = values(stored row o) . x[t]`` for o0 <= o < o1 (counted over the parts: part p's
    ``rows[p]`` rows at ``starts[p]``, both read at addresses) and t < n_t, by quant.ir's tile kernels
    (each output one FMA chain over k in order). ``xp_at``: x packed by :func:`pack`; out: float32
    (n_t, n_out) at ``out_at``."""
    scratch = np.zeros(TILE_ROWS * (n_in + 32), np.float32)
    tile_rows_with(fmt, starts_at, rows_at, stride, xp_at, n_t, last_width, n_in, o0, o1, out_at, n_out,
                   scratch)  # fmt: skip


@_jit(error_model="numpy")
def tile_rows_with(fmt, starts_at, rows_at, stride, xp_at, n_t, last_width, n_in, o0, o1, out_at, n_out,
                   scratch):  # fmt: skip
    """:func:`tile_rows` on the caller's ``scratch``: ``TILE_ROWS * (n_in + 32)`` float32, finite (zeros at
    first: a part tile's unused rows are multiplied too, never stored), kept across calls by the caller.

    The array itself, never its address: numba frees an array a compiled function made once the
    function no longer names it, so an address taken from a local array can point at memory that
    another allocation, on any thread, already holds (``tests/engine/fast/test_lifetimes.py``)."""
    s_at = np.int64(scratch.ctypes.data)
    n_blocks = n_in // WEIGHTS[fmt]
    c_at = s_at + TILE_ROWS * n_in * 4
    n_tiles = (n_t + 31) // 32
    o = o0
    while o < o1:
        nr = min(TILE_ROWS, o1 - o)
        for j in range(nr):  # 1) the rows' values, made once for every token
            values(fmt, _row_address(starts_at, rows_at, stride, o + j), s_at + j * n_in * 4, n_blocks)
        for i in range(n_tiles):  # 2) every tile of tokens against them
            width = 32 if i < n_tiles - 1 else last_width
            tile_at = xp_at + i * 32 * n_in * 4
            if width == 32:
                tile32(s_at, n_in * 4, n_in, tile_at, c_at)
            elif width == 24:
                tile24(s_at, n_in * 4, n_in, tile_at, c_at)
            elif width == 16:
                tile16(s_at, n_in * 4, n_in, tile_at, c_at)
            else:
                tile8(s_at, n_in * 4, n_in, tile_at, c_at)
            for t in range(min(width, n_t - 32 * i)):
                row_at = out_at + ((32 * i + t) * n_out + o) * 4
                for j in range(nr):
                    store_f32(row_at + 4 * j, load_f32(c_at + 4 * (j * width + t)))
        o += nr


@_jit(error_model="numpy")
def _row_address(starts_at, rows_at, stride, o):
    """The address of stored row ``o``, counted over the parts side by side (part p: ``rows[p]`` rows
    from ``starts[p]``, both arrays read at addresses)."""
    p, first = 0, 0
    while o - first >= load_i64(rows_at + 8 * p):
        first += load_i64(rows_at + 8 * p)
        p += 1
    return load_i64(starts_at + 8 * p) + (o - first) * stride
