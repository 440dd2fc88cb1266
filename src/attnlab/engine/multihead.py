"""Multi-head attention: project, split into heads, attend, concatenate, project.

    head_h = Attention(X W_Q^h, C W_K^g(h), C W_V^g(h))
    MultiHead(X, C) = Concat(head_1, ..., head_H) W_O

X is the query side (..., L, d_model); C the context, X itself for
self-attention. Weights are pre-transposed (``Q = X @ w_q``); ``w_q`` is
(d_model, n_head * d_head), ``w_k`` and ``w_v`` are (d_context,
n_kv_head * d_head), ``w_o`` is (n_head * d_head, d_model). Column block h of
``w_q`` (columns h*d_head .. (h+1)*d_head - 1) belongs to head h.

Grouped-query attention: with ``n_kv_head < n_head`` (MQA when 1), query head
h uses KV head g(h) = h // (n_head / n_kv_head), as PyTorch ``enable_gqa`` and
Llama do; the KV heads are broadcast, never repeated in memory.

Bad arguments raise ``FieldError`` located at the argument (or weight) the
message starts with: ``("w_q",)`` for ``w_q has shape (12, 12); ...``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from attnlab.engine._arrays import (
    Array,
    arange,
    as_array,
    check_finite,
    float_dtype,
    namespace,
    shape_of,
    to_float,
)
from attnlab.engine.attention import attend, check_causal
from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.layers import linear
from attnlab.engine.positions import RoPE
from attnlab.engine.threads import holds_one_blas_thread
from attnlab.engine.trace import Trace, TraceBuilder


@dataclass(frozen=True, eq=False)
class AttentionParams:
    """Projections of multi-head attention (pre-transposed; biases optional).

    ``w_q`` (d_model, n_head*d_head), ``w_k`` and ``w_v`` (d_context,
    n_kv_head*d_head), ``w_o`` (n_head*d_head, d_model); ``b_q`` (n_head*d_head,),
    ``b_k``/``b_v`` (n_kv_head*d_head,), ``b_o`` (d_model,).
    """

    w_q: Array
    w_k: Array
    w_v: Array
    w_o: Array
    b_q: Array | None = None
    b_k: Array | None = None
    b_v: Array | None = None
    b_o: Array | None = None


@dataclass(frozen=True, eq=False)
class MultiHeadResult:
    """Output of :func:`multi_head_attention`.

    ``output`` (..., L, d_model); ``weights`` per head (..., n_head, L, S);
    ``fully_masked`` bool (..., n_head, L); ``heads`` each head's output
    (..., n_head, L, d_head); ``trace`` when asked: x, q, k, v (per head;
    k and v have n_kv_head heads), q_rotated and k_rotated (with RoPE),
    k_cached and v_cached (with a cache), dots, scores, allowed (when masked),
    max, exps, sum, weights, heads, concat, output.
    """

    output: Array
    weights: Array
    fully_masked: Array
    heads: Array
    trace: Trace | None = None

    @property
    def mean_weights(self) -> Array:
        """Weights averaged over heads (..., L, S), as ``nn.MultiheadAttention`` returns."""
        xp = namespace(self.weights)
        return xp.mean(self.weights, axis=-3)


def split_heads(x: Array, n_head: int) -> Array:
    """Reshape (..., L, n_head*d) to (..., n_head, L, d)."""
    xp = namespace(x)
    s = shape_of(x)
    x = xp.reshape(x, s[:-1] + (n_head, s[-1] // n_head))  # (..., L, H, d)
    n = len(s) + 1
    return xp.permute_dims(x, tuple(range(n - 3)) + (n - 2, n - 3, n - 1))  # (..., H, L, d)


def merge_heads(x: Array) -> Array:
    """Reshape (..., n_head, L, d) to (..., L, n_head*d): the concatenation of the heads."""
    xp = namespace(x)
    s = shape_of(x)
    n = len(s)
    x = xp.permute_dims(x, tuple(range(n - 3)) + (n - 2, n - 3, n - 1))  # (..., L, H, d)
    return xp.reshape(x, s[:-3] + (s[-2], s[-3] * s[-1]))


@holds_one_blas_thread
def multi_head_attention(
    x: Array,
    params: AttentionParams,
    *,
    n_head: int,
    n_kv_head: int | None = None,
    context: Array | None = None,
    mask: Array | None = None,
    causal: str | None = None,
    key_padding_mask: Array | None = None,
    rope: RoPE | None = None,
    positions: Array | Sequence[int] | None = None,
    cache: KVCache | None = None,
    scale: float | None = None,
    return_trace: bool = False,
    edit_z: Callable[[Array], Array] | None = None,
) -> MultiHeadResult:
    """Run multi-head attention from ``x`` (..., L, d_model) over ``context`` (or x).

    Masks (``True`` = may attend; float masks add to the scores) may be
    (L, S), (..., L, S) with x's leading dimensions, or (..., n_head, L, S)
    per head. ``key_padding_mask`` is (..., S), ``True`` = real token.
    ``causal`` as in :func:`attention` (decoders use ``"bottom_right"``, which
    is also right with a cache). ``rope`` rotates q and k at ``positions``
    (default: cache.length, cache.length + 1, ...), self-attention only.
    ``cache`` gets this call's k and v appended and supplies all the keys.
    ``edit_z(concat)`` (a hook: ablation, patching) takes the heads side by side,
    (..., L, n_head * d_v), query head h in columns h*d_v .. (h+1)*d_v - 1, and
    returns what W_O multiplies (the same shape; it never writes into its
    argument). ``heads`` stay as attention made them; ``concat`` is after the edit.
    """
    check_causal(causal)
    x = as_array(x, "x")
    xs = shape_of(x)
    if len(xs) < 2 or 0 in xs:
        raise FieldError("x", f"has shape {xs}; it must be (..., L, d_model) with no empty axis")
    n_kv_head = n_head if n_kv_head is None else n_kv_head
    _check_heads(params, xs, n_head, n_kv_head, context)
    if context is not None and (rope is not None or cache is not None):
        raise FieldError("context", "rope and cache apply to self-attention only; context was given")
    if cache is not None and causal == "top_left" and cache.length > 0:
        raise FieldError(
            "causal",
            "causal='top_left' with a filled KV cache would align the new queries with the "
            "first keys; use causal='bottom_right'"
        )

    xp = namespace(x, context, params.w_q)
    weights = [params.w_q, params.w_k, params.w_v, params.w_o]
    biases = [params.b_q, params.b_k, params.b_v, params.b_o]
    dtype = float_dtype(xp, x, *weights)
    x = to_float(xp, x, dtype, "x")
    check_finite(xp, x, "x")
    src = x
    if context is not None:
        src = to_float(xp, as_array(context, "context"), dtype, "context")
        check_finite(xp, src, "context")
    w_q, w_k, w_v, w_o = (to_float(xp, w, dtype, n) for w, n in zip(weights, "qkvo", strict=True))
    b_q, b_k, b_v, b_o = (
        None if b is None else to_float(xp, b, dtype, f"b_{n}") for b, n in zip(biases, "qkvo", strict=True)
    )
    steps = TraceBuilder(enabled=return_trace)
    steps.add("x", x)

    # 1) project and split into heads
    q = split_heads(linear(x, w_q, b_q), n_head)  # (..., H, L, d_head)
    k = split_heads(linear(src, w_k, b_k), n_kv_head)  # (..., H_kv, S, d_head)
    v = split_heads(linear(src, w_v, b_v), n_kv_head)  # (..., H_kv, S, d_v)
    steps.add("q", q)
    steps.add("k", k)
    steps.add("v", v)
    # NaN weights or an overflow show up here; cached keys were checked when they were new
    for name, a in (("q = x @ w_q", q), ("k = context @ w_k", k), ("v = context @ w_v", v)):
        check_finite(xp, a, name)

    # 2) positions (RoPE) and the cache
    past = cache.length if cache is not None else 0
    if rope is not None:
        pos = positions if positions is not None else arange(xp, xs[-2], x) + past
        cos, sin = rope.cos_sin(_heads_axis(xp, pos), like=q)  # once for q and k
        q, k = rope.rotate(q, cos, sin), rope.rotate(k, cos, sin)
        steps.add("q_rotated", q)
        steps.add("k_rotated", k)
    if cache is not None:
        k, v = cache.append(k, v)
        steps.add("k_cached", k)
        steps.add("v_cached", v)

    # 3) attend, every head at once
    res = attend(
        q,
        k,
        v,
        mask=_per_head_mask(xp, mask, len(xs)),
        causal=causal,
        scale=scale,
        key_padding_mask=_per_head_padding(xp, key_padding_mask),
        enable_gqa=n_kv_head != n_head,
        return_trace=return_trace,
        check_values=False,
    )
    if res.trace is not None:
        for name in ("dots", "scores", "allowed", "max", "exps", "sum", "weights"):
            if name in res.trace:
                steps.add(name, res.trace[name])
    steps.add("heads", res.output)

    # 4) concatenate the heads and project back
    concat = merge_heads(res.output)  # (..., L, H*d_v)
    if edit_z is not None:
        concat = edit_z(concat)
    steps.add("concat", concat)
    out = linear(concat, w_o, b_o)  # (..., L, d_model)
    steps.add("output", out)
    return MultiHeadResult(
        output=out,
        weights=res.weights,
        fully_masked=res.fully_masked,
        heads=res.output,
        trace=steps.build(),
    )


def _check_heads(params: AttentionParams, xs, n_head, n_kv_head, context) -> None:
    for name, n in (("n_head", n_head), ("n_kv_head", n_kv_head)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise FieldError(name, f"must be a positive int, not {n!r}")
    d_model = xs[-1]
    shapes = {n: shape_of(as_array(getattr(params, n), n)) for n in ("w_q", "w_k", "w_v", "w_o")}
    for name, s in shapes.items():
        if len(s) != 2:
            raise FieldError(name, f"has shape {s}; weights are 2-D (in, out), pre-transposed")
    wq, wk, wv, wo = shapes["w_q"], shapes["w_k"], shapes["w_v"], shapes["w_o"]
    if wq[0] != d_model:
        raise FieldError("w_q", f"has shape {wq}; its rows must match d_model={d_model} of x {xs}")
    if wq[1] % n_head:
        raise FieldError(
            "n_head",
            f"n_head={n_head} does not divide the query width {wq[1]} (w_q {wq}, d_model={d_model})"
        )
    if n_head % n_kv_head:
        raise FieldError("n_head", f"n_head={n_head} is not a multiple of n_kv_head={n_kv_head}")
    d_head = wq[1] // n_head
    d_ctx = d_model if context is None else shape_of(as_array(context, "context"))[-1]
    if wk[0] != d_ctx or wv[0] != d_ctx:
        raise FieldError(
            "w_k",
            f"{wk} and w_v {wv} must have {d_ctx} rows, the width of the "
            f"{'context' if context is not None else 'input x'}"
        )
    if wk[1] != n_kv_head * d_head:
        raise FieldError(
            "w_k", f"has shape {wk}; it needs n_kv_head * d_head = {n_kv_head} * {d_head} columns"
        )
    if wv[1] % n_kv_head:
        raise FieldError(
            "n_kv_head", f"n_kv_head={n_kv_head} does not divide the value width {wv[1]} (w_v {wv})"
        )
    if wo[0] != n_head * (wv[1] // n_kv_head):
        raise FieldError(
            "w_o", f"has shape {wo}; it needs n_head * d_v = {n_head * (wv[1] // n_kv_head)} rows"
        )
    for bname, width in (("b_q", wq[1]), ("b_k", wk[1]), ("b_v", wv[1]), ("b_o", wo[1])):
        b = getattr(params, bname)
        if b is not None and shape_of(as_array(b, bname)) != (width,):
            raise FieldError(bname, f"has shape {shape_of(as_array(b, bname))}; expected ({width},)")


def _heads_axis(xp, positions):
    """Give batched positions (..., L) a head axis: (..., 1, L)."""
    pos = positions
    if isinstance(pos, range | list | tuple):
        return pos
    if len(shape_of(pos)) > 1:
        return xp.expand_dims(pos, axis=-2)
    return pos


def _per_head_mask(xp, mask, x_ndim):
    """(L, S) stays; (..., L, S) with x's leading dims gains a head axis; (..., H, L, S) stays."""
    if mask is None:
        return None
    mask = as_array(mask, "mask")
    nd = len(shape_of(mask))
    if nd == 2 or nd == x_ndim + 1:
        return mask
    if nd == x_ndim:
        return xp.expand_dims(mask, axis=-3)
    raise FieldError(
        "mask",
        f"has shape {shape_of(mask)}; use (L, S), (..., L, S) with x's leading "
        "dimensions, or (..., n_head, L, S)"
    )


def _per_head_padding(xp, key_padding_mask):
    """(..., S) padding becomes (..., 1, S): the same for every head."""
    if key_padding_mask is None:
        return None
    kpm = as_array(key_padding_mask, "key_padding_mask")
    return xp.expand_dims(kpm, axis=-2)
