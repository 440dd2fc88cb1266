"""The NumPy kernel behind :func:`tiled_attention`: threads, in-place tiles, no L x S matrix.

Same tiling as the generic FlashAttention-2 code, three changes that make it
fast on a CPU:

1. **A fixed bound instead of a running maximum.** Any per-query shift
   c_i >= max_j s_ij leaves the softmax unchanged, and Cauchy-Schwarz gives
   one for free: ``c_i = |q_i * scale| * max_j |k_j|``, so |s_ij| <= c_i. When
   a block's bounds are small (<= 30 in float32, 300 in float64), exp(s) can
   neither overflow nor lose a row to underflow, and the scores go to exp
   unshifted: a tile is ``exp2(matmul)`` (log2(e) folded into q: NumPy's exp2
   is faster and closer than its exp) with no max pass, no subtraction pass
   and no rescaling of the accumulator. Otherwise each row is shifted by its
   bound (one pass), so exp never overflows; the price is an absolute rounding
   error of ~eps * c instead of ~eps * max in each exponent. Rows whose bound
   was so loose that their sum came out below ``_RESCUE`` (the exponentials
   risk underflow), rows whose bound overflowed (their sum is NaN), rows whose
   weighted values overflowed, and fully masked rows are recomputed exactly by
   :func:`attention`, which also names scores that overflow.
   Masks never write -inf (NumPy's exp and exp2 are slow on it): the causal band
   multiplies the exponentials by 0, and a padding key gets a zero value row
   and a zero weight in the row sums.
2. **Operands as they come.** q is scaled once; k and v are used in place (an
   appended column of ones, ``[v, 1]``, would give the row sums from the second
   matmul, but 65-wide operands made NumPy's BLAS slower than 64-wide ones
   plus a matrix-vector product for the sums).
3. **Threads over (head, query block) tasks**, each with its own buffers kept
   between calls, written in place (``out=``); BLAS is held to one thread
   meanwhile (:func:`attnlab.engine.threads.one_blas_thread`), so NumPy's exp and
   the matmuls of two tasks run on two cores instead of contending. The tasks
   (and the runs of heads prepared together) depend on the shapes and block
   sizes only, never on the thread count, and each number is computed wholly
   by one task: ``threads=1``, ``2`` or any other count give the same bits.
   Tiles are 512 x 512 by default (1 MiB of float32 scores) so a tile stays in
   L2 from the first matmul through exp to the second. Under a causal mask a
   block takes full-height tiles over the keys all its rows see, then its
   diagonal in four pieces of rows, each ending at its own last row's keys
   (an eighth of the block's square is computed only to be masked, instead of
   half; two, three and eight pieces were measured against four:
   docs/performance.md).

In float32, a block whose scores go unshifted runs in one call of the kernel
compiled with numba (:mod:`attnlab.engine.fast.compiled`: the same tiles, BLAS
calls and rescue rules, with exp and the row sums in one pass and no GIL); the
code below does the rest (float64, shifted blocks, strided k or v), and every
block where numba or a BLAS it can call is missing.

Inputs are NumPy float32 or float64 arrays whose shapes :func:`prepare_qkv`
checked; NaN and inf show up in the norms and sums the threads compute while
preparing the heads, and only then does an exact scan run, to name the array.
"""

from __future__ import annotations

import functools
import math
import os
import threading

import numpy as np

from attnlab.engine.fast.workers import kept_scratch, run, workspace
from attnlab.engine.threads import one_blas_thread

