"""Several decoding steps' products on blocks at once: each row the bits of its own one-row product.

A decoding step multiplies one row of activations by every weight (``x @ W``,
x (1, n_in)): :func:`attnlab.engine.fast.quant.product` streams the blocks once
and sums each output in quant.ir's one-row order (two 16-lane FMA chains over
the blocks, then a fixed tree). Several steps side by side (the rows a
speculative verification or a batch of requests makes) can share that stream:
:func:`product_rows` decodes each block's weights once and feeds every row's
own pair of chains from them, in the same order. So row t of ``product_rows(x,
W)`` is ``product(x[t:t+1], W)`` bit for bit, whatever the other rows, and the
weights are read once for all of them (a prompt's tiles, which sum each output
in one chain over k, round differently: they are not used here).

Work is shared among our threads by output columns, in pieces fixed by the
matrix's shape: every output is one dot product on one thread in one order.
Needs the compiled kernels (:func:`attnlab.engine.fast.quant.kernel`); the first
call compiles and checks itself against the one-row product, and where that
fails (:func:`reason` says why) each row is the one-row product itself.
"""

from __future__ import annotations

import threading

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from attnlab.engine.fast.compiled import _jit
from attnlab.engine.fast.formats import BLOCK, BLOCK_BYTES, Q4_1, Q8_0
from attnlab.engine.fast.quant import QuantMatrix, _read_only, _require, product
from attnlab.engine.fast.quant.ir import (
    _F32,
    _LANES,
    PREFETCH,
    _block_loop,
    _block_values,
    _fma,
    _i64,
    _load_vec,
    _prefetch,
    _tree_sum,
    _vec,
)
from attnlab.engine.fast.workers import run
from attnlab.engine.threads import CORES

WIDTH = 8  # rows of x one pass over a stored row feeds (16 accumulators of 16 lanes at 8)
_PIECE_ROWS = 256  # stored rows a thread takes at a time (a piece's outputs: one thread's)
_THREAD_WORK = 1 << 24  # multiply-adds from which a product is shared with our threads (the output layer)


def _dots_codegen(fmt: int, width: int):
    """``out[t] = values(row) . x_t`` for t < width, each in quant.ir's one-row order (``_dot_codegen``):
    the block's values made once, then for every t its own ``lo``/``hi`` FMA chains, the same steps."""

    def codegen(context, builder, signature, args):
        row, x, x_stride, n_blocks, out, out_stride = args
        step = BLOCK_BYTES[fmt]
        zero = ir.Constant(_vec(_F32), [0.0] * _LANES)
        fma = _fma(builder)
        xs = [builder.add(x, builder.mul(x_stride, _i64(t))) for t in range(width)]

        def body(b, accs):
            block = builder.add(row, builder.mul(b, _i64(step)))
            _prefetch(builder, builder.add(block, _i64(PREFETCH)))
            w_low, w_high = _block_values(builder, fmt, block)
            new = []
            for t in range(width):
                x_at = builder.add(xs[t], builder.mul(b, _i64(BLOCK * 4)))
                x_low, x_high = _load_vec(builder, x_at, _F32), _load_vec(builder, x_at, _F32, _LANES * 4)
                new.append(builder.call(fma, [w_low, x_low, accs[2 * t]]))
                new.append(builder.call(fma, [w_high, x_high, accs[2 * t + 1]]))
            return new

        final = _block_loop(builder, n_blocks, [zero] * (2 * width), body)
        for t in range(width):
            total = _tree_sum(builder, builder.fadd(final[2 * t], final[2 * t + 1]))
            at = builder.add(out, builder.mul(out_stride, _i64(t)))
            builder.store(total, builder.inttoptr(at, _F32.as_pointer()))
        return context.get_dummy_value()

    return codegen


def _dots_intrinsic(fmt: int, width: int):
    def typer(typingctx, row, x, x_stride, n_blocks, out, out_stride):
        return types.void(*(types.int64,) * 6), _dots_codegen(fmt, width)

    typer.__name__ = f"dots_{'q4_1' if fmt == Q4_1 else 'q8_0'}_{width}"
    return intrinsic(typer)


# dots_<fmt>_<w>(row, x, x_stride, n_blocks, out, out_stride): see _dots_codegen
_WIDTHS = range(1, WIDTH + 1)
q4_1_1, q4_1_2, q4_1_3, q4_1_4, q4_1_5, q4_1_6, q4_1_7, q4_1_8 = (_dots_intrinsic(Q4_1, w) for w in _WIDTHS)
q8_0_1, q8_0_2, q8_0_3, q8_0_4, q8_0_5, q8_0_6, q8_0_7, q8_0_8 = (_dots_intrinsic(Q8_0, w) for w in _WIDTHS)


