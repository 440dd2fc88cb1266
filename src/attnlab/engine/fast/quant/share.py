"""Helper threads for products that wait spinning, so a product gets them at once: one-row and prompt
products on blocks, and a short prompt's float32 products (``FLOAT`` jobs).

A decoding step makes ~120 short products. Waking a sleeping thread (a futex,
then the GIL) costs a good part of one, and OpenMP's teams (numba's ``prange``)
wait at the end of every product for each thread, even one that a busy machine
has not scheduled, so a step beside one busy process ran slower on two threads
than on one (docs/performance.md). Here the calling thread and the helpers take fixed pieces of
the product (``PIECE_ROWS`` stored rows, counted over the parts side by side)
from one shared counter, so a helper that does not come takes nothing and
delays nothing, and the caller waits only briefly for pieces a helper has taken. Every
output is still one dot product in quant.ir's fixed order, whichever thread
computes it: the bits never depend on the threads.

The protocol lives in an int64 array ``ctl`` read and written with atomic
operations (LLVM IR below). The caller publishes a job under a spin lock; a
helper copies it under the same lock, so it never mixes two jobs. Pieces are
taken from one counter tagged with the job's number. A helper computes a piece
into a buffer of its own (allocated by that helper's thread, so a late helper
still writing an old job's piece shares no memory with any other thread) and
hands it over under the lock, only while the caller still waits for it. The
caller, once the counter is empty, waits a little (``PATIENCE``) for the
helpers' pieces; then (a helper descheduled by a busy machine) it marks the job
abandoned, under the lock, and computes the missing pieces itself: a late
helper's work is dropped, never written. Helpers spin (in compiled code,
without the GIL) for ``SPINS`` polls after their last job, then sleep on an
``Event`` until the next product.

A float32 product's job (:meth:`Sharing.float_product`, from decode._product) is the same protocol
with other pieces: blocks of w's columns fixed by w's shape, each one call of the ``cblas_sgemm`` of
the OpenBLAS that NumPy multiplies with (its address from the library NumPy loaded), with the
arguments NumPy's matmul passes for that block, so each block is NumPy's bits whichever thread
computes it (checked at first use by decode._check_float_helpers). Such a job is never abandoned:
a helper writes its blocks straight into the caller's ``out`` (a copy of its own cost as much as a
fifth of a block), and the caller waits for every block a helper took.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from attnlab.engine.fast.compiled import _jit
from attnlab.engine.fast.quant.ir import TILE_ROWS, load_i64, store_f32
from attnlab.engine.fast.quant.kernels import BYTES, WEIGHTS, dot, pack_into, packed_size, tile_rows_with

PIECE_ROWS = 64  # a one-row product's piece
# a prompt's piece: a piece's tile work is ~20x a one-row piece's, so narrower pieces keep the two
# threads' shares even (a 576-row product in 64-row pieces split 5:4, in 16-row pieces 18:18)
PROMPT_PIECE_ROWS = 16
MAX_PIECES = 1024  # the output layer's 49152 rows are 768 pieces; larger products run alone
# Every poll of a wait yields the core (sched_yield: cheap when nobody else wants it), so a waiting
# thread never starves one that works on the same core, when the machine is busy
SPINS = 4000  # polls (a decoding step's gap between products, and more) a helper waits, then sleeps
PATIENCE = 200  # polls (a fraction of a product) the caller waits for a helper's pieces, then does them
# ... except for a float product's pieces, which a helper writes straight into the caller's out (no
# copy of its own: a prompt's 256 x 512 block took ~0.1 ms to hand over), so the caller waits for
# every piece a helper took; a helper takes a quarter of the pieces left at most
_NEVER = 1 << 62
# ctl slots: the ones every piece touches on cache lines (8 slots) of their own, so that two cores
# do not pass one line back and forth; FLAGS + p holds the job number once piece p is in ``out``
NEXT, DONE, LOCK = 0, 8, 16
GEN, ACTIVE, STOP, SLEEPING, ABANDONED, YIELD = 24, 25, 26, 27, 28, 29
# a job's format for float32 products ``x @ w`` (:meth:`Sharing.float_product`): a piece is a block of
# w's columns, computed by one call of NumPy's BLAS sgemm, as NumPy's matmul calls it on that block
FLOAT = -1
FMT, STARTS, ROWS, STRIDE, X, OUT, N_OUT, N_TOK, WIDTH, PIECE = range(32, 42)
_JOB = 10  # the job's slots, FMT .. PIECE
FLAGS = 48
_SLOTS = FLAGS + MAX_PIECES
_LOW = (1 << 32) - 1

_I64 = ir.IntType(64)


def _ptr(builder, base, slot, t=_I64):
    return builder.inttoptr(builder.add(base, builder.mul(slot, ir.Constant(_I64, 8))), t.as_pointer())


@intrinsic
def _load(typingctx, base, slot):
    """Atomic (sequentially consistent) load of the int64 at ``base + 8 * slot``."""

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_ptr(builder, *args), "seq_cst", 8)

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _store(typingctx, base, slot, value):
    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _ptr(builder, args[0], args[1]), "seq_cst", 8)
        return context.get_dummy_value()

    return types.void(types.int64, types.int64, types.int64), codegen


@intrinsic
def _add(typingctx, base, slot, value):
    """Atomic fetch-and-add; returns the value before."""

    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _ptr(builder, args[0], args[1]), args[2], "seq_cst")

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _cas(typingctx, base, slot, expected, new):
    """Compare-and-swap; True when the slot held ``expected`` and now holds ``new``."""

    def codegen(context, builder, signature, args):
        pair = builder.cmpxchg(_ptr(builder, args[0], args[1]), args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)

    return types.boolean(types.int64, types.int64, types.int64, types.int64), codegen


@intrinsic
def _yield(typingctx, fn):
    """Call ``sched_yield`` at address ``fn``: a waiting thread lets others on its core run."""

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(32), [])
        builder.call(builder.inttoptr(args[0], fnty.as_pointer()), [])
        return context.get_dummy_value()

    return types.void(types.int64), codegen


_I32, _F32, _BYTE_PTR = ir.IntType(32), ir.FloatType(), ir.IntType(8).as_pointer()


@intrinsic
def _sgemm(typingctx, fn, m, n, k, a, lda, b, ldb, out, ldc):
    """``cblas_sgemm`` at address ``fn`` (64-bit integers): out (m, n) = a (m, k) @ b (k, n), all
    row-major float32 at the given addresses and row strides (in numbers)."""

    def codegen(context, builder, signature, args):
        fn, m, n, k, a, lda, b, ldb, out, ldc = args
        fnty = ir.FunctionType(ir.VoidType(), [_I32, _I32, _I32, _I64, _I64, _I64, _F32, _BYTE_PTR, _I64,
                                               _BYTE_PTR, _I64, _F32, _BYTE_PTR, _I64])  # fmt: skip
        row_major, no_trans = ir.Constant(_I32, 101), ir.Constant(_I32, 111)  # CBLAS' enum values
        builder.call(builder.inttoptr(fn, fnty.as_pointer()),
                     [row_major, no_trans, no_trans, m, n, k, ir.Constant(_F32, 1.0),
                      builder.inttoptr(a, _BYTE_PTR), lda, builder.inttoptr(b, _BYTE_PTR), ldb,
                      ir.Constant(_F32, 0.0), builder.inttoptr(out, _BYTE_PTR), ldc])  # fmt: skip
        return context.get_dummy_value()

    return types.void(*[types.int64] * 10), codegen


@_jit(error_model="numpy")
def _pause(c):
    fn = _load(c, YIELD)
    if fn != 0:
        _yield(fn)


@_jit(error_model="numpy")
def _acquire(c):
    while not _cas(c, LOCK, 0, 1):
        _pause(c)


@_jit(error_model="numpy")
def _take(c, gen, n_pieces):
    """The next pieces of job ``gen`` (NEXT holds gen << 32 | piece): ``(first, end)``, a quarter of
    what is left (at least one: fewer claims, and the last ones small), or (-1, -1) when none is."""
    while True:
        v = _load(c, NEXT)
        first = v & _LOW
        if (v >> 32) != gen or first >= n_pieces:
            return -1, -1
        end = first + max(1, (n_pieces - first) // 4)
        if _cas(c, NEXT, v, v + (end - first)):
            return first, end


@_jit(error_model="numpy")
def _scratch(fmt, stride, n_tok):
    """A thread's tile scratch for one job (kernels.tile_rows_with), zeros; none for one token or a
    float job."""
    if fmt == FLOAT:
        return np.zeros(0, np.float32)
    n_in = stride // BYTES[fmt] * WEIGHTS[fmt]
    return np.zeros(TILE_ROWS * (n_in + 32) if n_tok > 1 else 0, np.float32)


@_jit(error_model="numpy")
def _piece(job, piece, dst, scratch):
    """Rows of ``piece``, for every row of x, into float32 (T, n_out) memory at ``dst``.

    One row of x: quant.ir's dot products; more: x is packed in tiles (kernels.pack, the last
    tile ``width`` wide) and the tile kernels run, on this thread's ``scratch`` (:func:`_scratch`:
    the array, so that the caller's loop names it and numba keeps it until the job is done)."""
    fmt, starts, rows, stride, x_at, _out, n_out, n_tok, width, piece_rows = job
    o0 = piece * piece_rows
    if fmt == FLOAT:  # w at ``starts`` (row stride ``stride``), x (n_tok, width), sgemm at ``rows``
        n = min(n_out, o0 + piece_rows) - o0
        _sgemm(rows, n_tok, n, width, x_at, width, starts + 4 * o0, stride, dst + 4 * o0, n_out)
        return
    n_blocks = stride // BYTES[fmt]
    if n_tok > 1:
        o1 = min(n_out, o0 + piece_rows)
        n_in = n_blocks * WEIGHTS[fmt]
        tile_rows_with(fmt, starts, rows, stride, x_at, n_tok, width, n_in, o0, o1, dst, n_out, scratch)
        return
    p, first = 0, 0  # the part holding row o, and the index in out of its first row
    for o in range(o0, min(n_out, o0 + piece_rows)):
        while o - first >= load_i64(rows + 8 * p):
            first += load_i64(rows + 8 * p)
            p += 1
        at = load_i64(starts + 8 * p) + (o - first) * stride
        store_f32(dst + 4 * o, dot(fmt, at, x_at, n_blocks))


