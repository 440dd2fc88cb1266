"""A NumPy fast path for one pre-norm Llama-style block (RMSNorm, GQA, RoPE, SwiGLU).

Token-by-token decoding runs every block once per token on a single row, so
the generic path's per-call work (namespace look-ups, shape checks, trace
bookkeeping, masks, the NaN scan of every intermediate) cost ~0.5 ms a block,
as much as a third of the step beside the weight reads. This module does the
same arithmetic with plain NumPy calls on 2-D arrays, in the same order as the
generic path (scores = (q @ k^T) * scale, max-shifted exp, divide, @ v), so the
two agree to rounding (tested).

:func:`transformer_block` takes this path on its own when it applies
(:func:`fast_block_applies`); anything unusual (a trace, masks, biases, batch
axes, LayerNorm, another dtype, a NaN or inf anywhere) goes the generic way,
which also produces the errors.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from attnlab.engine.cache import KVCache
from attnlab.engine.layers import RMSNormParams, SwiGLUParams
from attnlab.engine.positions import RoPE

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # params -> (n_head, n_kv_head, dtype)


def fast_block_applies(
    x,
    params,
    *,
    n_head,
    n_kv_head,
    norm,
    mask,
    causal,
    key_padding_mask,
    rope,
    positions,
    cache,
    scale,
    return_trace,
) -> bool:
    """Whether :func:`numpy_decoder_block` computes exactly this :func:`transformer_block` call."""
    if return_trace or norm != "pre" or mask is not None or key_padding_mask is not None:
        return False
    if causal != "bottom_right" or type(x) is not np.ndarray or x.ndim != 2 or x.dtype not in _FLOATS:
        return False
    if rope is not None and not isinstance(rope, RoPE):
        return False
    if positions is not None and not (type(positions) is np.ndarray and positions.shape == (x.shape[0],)):
        return False
    if cache is not None and (
        type(cache) is not KVCache or (cache.keys is not None and cache._k_buf is None)
    ):
        return False
    if scale is not None and not isinstance(scale, float | int):
        return False
    n_kv_head = n_head if n_kv_head is None else n_kv_head
    key = (n_head, n_kv_head, x.dtype, x.shape[1], None if rope is None else rope.head_dim)
    try:
        if _checked.get(params) == key:
            return True
    except TypeError:  # pragma: no cover - params not weak-referenceable
        return False
    if not _params_fit(params, *key):
        return False
    _checked[params] = key
    return True


def _params_fit(params, n_head, n_kv_head, dtype, d_model, rope_dim) -> bool:
    """Check once per params object that its weights suit the fast path (else: generic path)."""
    a, f = params.attn, params.mlp
    if not (isinstance(params.norm_1, RMSNormParams) and isinstance(params.norm_2, RMSNormParams)):
        return False
    if not isinstance(f, SwiGLUParams) or any(b is not None for b in (a.b_q, a.b_k, a.b_v, a.b_o)):
        return False
    arrays = [a.w_q, a.w_k, a.w_v, a.w_o, f.w_gate, f.w_up, f.w_down]
    arrays += [n.weight for n in (params.norm_1, params.norm_2) if n.weight is not None]
    if any(type(w) is not np.ndarray or w.dtype != dtype for w in arrays):
        return False
    if isinstance(n_head, bool) or not isinstance(n_head, int) or not isinstance(n_kv_head, int):
        return False
    if n_head < 1 or n_kv_head < 1 or n_head % n_kv_head:
        return False
    if a.w_q.ndim != 2 or a.w_q.shape[0] != d_model or a.w_q.shape[1] % n_head:
        return False
    d_head = a.w_q.shape[1] // n_head
    if a.w_k.shape != (d_model, n_kv_head * d_head) or a.w_v.ndim != 2 or a.w_v.shape[0] != d_model:
        return False
    if a.w_v.shape[1] % n_kv_head or a.w_o.shape != (n_head * (a.w_v.shape[1] // n_kv_head), d_model):
        return False
    if rope_dim is not None and rope_dim != d_head:
        return False
    d_ff = f.w_gate.shape[1] if f.w_gate.ndim == 2 else -1
    if (
        f.w_gate.shape != (d_model, d_ff)
        or f.w_up.shape != (d_model, d_ff)
        or f.w_down.shape != (d_ff, d_model)
    ):
        return False
    return all(n.weight is None or n.weight.shape == (d_model,) for n in (params.norm_1, params.norm_2))


def _rms(x: np.ndarray, p: RMSNormParams) -> np.ndarray:
    y = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + p.eps)
    return y if p.weight is None else y * p.weight


def numpy_decoder_block(x, params, *, n_head, n_kv_head, rope, positions, cache, scale):
    """Run the block on x (L, d_model); return ``(output, attention, weights, heads)`` or None.

    attention (L, d_model) is the attention sublayer's output (before the
    residual), weights (n_head, L, S), heads (n_head, L, d_v). None (and the cache left
    untouched) when a NaN or inf shows up: the generic path then raises.
    """
    n_kv_head = n_head if n_kv_head is None else n_kv_head
    a, f = params.attn, params.mlp
    n = x.shape[0]
    d_head = a.w_q.shape[1] // n_head
    d_v = a.w_v.shape[1] // n_kv_head
    g = n_head // n_kv_head
    # 1) normalise and project: (L, H*d) -> (H, L, d)
    h = _rms(x, params.norm_1)
    q = (h @ a.w_q).reshape(n, n_head, d_head).transpose(1, 0, 2)
    k = (h @ a.w_k).reshape(n, n_kv_head, d_head).transpose(1, 0, 2)
    v = (h @ a.w_v).reshape(n, n_kv_head, d_v).transpose(1, 0, 2)
    if not (np.isfinite(q).all() and np.isfinite(k).all() and np.isfinite(v).all()):
        return None
    past = cache.length if cache is not None else 0
    if rope is not None:
        pos = positions if positions is not None else np.arange(past, past + n)
        cos, sin = rope.cos_sin(pos, like=q)
        q, k = rope.rotate(q, cos, sin), rope.rotate(k, cos, sin)
    if cache is not None:
        k, v = cache.append(k, v)
    s = k.shape[-2]
    # 2) attend; query head h reads KV head h // g: group the query heads (H_kv, g*L, d)
    qg = q.reshape(n_kv_head, g * n, d_head)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = qg @ k.transpose(0, 2, 1)
        scores *= x.dtype.type(1.0 / math.sqrt(d_head) if scale is None else scale)
    if not np.isfinite(scores).all():
        return None  # pragma: no cover - the generic path names the overflow
    scores = scores.reshape(n_kv_head, g, n, s)
    if n > 1:  # bottom-right causal band: row i sees keys j <= i + s - n (s >= n: never a whole row)
        blocked = np.triu(np.ones((n, s), dtype=bool), k=s - n + 1)
        scores[..., blocked] = -np.inf
    m = scores.max(axis=-1, keepdims=True)
    exps = np.exp(scores - m)
    weights = exps / exps.sum(axis=-1, keepdims=True)
    heads = (weights.reshape(n_kv_head, g * n, s) @ v).reshape(n_head, n, d_v)
    attn = heads.transpose(1, 0, 2).reshape(n, n_head * d_v) @ a.w_o
    r = x + attn
    # 3) SwiGLU feed-forward
    u = _rms(r, params.norm_2)
    gate = u @ f.w_gate
    act = _silu(gate)
    act *= u @ f.w_up
    out = r + act @ f.w_down
    return out, attn, weights.reshape(n_head, n, s), heads


def _silu(z: np.ndarray) -> np.ndarray:
    """``z * sigmoid(z)`` as :func:`attnlab.engine.layers.silu` computes it (no overflow)."""
    e = np.exp(-np.abs(z))
    sig = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(z.dtype, copy=False)
    return z * sig