@_jit(error_model="numpy")
def _dots(fmt, width, row, x, x_stride, n_blocks, out, out_stride):
    """The intrinsic for ``fmt`` and ``width`` (1 to WIDTH): numba needs each one named."""
    a = (row, x, x_stride, n_blocks, out, out_stride)
    if fmt == 0:
        if width == 1:
            q4_1_1(*a)
        elif width == 2:
            q4_1_2(*a)
        elif width == 3:
            q4_1_3(*a)
        elif width == 4:
            q4_1_4(*a)
        elif width == 5:
            q4_1_5(*a)
        elif width == 6:
            q4_1_6(*a)
        elif width == 7:
            q4_1_7(*a)
        else:
            q4_1_8(*a)
    elif width == 1:
        q8_0_1(*a)
    elif width == 2:
        q8_0_2(*a)
    elif width == 3:
        q8_0_3(*a)
    elif width == 4:
        q8_0_4(*a)
    elif width == 5:
        q8_0_5(*a)
    elif width == 6:
        q8_0_6(*a)
    elif width == 7:
        q8_0_7(*a)
    else:
        q8_0_8(*a)


@_jit(error_model="numpy")
def rows_parts(fmt, starts, rows, stride, x, out, o0, o1):
    """``out[t, o] = values(stored row o) . x[t]`` (quant.ir's one-row order) for o0 <= o < o1, counted
    over the parts side by side (part p: ``rows[p]`` stored rows from address ``starts[p]``), every t;
    x (T, n_in) and out (T, n_out) float32, C-contiguous. Rows of x go WIDTH at a time."""
    n_t, n_in = x.shape
    n_out = out.shape[1]
    n_blocks = n_in // 32
    x_at, out_at = np.int64(x.ctypes.data), np.int64(out.ctypes.data)
    first = 0
    for p in range(starts.shape[0]):
        lo, hi = max(o0, first), min(o1, first + rows[p])
        for o in range(lo, hi):
            row = starts[p] + (o - first) * stride
            t0 = 0
            while t0 < n_t:
                width = min(WIDTH, n_t - t0)
                x_t, out_t = x_at + t0 * n_in * 4, out_at + (t0 * n_out + o) * 4
                _dots(fmt, width, row, x_t, n_in * 4, n_blocks, out_t, n_out * 4)
                t0 += width
        first += rows[p]


_lock = threading.Lock()
_ready: bool | None = None
_reason = ""


def _self_check() -> None:
    """Compile, then compare odd little products with the one-row product's bits."""
    rng = np.random.default_rng(0)
    for fmt in ("Q4_1", "Q8_0"):
        per = BLOCK_BYTES[Q4_1 if fmt == "Q4_1" else Q8_0]
        blocks = rng.integers(0, 256, (13, 3 * per), dtype=np.uint8)
        scales = (rng.standard_normal((13, 3, 2)) * 0.05).astype(np.float16).view(np.uint8)
        n = 4 if fmt == "Q4_1" else 2  # d and m, or d: finite float16
        blocks.reshape(13, 3, per)[..., :n] = scales.reshape(13, 3, 4)[..., :n]
        w = QuantMatrix(fmt, blocks[:5].copy(), blocks[5:].copy())
        x = _read_only(rng.standard_normal((WIDTH + 3, w.n_in)).astype(np.float32))
        out = np.empty((x.shape[0], w.n_out), np.float32)
        rows_parts(w.code, w._at, w._rows, w.parts[0].shape[1], x, out, 0, w.n_out)
        alone = np.concatenate([product(x[t : t + 1], w) for t in range(x.shape[0])])
        if out.tobytes() != alone.tobytes():
            raise RuntimeError(f"the {fmt} rows differ from the one-row product's")


def ready() -> bool:
    """Whether the shared products compiled and passed their self-check here (see :func:`reason`)."""
    global _ready, _reason
    with _lock:
        if _ready is None:
            try:
                _self_check()
                _ready = True
            except Exception as exc:  # a failed compilation or self-check: each row alone
                _reason = f"{type(exc).__name__}: {exc}"
                _ready = False
        return _ready


def reason() -> str:
    """Why :func:`ready` is False ('' when it is not)."""
    return _reason


def product_rows(x: np.ndarray, w: QuantMatrix) -> np.ndarray:
    """``x @ w`` for x (T, n_in): float32 (T, n_out), row t the bits of ``product(x[t:t+1], w)``."""
    _require()
    x = _read_only(np.ascontiguousarray(x, dtype=np.float32))
    if x.ndim != 2 or x.shape[1] != w.n_in:
        raise ValueError(f"x has shape {x.shape}; it needs (T, {w.n_in}) for a {w.shape} matrix")
    if x.shape[0] == 1:
        return product(x, w)  # the one-row product itself
    if not ready():
        return np.concatenate([product(x[t : t + 1], w) for t in range(x.shape[0])])
    out = np.empty((x.shape[0], w.n_out), np.float32)
    stride = w.parts[0].shape[1]
    if x.shape[0] * w.n_in * w.n_out < _THREAD_WORK or CORES < 2:
        rows_parts(w.code, w._at, w._rows, stride, x, out, 0, w.n_out)
        return out
    pieces = [(o, min(w.n_out, o + _PIECE_ROWS)) for o in range(0, w.n_out, _PIECE_ROWS)]

    def piece(cols, _buffers) -> None:
        rows_parts(w.code, w._at, w._rows, stride, x, out, cols[0], cols[1])

    run(piece, pieces, min(CORES, len(pieces)))
    return out


