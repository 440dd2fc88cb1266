"""Tiled attention: the FlashAttention-2 forward pass, never holding an L x S matrix.

For each block of ``block_q`` queries, walk the keys in tiles of ``block_k``,
keeping per query a running maximum m, a running sum l of exponentials and an
unnormalised output accumulator:

    s     = q_blk k_tile^T * scale                  (block_q, block_k)
    m_new = max(m, rowmax(s))
    p     = exp(s - m_new)
    l     = l * exp(m - m_new) + rowsum(p)
    acc   = acc * exp(m - m_new) + p v_tile
    ...
    out   = acc / l          (one division at the end)
    lse   = m + log(l)       (the logsumexp, kept for a backward pass)

Working memory is O(block_q x block_k) per block beside q, k, v and the output:
O(L x tile), not O(L x S). The result equals :func:`attention` up to rounding
(~1e-15 relative in float64: the order of operations differs, not the maths).

Masks: ``causal`` ("top_left" or "bottom_right", as in :func:`attention`) and
``key_padding_mask`` (..., S), ``True`` = real token; key tiles that a causal
mask blocks entirely are skipped. A fully masked row returns zeros and a
logsumexp of ``-inf``.

This is the readable reference, in array-API operations, for NumPy or any
array-API library. The threaded NumPy kernel (numba in float32) is
:func:`attnlab.engine.fast.tiled.tiled_attention`, the same call with a
``backend`` and ``threads``; tests hold it to this one. NumPy's BLAS is held to
one thread (:mod:`attnlab.engine.threads`): the numbers are the same bits under
any thread count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine._arrays import Array, arange, broadcast_shape, check_finite, fits, shape_of
from attnlab.engine.attention import check_causal, check_scores, prepare_qkv
from attnlab.engine.errors import FieldError
from attnlab.engine.threads import one_blas_thread


@dataclass(frozen=True, eq=False)
class TileStep:
    """The running state of one query block just after one key tile.

    Query rows ``[q_start, q_stop)`` after keys ``[k_start, k_stop)``: ``m`` (..., bq)
    the running maximum, ``l`` (..., bq) the running sum of exponentials, ``acc``
    (..., bq, d_v) the unnormalised output (``acc / l`` is the output so far).
    """

    q_start: int
    q_stop: int
    k_start: int
    k_stop: int
    m: Array
    l: Array  # noqa: E741 - the paper's name
    acc: Array


@dataclass(frozen=True, eq=False)
class TiledResult:
    """Output of :func:`tiled_attention`: ``output`` (..., L, d_v), ``logsumexp``
    (..., L) of the scaled allowed scores (``-inf`` when fully masked), and
    ``fully_masked`` bool (..., L)."""

    output: Array
    logsumexp: Array
    fully_masked: Array


def tiled_attention(
    q: Array,
    k: Array,
    v: Array,
    *,
    block_q: int = 512,
    block_k: int | None = 512,
    causal: str | None = None,
    scale: float | None = None,
    key_padding_mask: Array | None = None,
) -> TiledResult:
    """Attend like :func:`attention` in tiles of ``block_q`` queries by ``block_k`` keys.

    Shapes as in :func:`attention`: q (..., L, d_k), k (..., S, d_k),
    v (..., S, d_v). ``block_k=None`` takes whole key rows (one tile per query
    block). Under a causal mask, key tiles that the mask blocks for a whole
    query block are skipped.
    """
    xp, q, k, v, scale, padding, batch, n_q, n_k, block_k = prepare_tiles(
        q, k, v, block_q=block_q, block_k=block_k, causal=causal, scale=scale,
        key_padding_mask=key_padding_mask,
    )  # fmt: skip
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_finite(xp, a, name)
    with one_blas_thread():  # NumPy's products round alike under any BLAS thread count (engine/threads.py)
        return tiles(xp, q, k, v, scale, causal, padding, batch, n_q, n_k, block_q, block_k)


def tiled_steps(
    q: Array,
    k: Array,
    v: Array,
    *,
    block_q: int = 512,
    block_k: int | None = 512,
    causal: str | None = None,
    scale: float | None = None,
    key_padding_mask: Array | None = None,
) -> tuple[TiledResult, list[TileStep]]:
    """:func:`tiled_attention`, and the running m, l and acc of every query block after every key tile.

    The same pass, so the same bits: the result equals :func:`tiled_attention`'s, and the last
    step of each query block holds the m and l its output was divided by. Steps come in
    the order the pass takes them (query block by query block, key tiles left to right);
    key tiles a causal mask skips have no step.
    """
    xp, q, k, v, scale, padding, batch, n_q, n_k, block_k = prepare_tiles(
        q, k, v, block_q=block_q, block_k=block_k, causal=causal, scale=scale,
        key_padding_mask=key_padding_mask,
    )  # fmt: skip
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_finite(xp, a, name)
    steps: list[TileStep] = []
    with one_blas_thread():
        result = tiles(xp, q, k, v, scale, causal, padding, batch, n_q, n_k, block_q, block_k, steps=steps)
    return result, steps


def prepare_tiles(q, k, v, *, block_q, block_k, causal, scale, key_padding_mask):
    """Check a tiled call's arguments; return ``(xp, q, k, v, scale, padding, batch, n_q, n_k, block_k)``."""
    check_causal(causal)
    for name, size in (("block_q", block_q), ("block_k", block_k)):
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 1):
            raise FieldError(name, f"must be a positive int, not {size!r}")
    xp, q, k, v, scale = prepare_qkv(q, k, v, scale, check_values=False)
    qs, ks, vs = shape_of(q), shape_of(k), shape_of(v)
    batch = broadcast_shape(qs[:-2], ks[:-2], vs[:-2], fields=("q", "k", "v"))
    n_q, n_k = qs[-2], ks[-2]
    padding = None
    if key_padding_mask is not None:
        padding = _check_padding(xp, key_padding_mask, batch, n_k)
    block_k = n_k if block_k is None else min(block_k, n_k)
    return xp, q, k, v, scale, padding, batch, n_q, n_k, block_k


