"""Several decoding steps through one block at once: each row a step of its own, the weights read once.

Row r is one new token. Its sequence's keys and values are ``caches[r]`` and it
sits at ``positions[r]``, that cache's length when its key goes in: rows that
share one cache are consecutive tokens of one sequence, in order (a speculative
verification); rows with caches of their own are a batch of requests. Row r
attends to its cache's first ``positions[r] + 1`` keys (its own last).

Every row goes through the very calls a one-row step makes
(:func:`attnlab.engine.fast.decode.numpy_decoder_block` on ``x[r:r+1]``):
RMSNorm, RoPE, its cache's append, attention and SiLU, one row at a time. Only
the products take all the rows at once, and they keep each row's bits:
:func:`attnlab.engine.fast.quant.rows.product_rows` on blocks (each row the
one-row product's order), one product per row on float weights. So row r's
output is, bit for bit, what a one-row step on the same cache gives, whatever
the other rows: a verification or a batch changes no token (tested).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attnlab.engine.cache import KVCache
from attnlab.engine.fast.decode import _product, fast_block_applies, joined_projections, steps
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.fast.quant.rows import product_rows
from attnlab.engine.positions import RoPE


def rows_product(x: np.ndarray, w) -> np.ndarray:
    """``x @ w`` for x (R, n_in), row r the bits of the one-row step's ``_product(x[r:r+1], w)``."""
    if isinstance(w, QuantMatrix):
        return product_rows(x, w)
    return np.concatenate([_product(x[r : r + 1], w) for r in range(x.shape[0])])


def rows_apply(
    x: np.ndarray,
    params,
    *,
    n_head: int,
    n_kv_head: int,
    rope: RoPE | None,
    positions: np.ndarray,
    caches: Sequence[KVCache],
) -> bool:
    """Whether :func:`decoder_rows_block` computes these rows (the one-row fast path applies to each)."""
    if x.ndim != 2 or positions.shape != (x.shape[0],) or len(caches) != x.shape[0]:
        return False
    return all(
        fast_block_applies(
            x[r : r + 1], params, n_head=n_head, n_kv_head=n_kv_head, norm="pre", mask=None,
            causal="bottom_right", key_padding_mask=None, rope=rope, positions=positions[r : r + 1],
            cache=caches[r], scale=None, return_trace=False,
        )  # fmt: skip
        for r in range(x.shape[0])
    )


def decoder_rows_block(
    x: np.ndarray,
    params,
    *,
    n_head: int,
    n_kv_head: int,
    rope: RoPE | None,
    positions: np.ndarray,
    caches: Sequence[KVCache],
) -> np.ndarray | None:
    """Run the block on x (R, d_model), row r a decoding step on ``caches[r]`` at ``positions[r]``.

    Returns the block's output (R, d_model), or None, the caches as they were, when a number is
    not finite (then each row's one-row step, which raises, says where). ``rows_apply`` first.
    """
    a, f = params.attn, params.mlp
    qkv_w, gate_up_w = joined_projections(params)
    n = x.shape[0]
    n_q, n_k = a.w_q.shape[1], a.w_k.shape[1]
    d_head = n_q // n_head
    d_v = a.w_v.shape[1] // n_kv_head
    g = n_head // n_kv_head
    k = steps.kernels()
    rows = range(n)
    # 1) normalise (row by row) and project (all rows: each row's own bits)
    h = np.concatenate([steps.rms(x[r : r + 1], params.norm_1, k) for r in rows])
    if qkv_w is not None:
        qkv = rows_product(h, qkv_w)
    else:
        qkv = np.concatenate([rows_product(h, a.w_q), rows_product(h, a.w_k), rows_product(h, a.w_v)], axis=1)
    if not np.isfinite(qkv).all():
        return None
    before = [c.length for c in caches]
    # 2) each row rotates its q and k, and appends its key and value to its cache (in row order)
    qks = []
    for r in rows:
        one = qkv[r : r + 1]
        if rope is not None:
            qk = steps.rotate_qk(rope, one, n_head + n_kv_head, d_head, positions[r : r + 1], k)
        else:
            qk = one[:, : n_q + n_k].reshape(1, n_head + n_kv_head, d_head)
        keys = qk[:, n_head:].transpose(1, 0, 2)  # (H_kv, 1, d)
        values = one[:, n_q + n_k :].reshape(1, n_kv_head, d_v).transpose(1, 0, 2)
        caches[r].append(keys, values)
        qks.append(qk)
    # 3) each row attends to its cache's keys up to its own
    scale = x.dtype.type(1.0 / math.sqrt(d_head))
    sides = []
    for r in rows:
        seen = positions[r] + 1
        keys, values = caches[r].keys[..., :seen, :], caches[r].values[..., :seen, :]
        done = steps.attend(qks[r], n_head, keys, values, g, scale, k)
        if done is None:  # pragma: no cover - a score that overflows: the one-row step names it
            for c, length in zip(caches, before):
                c.truncate(min(length, c.length))
            return None
        sides.append(done[2])
    attn = rows_product(np.concatenate(sides), a.w_o)
    res = x + attn
    # 4) SwiGLU feed-forward: normalise and gate row by row, multiply all rows
    u = np.concatenate([steps.rms(res[r : r + 1], params.norm_2, k) for r in rows])
    d_ff = f.w_gate.shape[1]
    if gate_up_w is not None:
        gate_up = rows_product(u, gate_up_w)
    else:
        gate_up = np.concatenate([rows_product(u, f.w_gate), rows_product(u, f.w_up)], axis=1)
    act = np.concatenate([steps.gated(gate_up[r : r + 1], d_ff, k) for r in rows])
    out = rows_product(act, f.w_down)
    out += res
    return out
