"""The numba-compiled loops of :mod:`attnlab.engine.quant` (imported on first use: numba is slow to import).

Each function takes a format code (``Q4_1`` = 0, ``Q8_0`` = 1) and stored rows
``blocks`` (rows, bytes per row) uint8, C-contiguous and read-only; float32
arrays are C-contiguous. The per-block arithmetic is LLVM IR written in
:mod:`attnlab.engine.quant_ir`, which also fixes each dot product's order.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.compiled import _NO_TRANS, _TRANS, _jit, _sgemm
from attnlab.engine.quant_ir import (
    dot_q4_1,
    dot_q8_0,
    dots1_q4_1,
    dots1_q8_0,
    dots2_q4_1,
    dots2_q8_0,
    dots4_q4_1,
    dots4_q8_0,
    dots8_q4_1,
    dots8_q8_0,
    values_q4_1,
    values_q8_0,
)


@_jit(error_model="numpy")
def matvec_parts(fmt, starts, rows, stride, x, out):
    """``out[o] = values(stored row o) . x`` (quant_ir's fixed order) over parts side by side:
    part p's ``rows[p]`` stored rows begin at address ``starts[p]``, ``stride`` bytes apart."""
    n_blocks = x.shape[0] // 32
    x_at = np.int64(x.ctypes.data)
    o = 0
    for p in range(starts.shape[0]):
        base = starts[p]
        for r in range(rows[p]):
            if fmt == 0:
                out[o] = dot_q4_1(base + r * stride, x_at, n_blocks)
            else:
                out[o] = dot_q8_0(base + r * stride, x_at, n_blocks)
            o += 1


@_jit(error_model="numpy")
def fill(fmt, blocks, rows, out):
    """``out[i] = values(stored row rows[i])`` (float32, C-contiguous (len(rows), n_in))."""
    n_in = out.shape[1]
    n_blocks = n_in // 32
    base, stride = np.int64(blocks.ctypes.data), np.int64(blocks.strides[0])
    out_at = np.int64(out.ctypes.data)
    for i in range(rows.shape[0]):
        at = base + rows[i] * stride
        if fmt == 0:
            values_q4_1(at, out_at + i * n_in * 4, n_blocks)
        else:
            values_q8_0(at, out_at + i * n_in * 4, n_blocks)


@_jit(error_model="numpy")
def panel(fn, fmt, blocks, r0, r1, x, out, col, scratch):
    """``out[:, col:col + r1 - r0] = x @ values(stored rows r0..r1)^T``: the values, then one sgemm.

    ``fn``: address of cblas_sgemm; x (T, n_in) and out (T, N) float32 C-contiguous;
    scratch holds at least (r1 - r0) * n_in float32.
    """
    n_t, n_in = x.shape
    n_blocks = n_in // 32
    base, stride = np.int64(blocks.ctypes.data), np.int64(blocks.strides[0])
    s_at = np.int64(scratch.ctypes.data)
    for r in range(r0, r1):
        at, dst = base + r * stride, s_at + (r - r0) * n_in * 4
        if fmt == 0:
            values_q4_1(at, dst, n_blocks)
        else:
            values_q8_0(at, dst, n_blocks)
    out_at = np.int64(out.ctypes.data) + col * 4
    _sgemm(fn, _NO_TRANS, _TRANS, n_t, r1 - r0, n_in, np.float32(1.0), np.int64(x.ctypes.data), n_in,
           s_at, n_in, np.float32(0.0), out_at, out.shape[1])  # fmt: skip


@_jit(error_model="numpy")
def row_dots(fmt, at, n_blocks, x_at, x_stride, n_t, out_at, out_stride):
    """The stored row at address ``at`` dotted with ``n_t`` rows of x (``x_stride`` bytes apart),
    written to ``out_at + t * out_stride``: each block's values made once for up to 8 rows, each sum
    in the same order as a one-row product (the same bits)."""
    t = 0
    while t < n_t:
        xa, oa = x_at + t * x_stride, out_at + t * out_stride
        left = n_t - t
        if fmt == 0:
            if left >= 8:
                dots8_q4_1(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 8
            elif left >= 4:
                dots4_q4_1(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 4
            elif left >= 2:
                dots2_q4_1(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 2
            else:
                dots1_q4_1(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 1
        else:
            if left >= 8:
                dots8_q8_0(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 8
            elif left >= 4:
                dots4_q8_0(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 4
            elif left >= 2:
                dots2_q8_0(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 2
            else:
                dots1_q8_0(at, xa, n_blocks, x_stride, oa, out_stride)
                t += 1


@_jit(error_model="numpy")
def matmul_parts(fmt, starts, rows, stride, x, out, o0, o1):
    """``out[t, o] = values(stored row o) . x[t]`` for rows o0 <= o < o1 counted over the parts (as
    :func:`matvec_parts`), by :func:`row_dots`. x (T, n_in), out (T, N) float32 C order."""
    n_t, n_in = x.shape
    x_at, out_at = np.int64(x.ctypes.data), np.int64(out.ctypes.data)
    xs, os_ = np.int64(n_in * 4), np.int64(out.shape[1] * 4)
    p, first = 0, 0
    for o in range(o0, o1):
        while o - first >= rows[p]:
            first += rows[p]
            p += 1
        row_dots(fmt, starts[p] + (o - first) * stride, n_in // 32, x_at, xs, n_t, out_at + o * 4, os_)