def _check_padding(xp, key_padding_mask, batch, n_k):
    from attnlab.engine._arrays import as_array

    kpm = as_array(key_padding_mask, "key_padding_mask")
    shape = shape_of(kpm)
    if kpm.dtype != xp.bool or not shape or shape[-1] != n_k or not fits(shape[:-1], batch):
        raise FieldError(
            "key_padding_mask",
            f"has shape {shape} and dtype {kpm.dtype}; it must be bool "
            f"(..., S={n_k}) with leading dimensions that broadcast to {batch}"
        )
    return kpm


def tiles(xp, q, k, v, scale, causal, padding, batch, n_q, n_k, block_q, block_k, steps=None):
    """FlashAttention-2 forward in array-API operations (see the module docstring).

    ``steps``: a list to append a :class:`TileStep` to after every key tile (None: keep none).
    """
    d_v = shape_of(v)[-1]
    offset = 0 if causal != "bottom_right" else n_k - n_q
    outs, lses, fulls = [], [], []
    for i0 in range(0, n_q, block_q):
        i1 = min(n_q, i0 + block_q)
        rows = i1 - i0
        q_blk = q[..., i0:i1, :]  # (..., bq, d_k)
        m = xp.full(batch + (rows,), -xp.inf, dtype=q.dtype, device=_device(q))
        total = xp.zeros(batch + (rows,), dtype=q.dtype, device=_device(q))
        acc = xp.zeros(batch + (rows, d_v), dtype=q.dtype, device=_device(q))
        i_idx = xp.reshape(arange(xp, rows, q) + i0, (rows, 1))
        # keys beyond the last row's causal limit are blocked for the whole block
        hi = n_k if causal is None else max(0, min(n_k, i1 + offset))
        for j0 in range(0, hi, block_k):
            j1 = min(hi, j0 + block_k)
            with np.errstate(over="ignore", invalid="ignore"):  # reported by check_scores
                s = (q_blk @ xp.matrix_transpose(k[..., j0:j1, :])) * scale  # (..., bq, bk)
            check_scores(xp, s)
            allowed = None
            if causal is not None and j1 - 1 > i0 + offset:  # the tile crosses the diagonal
                allowed = xp.reshape(arange(xp, j1 - j0, q) + j0, (1, j1 - j0)) <= i_idx + offset
            if padding is not None:
                pad = xp.expand_dims(padding[..., j0:j1], axis=-2)  # (..., 1, bk)
                allowed = pad if allowed is None else xp.logical_and(allowed, pad)
            if allowed is None:
                m_new = xp.maximum(m, xp.max(s, axis=-1))
                p = xp.exp(s - xp.expand_dims(m_new, axis=-1))
            else:
                allowed = xp.broadcast_to(allowed, shape_of(s))
                m_new = xp.maximum(m, xp.max(xp.where(allowed, s, -xp.inf), axis=-1))
                m_safe = xp.where(m_new == -xp.inf, 0.0, m_new)  # no key allowed yet
                shifted = xp.where(allowed, s - xp.expand_dims(m_safe, axis=-1), 0.0)
                p = xp.where(allowed, xp.exp(shifted), 0.0)
            # rescale what was accumulated under the old maximum (exp(-inf) = 0 when empty)
            correction = xp.exp(m - xp.where(m_new == -xp.inf, 0.0, m_new))
            total = total * correction + xp.sum(p, axis=-1)
            acc = acc * xp.expand_dims(correction, axis=-1) + p @ v[..., j0:j1, :]
            m = m_new
            if steps is not None:  # m, total and acc are new arrays each tile: keeping them is safe
                steps.append(TileStep(i0, i1, j0, j1, m, total, acc))
        fully = total == 0.0
        outs.append(acc / xp.expand_dims(xp.where(fully, 1.0, total), axis=-1))
        lses.append(xp.where(fully, -xp.inf, m + xp.log(xp.where(fully, 1.0, total))))
        fulls.append(fully)
    return TiledResult(
        output=xp.concat(outs, axis=-2),
        logsumexp=xp.concat(lses, axis=-1),
        fully_masked=xp.concat(fulls, axis=-1),
    )


def _device(x):
    from array_api_compat import device

    return device(x)