_LOG2_E = 1.0 / math.log(2.0)
_LN_2 = math.log(2.0)
# Exponents below this (natural units) are raised to it: exp stays a normal number, since
# NumPy's exp2 takes a much slower scalar path for results that underflow. A raised term
# is <= exp(FLOOR) while a row that is not rescued has a term >= exp(-30) / S, so the S
# raised terms together weigh <= S^2 exp(FLOOR + 30): < 1e-12 of the row in float32
# (floor -80, S <= 65536) and far below float64 rounding (floor -700).
_FLOOR = {np.dtype(np.float32): -80.0, np.dtype(np.float64): -700.0}
# A row whose sum l falls below this may have lost terms to underflow; redo it exactly.
_RESCUE = {np.dtype(np.float32): math.exp(-30.0), np.dtype(np.float64): math.exp(-300.0)}
_DIAGONAL_PIECES = 4  # a causal block's diagonal tile is done in this many row pieces
# Heads are prepared in at most this many runs, whatever the thread count: per-head tasks of a
# dozen small NumPy calls each spent as long waiting for the GIL as computing.
_PREPARE_RUNS = 8
# Rows whose bound is at most this (natural units) use their scores unshifted: exp stays
# within [exp(-bound), exp(bound)], so nothing underflows and a row's sum stays >= _RESCUE.
_NO_SHIFT = {np.dtype(np.float32): 30.0, np.dtype(np.float64): 300.0}

