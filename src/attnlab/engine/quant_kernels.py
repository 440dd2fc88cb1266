"""The numba-compiled loops of :mod:`attnlab.engine.quant` (imported on first use: numba is slow to import).

Each function takes a format code (``Q4_1`` = 0, ``Q8_0`` = 1) and stored rows
``blocks`` (rows, bytes per row) uint8, C-contiguous and read-only; float32
arrays are C-contiguous. The per-block arithmetic is LLVM IR written in
:mod:`attnlab.engine.quant_ir`, which also fixes each dot product's order.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.compiled import _NO_TRANS, _TRANS, _jit, _sgemm
from attnlab.engine.quant_ir import dot_q4_1, dot_q8_0, values_q4_1, values_q8_0


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
