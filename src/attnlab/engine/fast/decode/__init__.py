"""A NumPy fast path for one pre-norm Llama-style block (RMSNorm, GQA, RoPE, SwiGLU).

Token-by-token decoding runs every block once per token on a single row, so
the generic path's per-call work (namespace look-ups, shape checks, trace
bookkeeping, masks, the NaN scan of every intermediate) cost as much as a
third of the step beside the weight reads (docs/performance.md). This module does the
same arithmetic with plain NumPy calls on 2-D arrays, in the same order as the
generic path (scores = (q @ k^T) * scale, max-shifted exp, divide, @ v), so the
two agree to rounding (tested).

A step is bound by reading the weights (135 M float32 parameters for
SmolLM2, about half the bytes as the file's Q4_1 blocks: weights may be
:class:`attnlab.engine.fast.quant.QuantMatrix`, whose products run on the blocks), so the
path also reads them in as few products as it can: when a block's w_q, w_k, w_v (and
w_gate, w_up) are adjacent column blocks of one array (:func:`side_by_side`, as the
SmolLM2 loader lays them out), or matrices
of blocks (joined without a copy), one product covers the group. RoPE's
cos/sin are computed once per step for all the layers.

Every number comes from one single-threaded BLAS call (SmolLM2 holds BLAS to
one thread around its blocks, :mod:`attnlab.engine.threads`), so none depends
on the thread count. A prompt's float products (16 rows or more) are shared
out among our own threads in column blocks fixed by the weights' shapes
(:func:`_product`), and so are a long prompt's attention heads (one head a task, from
64 x 64 scores a head); a decoding step's products are not: waking a thread takes
as long as a 576 x 576 product, and sharing even the widest (gate|up, 7 MB) saved
little (docs/performance.md). (Products on quantized
blocks share a decoding step's rows with helper threads that wait spinning,
:mod:`attnlab.engine.fast.quant.share`, under the same promise.)

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
from attnlab.engine.fast.decode import steps
from attnlab.engine.fast.quant import QuantMatrix, product
from attnlab.engine.fast.workers import run
from attnlab.engine.layers import RMSNormParams, SwiGLUParams
from attnlab.engine.positions import RoPE
from attnlab.engine.threads import CORES

# A product of this many rows or more (a prompt, not a decoding step) is shared out among our
# threads in column blocks; below, waking a thread costs what the split saves.
_SPLIT_ROWS = 16
_BLOCK_COLUMNS = 512  # a block's width at most; all of a product's blocks are equally wide

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # params -> (n_head, n_kv_head, dtype)
_layouts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # params -> (w_qkv, w_gate_up) or Nones


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
    matrices = [a.w_q, a.w_k, a.w_v, a.w_o, f.w_gate, f.w_up, f.w_down]
    norms = [n.weight for n in (params.norm_1, params.norm_2) if n.weight is not None]
    if any(not _fits(w, dtype) for w in matrices) or any(type(w) is not np.ndarray for w in norms):
        return False
    if any(w.dtype != dtype for w in norms):
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


def _fits(w, dtype) -> bool:
    """A float array of ``dtype``, or (for float32) a matrix kept as quantized blocks."""
    if type(w) is np.ndarray:
        return w.dtype == dtype
    return isinstance(w, QuantMatrix) and dtype == np.float32


def side_by_side(*matrices: np.ndarray, dtype=None) -> tuple[np.ndarray, ...]:
    """Copy 2-D matrices with equal row counts into one array, side by side; return views of it.

    ``x @ view`` computes what ``x @ matrix`` did. When a block's w_q, w_k, w_v
    (or w_gate, w_up) are such views, :func:`numpy_decoder_block` reads them
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


def _joined(*views):
    """The one matrix whose adjacent column blocks ``views`` are (as :func:`side_by_side` makes), or None.

    Matrices kept as blocks of one format join without a copy: their parts stand side by side.
    """
    if all(isinstance(v, QuantMatrix) for v in views):
        same = len({(v.fmt, v.n_in) for v in views}) == 1
        return QuantMatrix.side_by_side(*views) if same else None
    if not all(type(v) is np.ndarray for v in views):
        return None
    base = views[0].base
    if not isinstance(base, np.ndarray) or base.ndim != 2 or base.shape[0] != views[0].shape[0]:
        return None
    start = base.__array_interface__["data"][0]
    col = 0
    for v in views:
        at = v.__array_interface__["data"][0]
        if v.base is not base or v.strides != base.strides or at != start + col * base.itemsize:
            return None
        col += v.shape[1]
    return base if col == base.shape[1] else base[:, :col]


