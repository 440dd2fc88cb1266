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
from attnlab.engine.fast.formats import BLOCK, BLOCK_BYTES, BLOCK_WEIGHTS, FORMATS, NAMES
from attnlab.engine.fast.quant import QuantMatrix, _read_only, _require, product
from attnlab.engine.fast.quant.ir import (
    _F32,
    _I64,
    _LANES,
    _block_loop,
    _fma,
    _i64,
    _load_vec,
    _prefetch_block,
    _tree_sum,
    _values,
    _vec,
)
from attnlab.engine.fast.quant.kernels import WEIGHTS
from attnlab.engine.fast.quant.reference import valid_blocks
from attnlab.engine.fast.workers import run
from attnlab.engine.threads import CORES

WIDTH = 8  # rows of x one pass over a stored row feeds (16 accumulators of 16 lanes at 8)
_PIECE_ROWS = 256  # stored rows a thread takes at a time (a piece's outputs: one thread's)
_THREAD_WORK = 1 << 24  # multiply-adds from which a product is shared with our threads (the output layer)


def _dots_body(builder: ir.IRBuilder, fmt: int, width: int, args) -> None:
    """``out[t] = values(row) . x_t`` for t < width, each in quant.ir's one-row order (``_dot_codegen``):
    each block's values made once, then for every t its own ``lo``/``hi`` FMA chains, the same steps."""
    row, x, x_stride, n_blocks, out, out_stride = args
    step = BLOCK_BYTES[fmt]
    zero = ir.Constant(_vec(_F32), [0.0] * _LANES)
    fma = _fma(builder)
    xs = [builder.add(x, builder.mul(x_stride, _i64(t))) for t in range(width)]

    def body(b, accs):
        block = builder.add(row, builder.mul(b, _i64(step)))
        _prefetch_block(builder, fmt, block)
        accs = list(accs)
        for i, (w_low, w_high) in enumerate(_values(builder, fmt, block)):
            offset = builder.add(builder.mul(b, _i64(BLOCK_WEIGHTS[fmt] * 4)), _i64(i * BLOCK * 4))
            for t in range(width):
                x_at = builder.add(xs[t], offset)
                x_low, x_high = _load_vec(builder, x_at, _F32), _load_vec(builder, x_at, _F32, _LANES * 4)
                accs[2 * t] = builder.call(fma, [w_low, x_low, accs[2 * t]])
                accs[2 * t + 1] = builder.call(fma, [w_high, x_high, accs[2 * t + 1]])
        return accs

    final = _block_loop(builder, n_blocks, [zero] * (2 * width), body)
    for t in range(width):
        total = _tree_sum(builder, builder.fadd(final[2 * t], final[2 * t + 1]))
        at = builder.add(out, builder.mul(out_stride, _i64(t)))
        builder.store(total, builder.inttoptr(at, _F32.as_pointer()))


def _dots_codegen(context, builder, signature, args):
    """One case per (format, width): ``fmt * 16 + width`` picks the body (an unknown pair does nothing)."""
    fmt, width, *rest = args
    key = builder.add(builder.mul(fmt, _i64(16)), width)
    done = builder.append_basic_block("dots_done")
    switch = builder.switch(key, done)
    for code in NAMES:
        for w in range(1, WIDTH + 1):
            case = builder.append_basic_block(f"dots_{NAMES[code].lower()}_{w}")
            switch.add_case(ir.Constant(_I64, code * 16 + w), case)
            builder.position_at_end(case)
            _dots_body(builder, code, w, rest)
            builder.branch(done)
    builder.position_at_end(done)
    return context.get_dummy_value()


@intrinsic
def _dots(typingctx, fmt, width, row, x, x_stride, n_blocks, out, out_stride):
    """``out[t] = values(row) . x_t`` (t < width, 1 to WIDTH) for the stored row at address ``row``
    (``n_blocks`` blocks of format ``fmt``), x_t at ``x + t * x_stride``, out[t] at
    ``out + t * out_stride``."""
    return types.void(*(types.int64,) * 8), _dots_codegen


@_jit(error_model="numpy")
def rows_parts(fmt, starts, rows, stride, x, out, o0, o1):
    """``out[t, o] = values(stored row o) . x[t]`` (quant.ir's one-row order) for o0 <= o < o1, counted
    over the parts side by side (part p: ``rows[p]`` stored rows from address ``starts[p]``), every t;
    x (T, n_in) and out (T, n_out) float32, C-contiguous. Rows of x go WIDTH at a time."""
    n_t, n_in = x.shape
    n_out = out.shape[1]
    n_blocks = n_in // WEIGHTS[fmt]
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
    for fmt in FORMATS:
        blocks = valid_blocks(rng, fmt, 13, 3)
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


