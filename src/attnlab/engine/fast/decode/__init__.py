"""The fast path's products and compiled steps, for :mod:`attnlab.engine.fast.ops`.

A decoding step runs every block once per token on a single row, so the reference path's
per-call work (namespace look-ups, shape checks, masks, the NaN scan of every intermediate)
cost as much as a third of the step beside the weight reads (docs/performance.md). The fast
ops do the same arithmetic with plain NumPy calls on 2-D arrays, and the steps between the
products in one compiled call each (:mod:`.steps`, :mod:`.kernels`), in the reference's order
(scores = (q @ k^T) * scale, max-shifted exp, divide, @ v), so the two agree to rounding (tested).

A step is bound by reading the weights (135 M float32 parameters for SmolLM2, about half the
bytes as the file's Q4_1 blocks: weights may be
:class:`attnlab.engine.fast.quant.QuantMatrix`, whose products run on the blocks), so the fast
ops read them in as few products as they can: when a block's w_q, w_k, w_v (and w_gate, w_up)
are adjacent column blocks of one array (:func:`side_by_side`, as the GGUF loader lays them
out), or matrices of blocks (joined without a copy), one product covers the group. RoPE's
cos/sin are computed once per step for all the layers.

Every number comes from one single-threaded BLAS call (a model holds BLAS to one thread around
its forward, :mod:`attnlab.engine.threads`), so none depends on the thread count. A prompt's
float products (16 rows or more) are shared out among our own threads in column blocks fixed by
the weights' shapes (:func:`_product`: float32 ones with the helper threads that wait spinning,
:mod:`attnlab.engine.fast.quant.share`, each block one call of NumPy's own sgemm; others with
NumPy's matmul on our pool's threads), and so are a long prompt's attention heads (in pieces of
about 3 x 128 x 128 scores, from 64 x 64 scores a head); a decoding step's float products are not:
waking a thread takes as long as a 576 x 576 product, and sharing even the widest (gate|up, 7 MB)
saved little (docs/performance.md). (Products on quantized blocks share a decoding step's rows
with the spinning helpers too, under the same promise.)
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.fast.quant import QuantMatrix, helpers, product
from attnlab.engine.fast.workers import run
from attnlab.engine.threads import CORES, holding_one_blas_thread

# A product of this many rows or more (a prompt, not a decoding step) is shared out among our
# threads in column blocks; below, waking a thread costs what the split saves.
_SPLIT_ROWS = 16
_BLOCK_COLUMNS = 512  # a block's width at most; all of a product's blocks are equally wide


def side_by_side(*matrices: np.ndarray, dtype=None) -> tuple[np.ndarray, ...]:
    """Copy 2-D matrices with equal row counts into one array, side by side; return views of it.

    ``x @ view`` computes what ``x @ matrix`` did. When a block's w_q, w_k, w_v
    (or w_gate, w_up) are such views, the fast ops (:mod:`attnlab.engine.fast.ops`) read them
    with one product: a decoding step is bound by reading the weights, and
    OpenBLAS runs a product as small as one 576 x 576 matrix on a single thread.
    """
    rows = {m.shape[0] for m in matrices}
    if len(rows) != 1 or any(m.ndim != 2 for m in matrices):
        shapes = [m.shape for m in matrices]
        raise ValueError(f"side_by_side needs 2-D matrices with equal row counts, not {shapes}")
    dtype = np.result_type(*matrices) if dtype is None else np.dtype(dtype)
    joined = np.empty((rows.pop(), sum(m.shape[1] for m in matrices)), dtype)
    views, start = [], 0
    for m in matrices:
        views.append(joined[:, start : start + m.shape[1]])
        views[-1][...] = m
        start += m.shape[1]
    return tuple(views)


def _product(x: np.ndarray, w: np.ndarray | QuantMatrix) -> np.ndarray:
    """``x @ w``; from ``_SPLIT_ROWS`` rows on, as fixed column blocks that our threads share.

    Every output number is still one dot product done wholly by one single-threaded BLAS
    call, and the blocks depend on w's shape alone (never on the thread count or the
    machine), so the result is the same bits however many threads take part. A
    :class:`QuantMatrix` runs on its blocks (:func:`attnlab.engine.fast.quant.product`, the
    same promise).
    """
    if isinstance(w, QuantMatrix):
        return product(x, w)
    if x.shape[0] < _SPLIT_ROWS:
        return x @ w
    n_cols = w.shape[1]
    parts = 2 * -(-n_cols // (2 * _BLOCK_COLUMNS))  # an even count: two threads finish together
    width = -(-n_cols // parts)
    width = -(-width // 16) * 16  # whole 64-byte lines of float32
    out = np.empty((x.shape[0], n_cols), np.result_type(x, w))
    helpers = _float_helpers(x, w)
    if helpers is not None and helpers.float_product(x, w, out, width):
        return out
    blocks = [slice(c, min(n_cols, c + width)) for c in range(0, n_cols, width)]

    def block(cols: slice, _buffers) -> None:
        np.matmul(x, w[:, cols], out=out[:, cols])

    run(block, blocks, min(CORES, len(blocks)))
    return out


_float_reason: str | None = None  # None: not checked yet; "": the helpers share float products


def _float_helpers(x: np.ndarray, w: np.ndarray):
    """The spinning helpers (:mod:`attnlab.engine.fast.quant.share`) for a float32 product's column
    blocks, where they apply: float32, x C-ordered, w's rows of unit stride, BLAS held to one thread
    (the helpers' sgemm calls run on their own threads, as NumPy's do), and the helpers' products
    were checked to give NumPy's bits here (:func:`float_reason`). A waiting helper takes a block at
    once; a sleeping pool thread is woken through the kernel, which in a virtual machine took as long
    as a 22-row block (docs/performance.md)."""
    if not (x.dtype == w.dtype == np.float32 and x.flags.c_contiguous and w.strides[1] == 4
            and w.strides[0] % 4 == 0 and w.strides[0] >= 4 * w.shape[1]
            and holding_one_blas_thread()):  # fmt: skip
        return None
    if _float_reason is None:
        _check_float_helpers()
    return helpers() if _float_reason == "" else None


def float_reason() -> str:
    """Why float products do not take the spinning helpers ('' when they do, or are not checked yet)."""
    return _float_reason or ""


def _check_float_helpers() -> None:
    """Products through the helpers give NumPy's bits, block by block (rows, widths, a view), or
    float products keep NumPy's matmul on the pool's threads from now on."""
    global _float_reason
    try:
        sharing = helpers()
        if sharing is None or not sharing.sgemm:
            raise RuntimeError("no spinning helpers or no BLAS sgemm to call here")
        rng = np.random.default_rng(0)
        joined = rng.standard_normal((70, 100)).astype(np.float32)
        for n_t, w, width in ((16, joined, 48), (23, joined[:, 7:90], 32), (40, joined[:, :64], 64)):
            x = rng.standard_normal((n_t, w.shape[0])).astype(np.float32)
            want = np.empty((n_t, w.shape[1]), np.float32)
            for c in range(0, w.shape[1], width):
                np.matmul(x, w[:, c : c + width], out=want[:, c : c + width])
            got = np.empty_like(want)
            if not sharing.float_product(x, w, got, width):
                return  # another product has the helpers: checked at a later product
            if got.tobytes() != want.tobytes():
                raise RuntimeError("a float product shared with the helpers differs from NumPy's")
        _float_reason = ""
    except Exception as exc:  # a BLAS or a machine where the call does not work
        _float_reason = f"{type(exc).__name__}: {exc}"
