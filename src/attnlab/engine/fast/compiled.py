"""The float32 query-block kernel of :mod:`attnlab.engine.fast.tiles`, compiled with numba.

Used for the query blocks whose scores :mod:`fast` takes unshifted (every
row's bound |q_i * scale| max_j |k_j| <= 30, so every score lies in [-30, 30]
natural units); blocks with larger bounds, float64, and k or v that are not
C-contiguous stay on the NumPy code. Per key tile it does what the NumPy code
does, in fewer passes over the tile and without the GIL:

1. ``s = q_blk k_tile^T`` (the scale and log2(e) already folded into q), by the
   BLAS call NumPy's matmul makes: ``cblas_sgemm`` of the OpenBLAS that NumPy
   loaded (found through threadpoolctl, so the same one-thread limit holds);
2. one pass over the tile that writes ``p = 2^s`` (0 where the causal mask
   blocks, without computing it) and adds each row's ``p`` (times its key's
   padding weight) to the row sum, where the NumPy code makes three: exp2, a
   matrix-vector product for the sums, the band multiply;
3. ``out (+)= p v_tile``, accumulated by the BLAS call itself (beta = 1) in the
   result rows, which are divided by the row sums at the end.

One call does a whole (head, query block) task, so two threads run two tasks
with one GIL hand-over each instead of one per NumPy call.

``2^s`` is computed as 2^n * 2^f with n = floor(s + 1/2) and f = s - n in
[-1/2, 1/2]: 2^n is built in the exponent bits, 2^f is a degree-6 polynomial
(coefficients below: a least-squares fit of the relative error at 4001
Chebyshev nodes of [-1/2, 1/2], max relative error 1.9e-9 before rounding).
In float32 the result is within 0.95 ulp of 2^s over [-44, 44] (NumPy's exp2:
1.0 ulp; 4 million points, ``tests/engine/fast/test_compiled.py``). The kernel
relies on |s| < 126, which the bound (|s| <= 43.3 in log2 units) guarantees.
"""

from __future__ import annotations

import ctypes
import functools
import math
import threading
from typing import NamedTuple

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from attnlab.engine.fast.jitcache import cached_jit

# 2^f ~= sum_i C[i] f^i on [-1/2, 1/2] (see the module docstring)
_COEFFICIENTS = (
    1.0,
    0.6931471824645996,
    0.24022646248340607,
    0.05550329014658928,
    0.009618519805371761,
    0.001339986571110785,
    0.00015337580407503992,
)
_C0, _C1, _C2, _C3, _C4, _C5, _C6 = (np.float32(c) for c in _COEFFICIENTS)
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112  # CBLAS enums
# NumPy's wheels ship OpenBLAS with 64-bit integers and these names; others need the NumPy code
_SGEMM_SYMBOLS = ("scipy_cblas_sgemm64_", "cblas_sgemm64_")

_lock = threading.Lock()
_kernel = None
_reason = ""


class Kernel(NamedTuple):
    """The compiled functions :mod:`attnlab.engine.fast.tiles` calls (float32, C-contiguous arrays)."""

    prepare: object  # prepare(q, k, v, scale2, qs, bound) -> all finite: see prepare_heads
    attend: object  # attend(qs, k, v, weights, ...): attend_block with NumPy's sgemm bound


def kernel() -> Kernel | None:
    """Return the compiled functions, or None when they cannot run here.

    The first call finds the BLAS and compiles (numba caches the machine code
    next to this file when it can, so later processes load it); :func:`reason`
    then says why it is None.
    """
    global _kernel, _reason
    with _lock:
        if _kernel is None and not _reason:
            try:
                found = Kernel(prepare=_prepare, attend=functools.partial(_attend, _sgemm_address()))
                _self_check(found)
                _kernel = found
            except Exception as exc:  # no usable BLAS, or a failed self-check
                _reason = f"{type(exc).__name__}: {exc}"
        return _kernel


def reason() -> str:
    """Why :func:`kernel` returned None ('' when it did not)."""
    return _reason