def numpy_decoder_block(x, params, *, n_head, n_kv_head, rope, positions, cache, scale, edits=None):
    """Run the block on x (L, d_model); return ``(output, attention, weights, heads)`` or None.

    attention (L, d_model) is the attention sublayer's output (before the
    residual), weights (n_head, L, S), heads (n_head, L, d_v). None (and the cache left
    untouched) when a NaN or inf shows up: the generic path then raises.
    ``edits`` (:class:`attnlab.engine.block.BlockEdits`, or None) are applied where the
    generic path applies them, to the same arrays: heads side by side (L, n_head * d_v)
    before W_O, the residual between the sublayers, the feed-forward output before its
    residual add; ``heads`` stay as attention made them.
    """
    n_kv_head = n_head if n_kv_head is None else n_kv_head
    a, f = params.attn, params.mlp
    qkv_w, gate_up_w = joined_projections(params)
    n = x.shape[0]
    n_q, n_k = a.w_q.shape[1], a.w_k.shape[1]
    d_head = n_q // n_head
    d_v = a.w_v.shape[1] // n_kv_head
    g = n_head // n_kv_head
    k = steps.kernels()  # the compiled steps, or None: NumPy's
    # 1) normalise and project: one product when w_q, w_k, w_v sit side by side
    h = steps.rms(x, params.norm_1, k)
    if qkv_w is not None:
        qkv = _product(h, qkv_w)
    else:
        qkv = np.concatenate([_product(h, a.w_q), _product(h, a.w_k), _product(h, a.w_v)], axis=1)
    if not np.isfinite(qkv).all():
        return None
    if rope is not None:  # q and k heads together, (L, H+H_kv, d)
        past = cache.length if cache is not None else 0
        at = positions if positions is not None else np.arange(past, past + n)
        qk = steps.rotate_qk(rope, qkv, n_head + n_kv_head, d_head, at, k)
    else:
        qk = qkv[:, : n_q + n_k].reshape(n, n_head + n_kv_head, d_head)
    keys = qk[:, n_head:].transpose(1, 0, 2)  # (H_kv, L, d)
    values = qkv[:, n_q + n_k :].reshape(n, n_kv_head, d_v).transpose(1, 0, 2)
    if cache is not None:
        keys, values = cache.append(keys, values)
    # 2) attend; query head h reads KV head h // g
    scale = x.dtype.type(1.0 / math.sqrt(d_head) if scale is None else scale)
    done = steps.attend(qk, n_head, keys, values, g, scale, k)
    if done is None:
        return None  # pragma: no cover - the generic path names the overflow
    weights, heads, side = done
    if edits is not None and edits.z is not None:
        side = edits.z(side)
    attn = _product(side, a.w_o)
    r = x + attn
    if edits is not None and edits.mid is not None:
        r = edits.mid(r)
    # 3) SwiGLU feed-forward: one product for gate and up when they sit side by side
    u = steps.rms(r, params.norm_2, k)
    d_ff = f.w_gate.shape[1]
    if gate_up_w is not None:
        gate_up = _product(u, gate_up_w)
    else:
        gate_up = np.concatenate([_product(u, f.w_gate), _product(u, f.w_up)], axis=1)
    act = steps.gated(gate_up, d_ff, k)
    out = _product(act, f.w_down)
    if edits is not None and edits.mlp is not None:
        out = edits.mlp(out) + r  # a new array: the edit may keep the one it was given
    else:
        out += r
    return out, attn, weights, heads


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
    blocks = [slice(c, min(n_cols, c + width)) for c in range(0, n_cols, width)]
    out = np.empty((x.shape[0], n_cols), np.result_type(x, w))

    def block(cols: slice, _buffers) -> None:
        np.matmul(x, w[:, cols], out=out[:, cols])

    run(block, blocks, min(CORES, len(blocks)))
    return out


def joined_projections(params) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(w_qkv, w_gate_up)``: the joined projections of ``params`` when they sit side by side, else None."""
    kept = _layouts.get(params)
    if kept is None:
        a, f = params.attn, params.mlp
        kept = _layouts[params] = (_joined(a.w_q, a.w_k, a.w_v), _joined(f.w_gate, f.w_up))
    return kept