@_jit(error_model="numpy")
def _piece_into(job, piece, own, scratch):
    """:func:`_piece` into a helper's own buffer (float32, at least T * n_out): the array is passed, and
    its address taken here, so the helper keeps naming it (tests/engine/fast/test_lifetimes.py)."""
    _piece(job, piece, np.int64(own.ctypes.data), scratch)


@_jit(error_model="numpy")
def _job_of(c):
    return (_load(c, FMT), _load(c, STARTS), _load(c, ROWS), _load(c, STRIDE), _load(c, X), _load(c, OUT),
            _load(c, N_OUT), _load(c, N_TOK), _load(c, WIDTH), _load(c, PIECE))  # fmt: skip


@_jit(error_model="numpy")
def piece_rows(n_tok, n_out):
    """Stored rows a piece of a job holds: fixed by the product's shape (the bits never depend on it)."""
    if n_tok == 1:
        return PIECE_ROWS
    fewest = (n_out + MAX_PIECES - 1) // MAX_PIECES  # the output layer: 48-row pieces, 1024 of them
    return max(PROMPT_PIECE_ROWS, (fewest + 7) // 8 * 8)


@_jit(error_model="numpy")
def run_job(ctl, fmt, starts, rows, stride, x, width, out, patience):
    """The caller's side: publish ``out = x @ rows^T`` (x (n_in,) for one token, else x packed by
    kernels.pack, its last tile ``width`` wide; out (T, n_out); see the module docstring),
    take pieces, collect."""
    n_out = out.shape[1]
    n_tok, out_at = out.shape[0], np.int64(out.ctypes.data)
    job = (fmt, np.int64(starts.ctypes.data), np.int64(rows.ctypes.data), stride, np.int64(x.ctypes.data),
           out_at, n_out, n_tok, width, piece_rows(n_tok, n_out))  # fmt: skip
    _run(ctl, job, patience)


@_jit(error_model="numpy")
def run_float_job(ctl, sgemm, w_at, w_stride, x, out, columns, patience):
    """:func:`run_job` for ``out = x @ w``: x (T, n_in) float32, C-ordered; w (n_in, n_out) float32 at
    ``w_at``, rows ``w_stride`` numbers apart; pieces of ``columns`` columns, one sgemm each."""
    job = (FLOAT, w_at, sgemm, w_stride, np.int64(x.ctypes.data), np.int64(out.ctypes.data), out.shape[1],
           out.shape[0], x.shape[1], columns)  # fmt: skip
    _run(ctl, job, patience)


@_jit(error_model="numpy")
def _run(ctl, job, patience):
    """Publish ``job`` (its ``_JOB`` slots), take its pieces, wait ``patience`` polls for the helpers'
    pieces, then (a block job) do the missing ones here."""
    c = np.int64(ctl.ctypes.data)
    fmt, stride, out_at, n_out, n_tok, rows_a_piece = job[0], job[3], job[5], job[6], job[7], job[9]
    n_pieces = (n_out + rows_a_piece - 1) // rows_a_piece
    _acquire(c)
    gen = (_load(c, GEN) + 1) & (_LOW >> 1)
    for i in range(_JOB):
        _store(c, FMT + i, job[i])
    _store(c, ABANDONED, 0)
    _store(c, DONE, 0)
    _store(c, NEXT, gen << 32)
    _store(c, GEN, gen)
    _store(c, LOCK, 0)
    scratch = _scratch(fmt, stride, n_tok)  # handed to every piece, never as an address (see _piece)
    mine = 0
    while True:
        first, end = _take(c, gen, n_pieces)
        if first < 0:
            break
        for piece in range(first, end):
            _piece(job, piece, out_at, scratch)
            _store(c, FLAGS + piece, gen)
        mine += end - first
    polls = 0
    while mine + _load(c, DONE) < n_pieces and polls < patience:
        _pause(c)
        polls += 1
    if mine + _load(c, DONE) < n_pieces:  # a helper is late (a busy machine): do its pieces here
        _acquire(c)
        _store(c, ABANDONED, 1)  # from now on no helper writes to out
        _store(c, LOCK, 0)
        for piece in range(n_pieces):
            if _load(c, FLAGS + piece) != gen:
                _piece(job, piece, out_at, scratch)


@_jit(error_model="numpy")
def helper_wait(ctl, last, spins):
    """A helper's side: do each new job as it is published; return the last job's number after
    ``spins`` polls with nothing new, or -1 when told to stop. Its pieces go to its own buffer
    (``own``: no other thread ever reads or writes it, so a piece this helper computes late for an
    abandoned job cannot spoil another helper's piece of the next one) and are handed over, under
    the lock, as each claim of pieces is done."""
    c = np.int64(ctl.ctypes.data)
    own = np.empty(0, np.float32)
    idle = 0
    while idle < spins:
        if _load(c, STOP) != 0:
            return -1
        if _load(c, GEN) == last:
            _pause(c)
            idle += 1
            continue
        _acquire(c)
        gen = _load(c, GEN)
        job = _job_of(c)
        _add(c, ACTIVE, 1)
        _store(c, LOCK, 0)
        last = gen
        out_at, n_out, n_tok, rows_a_piece = job[5], job[6], job[7], job[9]
        n_pieces = (n_out + rows_a_piece - 1) // rows_a_piece
        if job[0] == FLOAT:  # straight into out: the caller of a float job waits for every piece taken
            while True:
                first, end = _take(c, gen, n_pieces)
                if first < 0:
                    break
                for piece in range(first, end):
                    _piece(job, piece, out_at, own)  # no scratch used
                _add(c, DONE, end - first)
            _add(c, ACTIVE, -1)
            idle = 0
            continue
        if own.size < n_tok * n_out:
            own = np.empty(n_tok * n_out, np.float32)
        scratch = _scratch(job[0], job[3], n_tok)
        while True:
            first, end = _take(c, gen, n_pieces)
            if first < 0:
                break
            for piece in range(first, end):
                _piece_into(job, piece, own, scratch)
            # hand these pieces over now, while the caller still works on its own (at the end of
            # the job, gate|up's whole half would be copied while the caller waited)
            _acquire(c)
            if _load(c, GEN) == gen and _load(c, ABANDONED) == 0:  # the caller still waits: hand over
                for piece in range(first, end):
                    o0 = piece * rows_a_piece
                    o1 = min(n_out, o0 + rows_a_piece)
                    for t in range(n_tok):
                        for o in range(o0, o1):
                            store_f32(out_at + 4 * (t * n_out + o), own[t * n_out + o])
                    _store(c, FLAGS + piece, gen)
                _add(c, DONE, end - first)
            _store(c, LOCK, 0)
        _add(c, ACTIVE, -1)
        idle = 0
    return last


class Sharing:
    """The helpers of this process (CORES - 1 of them, started on first use).

    Memory a late helper may still read stays alive: x is copied into a buffer of
    ours (grown, never freed), and the matrices of the jobs since the helpers were
    last idle are kept (``pins``). A helper writes only to memory of its own and,
    under the lock while the caller waits, to the caller's ``out``.
    """

    def __init__(self, n_helpers: int) -> None:
        self.ctl = np.zeros(_SLOTS, np.int64)
        self.ctl[YIELD] = _sched_yield()
        self.wake = threading.Event()
        self.busy = threading.Lock()  # one product at a time uses the helpers; others run alone
        self.x = np.zeros(0, np.float32)  # a copy of the job's x: grown, never freed (``old``), as a
        # late helper may still read it
        self.old: list[np.ndarray] = []
        self.pins: list = []
        self.dead = False
        self.sgemm = sgemm_address()
        self.threads = [threading.Thread(target=self._helper, name=f"attnlab-blocks-{i}", daemon=True)
                        for i in range(n_helpers)]  # fmt: skip
        for t in self.threads:
            t.start()

    def _helper(self) -> None:
        last = 0
        while True:
            try:
                last = helper_wait(self.ctl, last, SPINS)
            except BaseException:  # it cannot work here (a failed compilation): products run alone
                self.dead = True
                raise
            if last < 0:
                return
            self.ctl[SLEEPING] = 1  # nothing for a while: sleep until a product wakes us
            self.wake.wait()
            self.wake.clear()
            self.ctl[SLEEPING] = 0

    def product(self, w, x: np.ndarray, out: np.ndarray) -> bool:
        """``out = x @ w`` for x (T, n_in) float32 (out (T, n_out) float32) with the helpers; False
        (nothing done) when another product has them. More than one row of x is packed in tiles
        (kernels.pack) straight into our buffer."""
        n_t = x.shape[0]
        if -(-out.shape[1] // piece_rows(n_t, out.shape[1])) > MAX_PIECES:
            return False
        size, width = (x.size, 0) if n_t == 1 else packed_size(n_t, x.shape[1])
        xs = self.hold((w,), size)
        if xs is None:
            return False
        try:
            if n_t == 1:
                xs[...] = x[0]
            else:
                pack_into(x, xs, width)
            run_job(self.ctl, w.code, w._at, w._rows, w.parts[0].shape[1], xs, width, out, PATIENCE)
        finally:
            self.busy.release()
        return True

    def float_product(self, x: np.ndarray, w: np.ndarray, out: np.ndarray, columns: int) -> bool:
        """``out = x @ w`` for float32 x (T, n_in), w (n_in, n_out) (rows of unit stride; a view of
        matrices side by side too) and out (T, n_out), C-ordered, in pieces of ``columns`` columns,
        each one call of NumPy's BLAS sgemm (:func:`sgemm_address`) on this thread or a helper;
        False (nothing done) where there is no such sgemm or another product has the helpers."""
        if self.sgemm == 0 or -(-out.shape[1] // columns) > MAX_PIECES:
            return False
        if self.hold((), 0) is None:
            return False
        try:  # x and w as they are: no helper reads them once every block it took is done, as here
            run_float_job(self.ctl, self.sgemm, w.ctypes.data, w.strides[0] // 4, x, out, columns, _NEVER)
        finally:
            self.busy.release()
        return True

    def hold(self, matrices, size: int) -> np.ndarray | None:
        """Take the helpers for products on ``matrices`` (kept alive for late helpers) whose x needs
        ``size`` floats: the buffer x goes into (``ctl`` then publishes jobs), or None when another
        product has them (nothing taken). ``busy.release()`` after the products; compiled code that
        makes several (decode.block) takes them once."""
        if self.dead or not self.busy.acquire(blocking=False):
            return None
        if self.ctl[ACTIVE] == 0:  # no helper on an old job: their matrices may go
            self.pins.clear()
        self.pins.extend(matrices)
        self.x, xs = self._room(self.x, size)
        if self.ctl[SLEEPING]:
            self.wake.set()
        return xs

    def _room(self, buf: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        if buf.size < size:
            self.old.append(buf)
            buf = np.zeros(max(size, 2 * buf.size), np.float32)
        return buf, buf[:size]


def _sched_yield() -> int:
    """The address of libc's ``sched_yield`` (0 where there is none: waits then just poll)."""
    try:
        return ctypes.cast(ctypes.CDLL(None).sched_yield, ctypes.c_void_p).value or 0
    except (OSError, AttributeError, TypeError):  # pragma: no cover - no such libc
        return 0


def sgemm_address() -> int:
    """The address of ``cblas_sgemm`` in the OpenBLAS that NumPy multiplies with, with 64-bit integers
    (scipy-openblas64, as NumPy's wheels ship it); 0 where there is none (float products then take
    NumPy's matmul on our sleeping pool's threads)."""
    from attnlab.engine.threads import blas_libraries

    for lib in sorted(blas_libraries(), key=lambda lib: "numpy" not in str(lib.get("filepath", ""))):
        if lib.get("internal_api") != "openblas":
            continue
        try:
            dll = ctypes.CDLL(lib["filepath"])
        except (OSError, KeyError, TypeError):
            continue
        for name in ("scipy_cblas_sgemm64_", "cblas_sgemm64_"):
            f = getattr(dll, name, None)
            if f is not None:
                return ctypes.cast(f, ctypes.c_void_p).value or 0
    return 0


_sharing: Sharing | None = None
_sharing_lock = threading.Lock()


def sharing(n_threads: int) -> Sharing | None:
    """The process's helpers for ``n_threads`` threads in all (None for one thread)."""
    global _sharing
    if n_threads < 2:
        return None
    with _sharing_lock:
        if _sharing is None or len(_sharing.threads) != n_threads - 1:
            _stop(_sharing)
            _sharing = Sharing(n_threads - 1)
        return _sharing


def _stop(s: Sharing | None) -> None:
    if s is not None:
        s.ctl[STOP] = 1
        s.wake.set()


def _forget_after_fork() -> None:  # the helpers do not exist in a forked child
    global _sharing, _sharing_lock
    _sharing, _sharing_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
atexit.register(lambda: _stop(_sharing))