def _sgemm_address() -> int:
    """Address of ``cblas_sgemm`` (64-bit integers) in the OpenBLAS that NumPy uses."""
    from attnlab.engine.threads import blas_libraries

    found = []
    for lib in blas_libraries():
        if lib.get("internal_api") != "openblas":
            continue
        found.append(lib["filepath"])
        handle = ctypes.CDLL(lib["filepath"])
        for symbol in _SGEMM_SYMBOLS:
            if hasattr(handle, symbol):
                return ctypes.cast(getattr(handle, symbol), ctypes.c_void_p).value
    raise RuntimeError(f"no 64-bit-integer cblas_sgemm in the loaded OpenBLAS libraries {found}")


def _jit(**options):
    """numba.njit without the GIL, caching the machine code where numba finds a place to write it
    (under a lock: processes compiling at once must not mix their signatures, see jitcache)."""

    def decorate(func):
        return cached_jit(numba.njit, func, nogil=True, boundscheck=False, **options)

    return decorate


@intrinsic
def _as_float32(typingctx, bits):
    """Reinterpret an int32's bits as a float32 (no conversion)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@intrinsic
def _sgemm(typingctx, fn, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """Call the row-major cblas_sgemm at address ``fn``; a, b and c are addresses too.

    The address is an argument, not a constant, so that numba can cache the code.
    """
    i32, i64, f32 = types.int32, types.int64, types.float32
    sig = types.void(i64, i32, i32, i64, i64, i64, f32, i64, i64, i64, i64, f32, i64, i64)

    def codegen(context, builder, signature, args):
        i8p, i32t, i64t, ft = ir.IntType(8).as_pointer(), ir.IntType(32), ir.IntType(64), ir.FloatType()
        params = [i32t, i32t, i32t, i64t, i64t, i64t, ft, i8p, i64t, i8p, i64t, ft, i8p, i64t]
        fnty = ir.FunctionType(ir.VoidType(), params)
        f, ta_, tb_, m_, n_, k_, alpha_, a_, lda_, b_, ldb_, beta_, c_, ldc_ = args
        a_, b_, c_ = (builder.inttoptr(x, i8p) for x in (a_, b_, c_))
        order = ir.Constant(i32t, _ROW_MAJOR)
        builder.call(builder.inttoptr(f, fnty.as_pointer()),
                     [order, ta_, tb_, m_, n_, k_, alpha_, a_, lda_, b_, ldb_, beta_, c_, ldc_])  # fmt: skip
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _wide_vectors(typingctx):
    """Let LLVM vectorize the calling function with 512-bit registers where the CPU has them.

    LLVM prefers 256-bit vectors on Intel's server CPUs by default, and the exp
    pass runs faster with 512 (docs/performance.md). A string
    attribute, which llvmlite's list of known names lacks, hence ``set.add``.
    Harmless where the CPU has no AVX-512: LLVM takes the widest it has.
    """

    def codegen(context, builder, signature, args):
        set.add(builder.function.attributes, '"prefer-vector-width"="512"')
        return context.get_dummy_value()

    return types.void(), codegen


@numba.njit(inline="always")
def _exp2(x):
    """2^x for a float32 |x| < 126 (see the module docstring)."""
    n = np.floor(x + np.float32(0.5))
    f = x - n
    p = (((((_C6 * f + _C5) * f + _C4) * f + _C3) * f + _C2) * f + _C1) * f + _C0
    return p * _as_float32((np.int32(n) + np.int32(127)) << np.int32(23))


# reassoc lets each row sum use vector lanes (as BLAS's matrix-vector product did)
@_jit(fastmath={"contract", "reassoc"})
def _exp2_rows(s, n_rows, cols, limit0, weights, weighted, sums, first):
    """``s[r, c] = 2^s[r, c]`` for c < limit0 + r, else 0; ``sums[r]`` (+)= row r's sum.

    ``s`` is flat, row-major (n_rows, cols), and |s| < 126; ``weights`` (cols,)
    each key's weight in the sums, read when ``weighted``; ``first``: overwrite
    the sums. 2^s = 2^n (built in the exponent bits) * 2^f (the polynomial),
    n = floor(s + 1/2), f = s - n in [-1/2, 1/2].
    """
    _wide_vectors()
    for r in range(n_rows):
        # a row slice indexed from 0: with s[r * cols + c] the index might be negative to
        # numba, and its wrap-around check kept LLVM from vectorizing the loop
        row = s[r * cols : (r + 1) * cols]
        lim = min(cols, max(0, limit0 + r))
        acc = np.float32(0.0)
        if weighted:
            for c in range(lim):
                e = _exp2(row[c])
                row[c] = e
                acc += e * weights[c]
        else:
            for c in range(lim):
                e = _exp2(row[c])
                row[c] = e
                acc += e
        row[lim:] = np.float32(0.0)
        sums[r] = acc if first else sums[r] + acc


@_jit(error_model="numpy")
def _span(fn, qs, k, v, weights, weighted, r0, n_rows, lo, hi, blocked, block_k, s, sums, out, fresh):
    """Add rows r0 .. r0 + n_rows of ``p v`` over keys lo .. hi into ``out``, their sums into ``sums``.

    Key j is blocked for row r0 + r when j >= blocked + r (causal; a large
    ``blocked`` blocks nothing). ``fresh``: overwrite ``out`` and ``sums``.
    """
    d, d_v = k.shape[1], v.shape[1]
    one, zero = np.float32(1.0), np.float32(0.0)
    q_at, k_at, v_at = np.int64(qs.ctypes.data), np.int64(k.ctypes.data), np.int64(v.ctypes.data)
    s_at, out_at = np.int64(s.ctypes.data), np.int64(out.ctypes.data)
    for j0 in range(lo, hi, block_k):
        j1 = min(hi, j0 + block_k)
        cols = j1 - j0
        first = fresh and j0 == lo
        # s = q k^T (rows, cols), then p = 2^s in place, then out (+)= p v
        _sgemm(fn, _NO_TRANS, _TRANS, n_rows, cols, d, one, q_at + r0 * d * 4, d, k_at + j0 * d * 4, d,
               zero, s_at, cols)  # fmt: skip
        _exp2_rows(s, n_rows, cols, blocked - j0, weights[j0:j1], weighted, sums, first)
        _sgemm(fn, _NO_TRANS, _NO_TRANS, n_rows, d_v, cols, one, s_at, cols, v_at + j0 * d_v * 4, d_v,
               zero if first else one, out_at + r0 * d_v * 4, d_v)  # fmt: skip


@_jit(error_model="numpy")
def attend_block(fn, qs, k, v, weights, weighted, i0, i1, offset, causal, block_k, piece,
                 s, sums, threshold, out, lse, low):  # fmt: skip
    """One (head, query block) task: rows i0 .. i1 of ``out`` (L, d_v) and ``lse`` (L,).

    ``fn``: address of cblas_sgemm. Arrays float32, C-contiguous: qs (L, d_k)
    the queries times scale * log2(e), k (S, d_k), v (S, d_v) (padding keys'
    rows already 0), weights (S,) each key's weight in the row sums (read when
    ``weighted``); s (>= block rows * block_k) scratch; sums (block rows,).
    ``causal``: row i sees keys j <= i + offset, the diagonal done in pieces
    of ``piece`` rows up to each piece's last key. ``low[r]`` (uint8) is set
    for the rows to redo exactly: sum below ``threshold`` (fully masked, or
    terms lost to underflow) or an output that is not finite. ``lse`` is the
    natural log of the row sum.
    """
    n_rows, n_k = i1 - i0, k.shape[0]
    unblocked = n_k + n_rows  # beyond every key: blocks nothing
    if not causal:
        _span(fn, qs, k, v, weights, weighted, i0, n_rows, 0, n_k, unblocked, block_k, s, sums, out, True)
    else:
        hi = max(0, min(n_k, i1 + offset))
        full = min(hi, max(0, i0 + offset))  # keys every row of the block sees
        if full > 0:
            _span(fn, qs, k, v, weights, weighted, i0, n_rows, 0, full, unblocked, block_k, s, sums, out,
                  True)  # fmt: skip
        for p0 in range(0, n_rows, piece):
            p1 = min(n_rows, p0 + piece)
            top = min(n_k, i0 + p1 + offset)  # past the last key the piece's last row sees
            if top > full:
                _span(fn, qs, k, v, weights, weighted, i0 + p0, p1 - p0, full, top, i0 + p0 + offset + 1,
                      block_k, s, sums[p0:], out, full == 0)  # fmt: skip
            elif full == 0:  # no key at all: fully masked, redone exactly
                for r in range(p0, p1):
                    sums[r] = np.float32(0.0)
                    out[i0 + r, :] = np.float32(0.0)
    d_v = out.shape[1]
    for r in range(n_rows):
        total = sums[r]
        bad = not total >= threshold  # NaN too
        divisor = np.float32(1.0) if bad else total
        row = out[i0 + r]
        for c in range(d_v):
            row[c] = row[c] / divisor
            if not math.isfinite(row[c]):
                bad = True
        lse[i0 + r] = np.log(total)
        low[r] = bad


@_jit(fastmath={"contract", "reassoc"}, error_model="numpy")
def prepare_heads(q, k, v, scale2, qs, bound):
    """Per head: ``qs = q * scale2`` and ``bound[i] = |qs_i| max_j |k_j|``; return whether all is finite.

    q (H, L, d_k), k (H, S, d_k), v (H, S, d_v); qs like q, bound (H, L). NaN
    and inf in q or k reach the bound or the norms of k, in v its sum (inf -
    inf is NaN): False sends the caller to the exact scan, which names the
    array (as does a sum of huge finite values that overflows).
    """
    finite = True
    for h in range(q.shape[0]):
        top = np.float32(0.0)
        for j in range(k.shape[1]):
            row = k[h, j]
            acc = np.float32(0.0)
            for c in range(row.size):
                acc += row[c] * row[c]
            finite = finite and math.isfinite(acc)  # max() below would drop a NaN
            top = max(top, acc)
        k_norm = np.sqrt(top)
        for i in range(q.shape[1]):
            src, dst = q[h, i], qs[h, i]
            acc = np.float32(0.0)
            for c in range(src.size):
                x = src[c] * scale2
                dst[c] = x
                acc += x * x
            bound[h, i] = np.sqrt(acc) * k_norm
            finite = finite and math.isfinite(bound[h, i])
        values = v[h].ravel()
        total = np.float32(0.0)
        for c in range(values.size):
            total += values[c]
        finite = finite and math.isfinite(total)
    return finite


def _prepare(q, k, v, scale2, qs, bound) -> bool:
    """:func:`prepare_heads` with q, k and v read-only (see :func:`_attend`)."""
    return prepare_heads(_read_only(q), _read_only(k), _read_only(v), scale2, qs, bound)


def _attend(fn, qs, k, v, weights, *args):
    """Call :func:`attend_block` with the arrays it only reads made read-only.

    numba compiles once per argument type, and read-only is part of the type
    (NumPy hands the kernel read-only k and v whenever they were broadcast):
    one type instead of several spares a compilation each (docs/performance.md).
    """
    return attend_block(fn, _read_only(qs), _read_only(k), _read_only(v), _read_only(weights), *args)


def _read_only(a: np.ndarray) -> np.ndarray:
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


def _self_check(found: Kernel) -> None:
    """Compile, and compare a small causal, padded head with float64 NumPy (a wrong BLAS ABI shows here)."""
    rng = np.random.default_rng(0)
    n, d, scale2 = 6, 3, np.float32(0.7)
    q, k, v = (rng.standard_normal((1, n, d)).astype(np.float32) for _ in range(3))
    qs, bound = np.empty_like(q), np.empty((1, n), np.float32)
    finite = found.prepare(q, k, v, scale2, qs, bound)
    q64, k64 = q[0].astype(np.float64) * 0.7, k[0].astype(np.float64)
    expected_bound = np.linalg.norm(q64, axis=1) * np.linalg.norm(k64, axis=1).max()
    weights = np.array([1, 1, 0, 1, 1, 1], np.float32)
    v_pad = v[0] * weights[:, None]
    out, lse = np.empty((n, d), np.float32), np.empty(n, np.float32)
    s, sums, low = np.empty(n * n, np.float32), np.empty(n, np.float32), np.zeros(n, np.uint8)
    found.attend(qs[0], k[0], v_pad, weights, True, 0, n, 0, True, 4, 2, s, sums, np.float32(1e-13),
                 out, lse, low)  # fmt: skip
    p = np.exp2(q64 @ k64.T) * np.tril(np.ones((n, n))) * weights
    expected = (p @ v_pad) / p.sum(axis=1, keepdims=True)
    if not (finite and np.allclose(bound[0], expected_bound, rtol=1e-5)):
        raise RuntimeError(f"the compiled preparation disagrees with NumPy: {bound[0]} vs {expected_bound}")
    if low.any() or not np.allclose(out, expected, rtol=1e-5, atol=1e-6):
        diff = np.abs(out - expected).max()
        raise RuntimeError(f"the compiled kernel disagrees with NumPy (max diff {diff})")