def numpy_tiled_attention(
    q, k, v, *, scale, causal, padding, block_q, block_k, threads=None, check_values=True
):
    """Return ``(output, logsumexp, fully_masked)`` for NumPy q, k, v of one float dtype.

    Shapes as in :func:`attention`; ``padding`` is a bool (..., S) key padding
    mask (True = real token) or None; ``block_k`` <= S. With ``check_values``
    the threads also look for NaN and inf (a ValueError names the array).
    """
    dtype = q.dtype
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n_q, d_k = q.shape[-2:]
    n_k, d_v = k.shape[-2], v.shape[-1]
    n = math.prod(batch)
    flat = [np.broadcast_to(a, batch + a.shape[-2:]).reshape((n,) + a.shape[-2:]) for a in (q, k, v)]
    pad = None
    if padding is not None:
        pad = np.broadcast_to(np.asarray(padding, dtype), batch + (n_k,)).reshape(n, n_k)
    n_threads = max(1, threads or os.cpu_count() or 1)
    with kept_scratch():  # reuse scratch arrays, unless another call holds them
        compiled = _compiled_kernel() if dtype == np.float32 else None  # compiles on first use
        job = _Job(flat, pad, scale, causal, block_q, block_k, check_values, compiled)
        # our threads split the work (BLAS threads would only contend, and change the numbers)
        with one_blas_thread():
            # 1) scaled queries and bounds, in runs of heads fixed by the head count alone
            per = -(-n // min(n, _PREPARE_RUNS))
            run(job.prepare, [range(h, min(n, h + per)) for h in range(0, n, per)], n_threads)
            if job.suspect:  # raises, naming the array and its shape, if one holds NaN or inf
                from attnlab.engine._arrays import check_finite, namespace

                for name, a in zip("qkv", (q, k, v), strict=True):
                    check_finite(namespace(a), a, name)
            tasks = [(b, i0) for b in range(n) for i0 in range(0, n_q, block_q)]
            if causal is not None:  # dearest first (most keys), so the last tasks are cheap fillers
                tasks.sort(key=lambda t: -t[1])
            run(job.attend, tasks, n_threads)  # 2) attention, one query block per task
            out = job.out.reshape(batch + (n_q, d_v))
            lse = job.lse.reshape(batch + (n_q,))
            fully = np.isneginf(lse)
            if job.rescue:  # still one BLAS thread: the exact rows' products too
                _rescue(job.rescue, q, k, v, scale, causal, padding, batch, out, lse, fully)
    return out, lse, fully


def _compiled_kernel():
    """The compiled float32 functions (:class:`attnlab.engine.fast.compiled.Kernel`), or None.

    None where numba is missing or NumPy's BLAS is not one it can call: then the
    NumPy code does every block.
    """
    try:
        from attnlab.engine.fast import compiled
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    return compiled.kernel()


class _Job:
    """Shared state of one call: the scaled queries and their bounds, the outputs, the rows to redo."""

    def __init__(self, flat, pad, scale, causal, block_q, block_k, check_values, compiled):
        (q, k, v), dtype = flat, flat[0].dtype
        self.q, self.k, self.v, self.pad = q, k, v, pad
        n, n_q, d_k = q.shape
        n_k, d_v = k.shape[1], v.shape[2]
        self.qs = workspace("qs", (n, n_q, d_k), dtype)  # q * scale * log2(e): q.k is then in log2 units
        self.bound = workspace("bound", (n, n_q), dtype)  # |q_i| max_j |k_j|, same units
        # a padding key's value row becomes 0 and its weight in the row sums 0: it adds nothing
        self.v_pad = None if pad is None else workspace("v_pad", (n, n_k, d_v), dtype)
        self.ones = np.ones(block_k, dtype)
        self.out = np.empty((n, n_q, d_v), dtype)
        self.lse = np.empty((n, n_q), dtype)
        self.scale2 = dtype.type(scale * _LOG2_E)
        self.offset = None if causal is None else (0 if causal == "top_left" else n_k - n_q)
        self.block_q, self.block_k = block_q, block_k
        self.check_values = check_values
        self.suspect = False
        self.lock = threading.Lock()
        self.rescue: list[tuple[int, int]] = []
        self.band = None if causal is None else _band(block_q, dtype)
        self.floor = dtype.type(_FLOOR[dtype] * _LOG2_E)
        self.no_shift = float(_NO_SHIFT[dtype] * _LOG2_E)
        self.threshold = dtype.type(_RESCUE[dtype])
        self.compiled = compiled  # compiled.Kernel for float32 (preparation, unshifted blocks) or None
        self.piece = max(1, -(-block_q // _DIAGONAL_PIECES))  # rows of a causal diagonal piece

    def prepare(self, heads: range, buffers: dict) -> None:
        """Scale the queries of ``heads``, bound their scores (and look for NaN or inf)."""
        h0, h1 = heads.start, heads.stop
        q, k, v = self.q[h0:h1], self.k[h0:h1], self.v[h0:h1]  # (heads, rows, d)
        qs, bound = self.qs[h0:h1], self.bound[h0:h1]
        if self.compiled is not None and all(a.flags.c_contiguous for a in (q, k, v)):
            finite = self.compiled.prepare(q, k, v, self.scale2, qs, bound)  # the same, in one pass each
            if self.check_values and not finite:
                self.suspect = True
        else:
            self._prepare_numpy(q, k, v, qs, bound)
        if self.pad is not None:
            np.multiply(v, self.pad[h0:h1, :, None], out=self.v_pad[h0:h1])

    def _prepare_numpy(self, q, k, v, qs, bound) -> None:
        """:meth:`prepare` in NumPy operations: float64, strided inputs, or no compiled kernel."""
        with np.errstate(over="ignore", invalid="ignore"):  # a bound may overflow: see attend
            np.multiply(q, self.scale2, out=qs)
            k_norm = np.sqrt(np.einsum("hsd,hsd->hs", k, k).max(axis=1))  # max_j |k_j| per head
            np.einsum("hld,hld->hl", qs, qs, out=bound)
            np.sqrt(bound, out=bound)
            bound *= k_norm[:, None]
            # NaN and inf reach these sums (inf - inf is NaN), so finite sums clear the inputs
            # without a pass of their own; a non-finite one (or an overflow of huge values)
            # sends the caller to the exact scan, which names the array
            if self.check_values and not (
                np.isfinite(bound).all() and np.isfinite(k_norm).all() and np.isfinite(v.sum())
            ):
                self.suspect = True

    def attend(self, task: tuple[int, int], buffers: dict) -> None:
        """Attend from query block ``task = (head, first row)`` over its key tiles."""
        b, i0 = task
        qs, k = self.qs[b], self.k[b]
        v = self.v[b] if self.v_pad is None else self.v_pad[b]
        weights = None if self.pad is None else self.pad[b]  # a key's weight in the row sums (None: 1)
        dtype, d_v = qs.dtype, v.shape[-1]
        if buffers.get("key") != (self.block_q, self.block_k, d_v, dtype):
            buffers["key"] = (self.block_q, self.block_k, d_v, dtype)
            # one tile of exp(s - shift), flat so that a narrower tile is contiguous too
            # (NumPy's exp2 is about twice as slow on a strided view)
            buffers["s"] = np.empty(self.block_q * self.block_k, dtype)
            for name in ("acc", "part"):  # the weighted values
                buffers[name] = np.empty((self.block_q, d_v), dtype)
            for name in ("l", "l_part"):  # the row sums
                buffers[name] = np.empty(self.block_q, dtype)
            buffers["low"] = np.empty(self.block_q, np.uint8)  # rows the compiled code wants redone
        n_q, n_k = qs.shape[0], k.shape[0]
        i1 = min(n_q, i0 + self.block_q)
        rows = i1 - i0
        off = self.offset
        hi = n_k if off is None else max(0, min(n_k, i1 + off))  # keys any row may see
        acc = [buffers[name][:rows] for name in ("acc", "part", "l", "l_part")]
        q_blk, bound = qs[i0:i1], self.bound[b, i0:i1]
        # |s| <= bound (Cauchy-Schwarz). Small bounds: exp2(s) can neither overflow nor lose a
        # row to underflow, so the scores are used unshifted (no pass); else s - bound <= 0
        # per row, and when s - bound >= -2 bound could reach the floor, clamp it there
        top_bound = float(bound.max()) if rows else 0.0
        shift = bound if not top_bound <= self.no_shift else None  # NaN: shifted (and redone)
        if shift is None and self.compiled is not None and k.flags.c_contiguous and v.flags.c_contiguous:
            low = buffers["low"][:rows]  # the same tiles, pieces and rescue rule as below
            self.compiled.attend(qs, k, v, self.ones if weights is None else np.ascontiguousarray(weights),
                                 weights is not None, i0, i1, off or 0, off is not None, self.block_k,
                                 self.piece, buffers["s"], acc[2], self.threshold, self.out[b], self.lse[b],
                                 low)  # fmt: skip
            if low.any():
                with self.lock:
                    self.rescue.extend((b, i0 + int(i)) for i in np.flatnonzero(low))
            return
        clamp = shift is not None and 2.0 * top_bound > -self.floor
        # a bound that overflowed (|q| |k| beyond the dtype's range) makes NaN in its rows;
        # those rows are redone exactly below, which names an overflow of the scores
        with np.errstate(over="ignore", invalid="ignore"):
            tiles = functools.partial(
                self._tiles, k=k, v=v, weights=weights, flat=buffers["s"], clamp=clamp
            )
            if off is None:
                tiles(q_blk, acc, i0, 0, n_k, shift=shift, fresh=True)
            else:
                # keys every row of the block sees, in full-height tiles; then the diagonal,
                # in _DIAGONAL_PIECES sub-blocks that stop at their own last row's keys, so
                # that few of the scores computed are then masked
                full = min(hi, max(0, i0 + off))  # the first row sees keys 0 .. i0 + off
                if full > 0:
                    tiles(q_blk, acc, i0, 0, full, shift=shift, fresh=True)
                sub = self.piece
                for r0 in range(0, rows, sub):
                    r1 = min(rows, r0 + sub)
                    top = min(n_k, i0 + r1 + off)  # past the last key the sub-block's last row sees
                    if top > full:
                        part = [a[r0:r1] for a in acc]
                        part_shift = None if shift is None else shift[r0:r1]
                        tiles(q_blk[r0:r1], part, i0 + r0, full, top, shift=part_shift, fresh=full == 0)
                    elif full == 0:
                        acc[0][r0:r1], acc[2][r0:r1] = 0.0, 0.0  # no key: fully masked, redone below
            a, total = acc[0], acc[2]
            low = ~(total >= self.threshold)  # NaN too
            # one division at the end; lse = log(l) + shift
            out = self.out[b, i0:i1]
            np.divide(a, np.where(low, 1.0, total)[:, None], out=out)
            with np.errstate(divide="ignore"):
                np.log(total, out=self.lse[b, i0:i1])
        if shift is not None:
            self.lse[b, i0:i1] += shift * dtype.type(_LN_2)
        if not np.isfinite(out).all():  # weighted values beyond the dtype's range: redone exactly
            low |= ~np.isfinite(out).all(axis=1)
        if low.any():
            with self.lock:
                self.rescue.extend((b, i0 + int(i)) for i in np.flatnonzero(low))

    def _tiles(self, q_blk, acc, i0, lo, hi, *, k, v, weights, flat, shift, clamp, fresh) -> None:
        """Accumulate ``p v`` and the row sums of query rows ``i0 ..`` over keys ``lo .. hi``.

        ``acc`` = [p v, scratch, row sums, scratch]; ``shift`` is these rows' bounds
        or None (scores used unshifted); ``fresh``: ``acc`` holds nothing yet (the
        first tile writes it).
        """
        n_rows, off = q_blk.shape[0], self.offset
        a, part, total, total_part = acc
        if shift is not None:
            shift = shift[:, None]
        for j0 in range(lo, hi, self.block_k):
            j1 = min(hi, j0 + self.block_k)
            s = flat[: n_rows * (j1 - j0)].reshape(n_rows, j1 - j0)
            np.matmul(q_blk, k[j0:j1].T, out=s)  # s * log2(e), (rows, bk)
            if shift is not None:
                s -= shift
                if clamp:
                    np.maximum(s, self.floor, out=s)  # keep exp2 out of NumPy's slow underflow path
            np.exp2(s, out=s)  # = exp(s - shift)
            if off is not None:
                first = i0 + off + 1  # first key blocked for the first row
                if j1 > first:  # the tile reaches the causal band
                    c0 = max(j0, first)
                    s[:, c0 - j0 :] *= self.band[:n_rows, c0 - first : j1 - first]
            w = self.ones[: j1 - j0] if weights is None else weights[j0:j1]
            if fresh and j0 == lo:
                np.matmul(s, v[j0:j1], out=a)
                np.matmul(s, w, out=total)
            else:
                np.matmul(s, v[j0:j1], out=part)
                np.matmul(s, w, out=total_part)
                a += part
                total += total_part


@functools.lru_cache(maxsize=8)
def _band(size: int, dtype) -> np.ndarray:
    """1 below the diagonal, 0 on and above it: the causal band of a diagonal tile.

    Applied after exp (multiplying by 0 is exact; exp of -inf is slow in NumPy).
    Kept between calls (building it costs more than using it); read-only.
    """
    band = np.tril(np.ones((size, size), dtype), k=-1)
    band.flags.writeable = False
    return band


def _rescue(rows, q, k, v, scale, causal, padding, batch, out, lse, fully) -> None:
    """Recompute the listed (batch index, row) pairs exactly with :func:`attention`."""
    from attnlab.engine.attention import attention, causal_mask

    n_q, n_k = q.shape[-2], k.shape[-2]
    qb, kb, vb = (np.broadcast_to(a, batch + a.shape[-2:]) for a in (q, k, v))
    flat = [a.reshape((-1,) + a.shape[-2:]) for a in (qb, kb, vb)]
    out_f, lse_f, fully_f = out.reshape(-1, n_q, out.shape[-1]), lse.reshape(-1, n_q), fully.reshape(-1, n_q)
    pad = None if padding is None else np.broadcast_to(padding, batch + (n_k,)).reshape(-1, n_k)
    full_mask = None if causal is None else causal_mask(n_q, n_k, causal)
    for b, i in rows:
        allowed = np.ones((1, n_k), bool) if full_mask is None else full_mask[i : i + 1]
        if pad is not None:
            allowed = allowed & pad[b]
        res = attention(flat[0][b, i : i + 1], flat[1][b], flat[2][b], mask=allowed, scale=scale,
                        return_trace=True)  # fmt: skip
        out_f[b, i] = res.output[0]
        fully_f[b, i] = res.fully_masked[0]
        if res.fully_masked[0]:
            lse_f[b, i] = -np.inf
        else:
            lse_f[b, i] = res.trace["max"][0, 0] + np.log(res.trace["sum"][0, 0])
