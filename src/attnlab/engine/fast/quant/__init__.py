"""Products on GGUF's stored blocks, exactly: ``x @ W`` without a float32 copy of W.

:class:`QuantMatrix` is a weight matrix W of shape (n_in, n_out), pre-transposed
like every engine weight (``y = x @ W``), kept as the blocks a GGUF file stores:
one stored row per output column, in any format of
:mod:`attnlab.engine.fast.formats`: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
Q4_K, Q5_K, Q6_K (see :mod:`attnlab.engine.fast.quant.ir` for the layouts; a row
is ``n_in / 32`` blocks, or ``n_in / 256`` K-quant super-blocks). Each weight's
float32 value is the one ``gguf.quants`` dequantizes it to, bit for bit (a
float16 or bfloat16 weight widened exactly), and the products multiply those
values with float32 activations: the float32 model's arithmetic, only summed
in another order. A format not in that list is refused by name
(:class:`~attnlab.engine.fast.formats.UnknownFormat`), never approximated.

- One row of x (a decoding step): the blocks are streamed once, the values
  made in registers; each output is the fixed-order sum described in quant.ir
  (two 16-lane FMA chains over the blocks, then a fixed tree). The rows are
  shared with helper threads that wait spinning (:mod:`attnlab.engine.fast.quant.share`).
- Two rows of x or more (a prompt): 8 stored rows at a time are made float32
  in a small scratch, once, and multiplied by every token in register tiles
  (8 stored rows x up to 32 tokens, x packed k-major): each output is one
  chain of FMAs over k = 0, 1, ..., n_in - 1 in order, from 0 (quant.ir's tile
  kernels). So a token's outputs are the same bits whatever the other tokens,
  the tiles or the threads (they differ from the one-row order by rounding).
  Prompts of up to ``_FEW_ROWS`` tokens share the work with the spinning
  helpers; longer ones with the worker threads, in fixed pieces of rows.

Work is shared among our threads only by output columns, in pieces fixed by
the matrix's shape (never by the thread count): every output is one sum done
by one thread in one fixed order, so the bits do not depend on which thread
or how many threads run, on ``NUMBA_NUM_THREADS`` or on
``OPENBLAS_NUM_THREADS`` (no BLAS is called).

:func:`kernel` compiles and self-checks the kernels once (as
:mod:`attnlab.engine.fast.compiled` does); where it returns None, callers keep to
float32 weights (:func:`reason` says why).
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np

from attnlab.engine.fast.formats import BLOCK_BYTES, BLOCK_WEIGHTS, FORMATS, NAMES, UnknownFormat
from attnlab.engine.fast.workers import run
from attnlab.engine.threads import CORES

# A product with up to _FEW_ROWS rows of x and this many multiply-adds or more is shared with the
# spinning helpers (each of SmolLM2's: its smallest, w_o, has 332K a row): below it, handing a piece
# over costs what sharing saves (docs/performance.md).
_THREAD_WEIGHTS = 1 << 17
# Up to this many rows of x (a short prompt), products are shared with the spinning helpers: waking a
# worker thread would cost a tenth of such a product (docs/performance.md)
_FEW_ROWS = 32
_PIECE_ROWS = 512  # a long prompt's piece is at most this many stored rows (a part's pieces equally wide)

_lock = threading.Lock()
_ready: bool | None = None
_reason = ""
_share_reason = ""  # why one-row products run without the helpers ('' when they run with them)


class QuantMatrix:
    """W (n_in, n_out) float32, stored as GGUF blocks: ``x @ W`` runs on the blocks.

    ``parts``: uint8 arrays (rows, blocks a row * block bytes), C-contiguous, each
    the stored rows of one tensor (row r = output column r of that part); parts
    stand side by side, their columns in order. ``fmt``: a GGUF type name of
    :data:`~attnlab.engine.fast.formats.FORMATS` ("Q4_K", "F16", ...). Read-only
    views of a memory-mapped file do: nothing is copied.
    """

    __array_ufunc__ = None  # ``x @ w`` with a NumPy x comes to __rmatmul__
    ndim = 2
    dtype = np.dtype(np.float32)

    def __init__(self, fmt: str, *parts: np.ndarray) -> None:
        if fmt not in FORMATS:
            raise UnknownFormat(fmt)
        if not parts:
            raise ValueError("a QuantMatrix needs at least one part")
        code = FORMATS[fmt]
        widths = {p.shape[1] if p.ndim == 2 else -1 for p in parts}
        width = widths.pop()
        if widths or width <= 0 or width % BLOCK_BYTES[code]:
            raise ValueError(f"{fmt} parts must be 2-D with whole blocks of {BLOCK_BYTES[code]} bytes a row")
        if any(p.dtype != np.uint8 or not p.flags.c_contiguous for p in parts):
            raise ValueError("parts must be C-contiguous uint8 arrays")
        self.fmt, self.code = fmt, code
        self.parts = tuple(_read_only(p) for p in parts)
        self.n_in = width // BLOCK_BYTES[code] * BLOCK_WEIGHTS[code]
        self.n_out = sum(p.shape[0] for p in parts)
        self.shape = (self.n_in, self.n_out)
        # each part's first byte and row count, for one kernel call over all the parts (a decoding
        # step makes hundreds of products: a call per part adds up); the parts keep the bytes alive
        self._at = _read_only(np.array([p.ctypes.data for p in self.parts], np.int64))
        self._rows = _read_only(np.array([p.shape[0] for p in self.parts], np.int64))

    @classmethod
    def side_by_side(cls, *matrices: QuantMatrix) -> QuantMatrix:
        """One matrix whose column blocks are ``matrices`` (no copy): x @ it = the products side by side."""
        if len({(m.fmt, m.n_in) for m in matrices}) != 1:
            raise ValueError("side_by_side needs matrices of one format and one input width")
        return cls(matrices[0].fmt, *(p for m in matrices for p in m.parts))

    def __rmatmul__(self, x) -> np.ndarray:
        x = np.asarray(x)
        if x.ndim == 1:
            return product(x[None, :], self)[0]
        return product(x, self)

    def __repr__(self) -> str:
        return f"QuantMatrix({self.fmt}, shape={self.shape}, parts={len(self.parts)})"

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.parts)

    def values(self) -> np.ndarray:
        """W as float32 (n_in, n_out): every weight's value, as ``gguf.quants`` dequantizes it."""
        return self.stored_rows(np.arange(self.n_out)).T

    def stored_rows(self, ids) -> np.ndarray:
        """Rows ``ids`` of W^T as float32 (len(ids), n_in): columns of W (an embedding look-up)."""
        _require()
        return self._stored_rows(ids)

    def _stored_rows(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size and not (0 <= ids.min() and ids.max() < self.n_out):
            raise IndexError(f"row index out of range 0..{self.n_out - 1}")
        out = np.empty((ids.size, self.n_in), np.float32)
        start = 0
        for part in self.parts:
            here = (ids >= start) & (ids < start + part.shape[0])
            if here.any():
                rows = np.empty((int(here.sum()), self.n_in), np.float32)
                _gather(self.code, part, ids[here] - start, rows)
                out[here] = rows
            start += part.shape[0]
        return out


def with_values(params):
    """``params`` (a dataclass of weights, maybe nested) with each QuantMatrix replaced by its values.

    For the engine's generic path, which works on arrays: the float32 values are
    made afresh (one layer's worth at a time, as blocks call it); ``params``
    itself is returned when it holds no QuantMatrix.
    """
    changes = {}
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        if isinstance(value, QuantMatrix):
            changes[f.name] = value.values()
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            new = with_values(value)
            if new is not value:
                changes[f.name] = new
    return dataclasses.replace(params, **changes) if changes else params


def _read_only(a: np.ndarray) -> np.ndarray:
    """A read-only view: numba compiles once per argument type, and read-only is part of the type."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def _gather(code: int, part: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    from attnlab.engine.fast.quant import kernels

    kernels.fill(code, part, _read_only(np.ascontiguousarray(rows, dtype=np.int64)), out)


def _pieces(n_rows: int, width: int) -> list[tuple[int, int]]:
    """Fixed row ranges of at most ``width`` (an even count, equally wide): they depend on n_rows alone."""
    count = 2 * -(-n_rows // (2 * width))
    step = -(-n_rows // count)
    step = -(-step // 16) * 16  # whole 64-byte lines of float32 output
    return [(r, min(n_rows, r + step)) for r in range(0, n_rows, step)]


def product(x: np.ndarray, w: QuantMatrix) -> np.ndarray:
    """``x @ w`` for x (T, n_in): float32 (T, n_out), every number the same bits on any thread count."""
    _require()
    return _product(x, w)


def _require() -> None:
    if _ready is not True and kernel() is None:
        raise RuntimeError(f"the quantized kernels cannot run here: {reason()}")


def _product(x: np.ndarray, w: QuantMatrix) -> np.ndarray:
    x = _read_only(np.ascontiguousarray(x, dtype=np.float32))
    if x.ndim != 2 or x.shape[1] != w.n_in:
        raise ValueError(f"x has shape {x.shape}; it needs (T, {w.n_in}) for a {w.shape} matrix")
    n_t = x.shape[0]
    out = np.empty((n_t, w.n_out), np.float32)
    from attnlab.engine.fast.quant import kernels as k

    stride = w.parts[0].shape[1]
    if n_t <= _FEW_ROWS:  # a decoding step, a short prompt: with the spinning helpers
        if n_t * w.n_in * w.n_out >= _THREAD_WEIGHTS:
            shared = helpers()
            if shared is not None and shared.product(w, x, out):
                return out
        if n_t == 1:
            k.matvec_parts(w.code, w._at, w._rows, stride, x[0], out[0])
            return out
    packed, width = k.pack(x)
    # a prompt: fixed pieces of rows (each part's own), shared by our worker threads
    pieces, start = [], 0
    for part in w.parts:
        pieces += [(start + r0, start + r1) for r0, r1 in _pieces(part.shape[0], _PIECE_ROWS)]
        start += part.shape[0]
    at = (w._at.ctypes.data, w._rows.ctypes.data, stride, packed.ctypes.data, n_t, width, w.n_in)

    def piece(rows, _buffers) -> None:
        k.tile_rows(w.code, *at, rows[0], rows[1], out.ctypes.data, w.n_out)

    threads = 1 if n_t <= _FEW_ROWS else min(CORES, len(pieces))
    run(piece, pieces, threads)
    return out


def helpers():
    """The process's spinning helpers (:func:`attnlab.engine.fast.quant.share.sharing`) that products of
    a few rows share, or None where those run alone (one core; the helpers failed their check)."""
    if _share_reason or CORES < 2:
        return None
    from attnlab.engine.fast.quant.share import sharing

    return sharing(CORES)


def kernel() -> bool | None:
    """True when the kernels compiled and passed their self-check here, else None (see :func:`reason`).

    The first call compiles (numba caches the machine code beside this file when
    it can, so later processes load it in well under a second).
    """
    global _ready, _reason
    with _lock:
        if _ready is None:
            try:
                _self_check()
                _ready = True
            except Exception as exc:  # a failed compilation or self-check
                _reason = f"{type(exc).__name__}: {exc}"
                _ready = False
        return True if _ready else None


def reason() -> str:
    """Why :func:`kernel` returned None ('' when it did not)."""
    return _reason


def reference_values(fmt: str, blocks: np.ndarray) -> np.ndarray:
    """NumPy's float32 values of stored rows ``blocks`` (rows, bytes): gguf.quants' arithmetic, restated."""
    from attnlab.engine.fast.quant import reference

    return reference.values(fmt, blocks)


def _self_check() -> None:
    """Compile, then compare values and products of odd little matrices with NumPy (exact values)."""
    from attnlab.engine.fast.quant import reference

    rng = np.random.default_rng(0)
    for code in sorted(NAMES):  # Q4_1 and Q8_0 first, as before the other formats came
        fmt = NAMES[code]
        n_rows, n_blocks = 37, 3 if BLOCK_WEIGHTS[code] == 32 else 1
        blocks = reference.valid_blocks(rng, fmt, n_rows, n_blocks)
        w = QuantMatrix(fmt, blocks[:20], blocks[20:])
        expected = reference.values(fmt, blocks)
        got = w._stored_rows(np.arange(n_rows))
        if got.tobytes() != expected.tobytes():
            raise RuntimeError(f"the compiled {fmt} values differ from NumPy's")
        x = rng.standard_normal((40, w.n_in)).astype(np.float32)  # 40: a whole tile and a part one
        exact = x.astype(np.float64) @ expected.T.astype(np.float64)
        # a float32 sum of n terms lies within n * eps * sum |terms| of the exact sum, in any order
        bound = w.n_in * np.finfo(np.float32).eps * (np.abs(x.astype(np.float64)) @ np.abs(expected.T))
        for rows in (x[:1], x[:3], x):
            if not np.all(np.abs(_product(rows, w) - exact[: len(rows)]) <= bound[: len(rows)]):
                raise RuntimeError(f"the compiled {fmt} product disagrees with NumPy's")
        if fmt in ("Q4_1", "Q4_K"):  # the helpers' protocol is one for every format: a block and a K-quant
            _check_sharing(w, x)


def _check_sharing(w: QuantMatrix, x: np.ndarray) -> None:
    """Products with the helpers (one row, a few) give the same bits as alone, or run alone from now on."""
    global _share_reason
    if CORES < 2 or _share_reason:
        return
    try:
        from attnlab.engine.fast.quant import kernels as k
        from attnlab.engine.fast.quant.share import sharing

        helpers = sharing(CORES)
        for rows in (x[:1], x[:3]):
            alone, shared = (np.empty((len(rows), w.n_out), np.float32) for _ in range(2))
            if len(rows) == 1:
                k.matvec_parts(w.code, w._at, w._rows, w.parts[0].shape[1], _read_only(rows[0]), alone[0])
            else:
                packed, width = k.pack(rows)
                k.tile_rows(w.code, w._at.ctypes.data, w._rows.ctypes.data, w.parts[0].shape[1],
                            packed.ctypes.data, len(rows), width, w.n_in, 0, w.n_out, alone.ctypes.data,
                            w.n_out)  # fmt: skip
            done = helpers is not None and helpers.product(w, rows, shared)
            if done and shared.tobytes() != alone.tobytes():
                raise RuntimeError("a product shared with the helpers differs from one computed alone")
    except Exception as exc:  # atomics or threads that do not work here: one thread is still right
        _share_reason = f"{type(exc).__name__}: {exc}"
