"""Scaled dot-product attention over whole arrays, with masks made explicit.

    Attention(Q, K, V) = softmax(Q K^T * scale + M) V,   scale = 1/sqrt(d_k) by default

Shapes: ``q`` (..., L, d_k), ``k`` (..., S, d_k), ``v`` (..., S, d_v); the
leading dimensions broadcast. The result's ``output`` is (..., L, d_v) and its
``weights`` (..., L, S).

Conventions (docs/engine-conventions.md says how PyTorch, JAX and FlashAttention differ):

- Boolean ``mask``: ``True`` = may attend (PyTorch SDPA and JAX polarity; the
  opposite of ``nn.MultiheadAttention``). Floating ``mask``: added to the
  scaled scores; ``-inf`` blocks, NaN and ``+inf`` are refused.
- ``causal``: ``None`` (no causal mask), ``"top_left"`` (query i sees keys
  j <= i; PyTorch ``is_causal``, JAX) or ``"bottom_right"`` (query i sees keys
  j <= i + S - L, so the last query sees every key; FlashAttention, KV-cache
  decoding). They agree when L == S. Unlike PyTorch, a causal mask combines
  with ``mask`` and ``key_padding_mask`` (all are ANDed).
- ``key_padding_mask``: boolean (..., S), ``True`` = a real token (may be
  attended). Its leading dimensions line up with q's leading dimensions, so
  for q of shape (B, H, L, d_k) pass (B, 1, S) or (B, H, S).
- The softmax is guarded: blocked positions are set aside *before*
  exponentiating and the row maximum is taken over allowed scores only, so
  nothing computes ``-inf - -inf``. A row with no allowed key (fully masked)
  gets weights and output of exactly 0 and is reported in ``fully_masked``.
- NaN or +-inf in q, k or v is refused, masked or not.
- dtype: float64 unless every input is float32 (then float32 throughout,
  softmax included); integers count as float64.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from attnlab.engine._arrays import (
    Array,
    arange,
    as_array,
    broadcast_shape,
    check_finite,
    default_scale,
    fits,
    float_dtype,
    namespace,
    shape_of,
    to_float,
)
from attnlab.engine.errors import FieldError
from attnlab.engine.threads import holds_one_blas_thread
from attnlab.engine.trace import Trace, TraceBuilder

CAUSAL_ALIGNMENTS = ("top_left", "bottom_right")


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """Output of :func:`attention`.

    ``output`` (..., L, d_v); ``weights`` (..., L, S), rows summing to 1 except
    fully masked rows, which are all 0; ``fully_masked`` bool (..., L);
    ``trace`` the named intermediates when ``return_trace=True``, else None:
    q, k, v, dots (q k^T), scores (scaled, float mask added), allowed (when any
    mask applies), max, exps, sum, weights, output.
    """

    output: Array
    weights: Array
    fully_masked: Array
    trace: Trace | None = None


def check_causal(causal: object) -> None:
    """Refuse an unknown causal alignment, naming the two that exist."""
    if causal is not None and causal not in CAUSAL_ALIGNMENTS:
        raise FieldError(
            "causal",
            f"causal={causal!r} is not an alignment; use None, 'top_left' "
            "(query i sees keys j <= i) or 'bottom_right' (query i sees keys j <= i + S - L)"
        )


def causal_mask(n_queries: int, n_keys: int, alignment: str, *, like: Array | None = None) -> Array:
    """Return the boolean (L, S) causal mask, ``True`` = may attend.

    ``"top_left"``: key j is allowed for query i when j <= i.
    ``"bottom_right"``: when j <= i + (S - L); with L > S the first L - S
    queries see nothing (fully masked). Built on ``like``'s namespace and device
    (NumPy when ``like`` is None); NumPy masks are cached and read-only.
    """
    check_causal(alignment)
    if alignment is None:
        raise FieldError("alignment", "causal_mask needs an alignment: 'top_left' or 'bottom_right'")
    if like is None or type(like) is np.ndarray:
        if n_queries * n_keys <= _CACHED_MASK_SIZE:
            return _numpy_causal_mask(n_queries, n_keys, alignment)
        return _numpy_causal_mask.__wrapped__(n_queries, n_keys, alignment)
    xp = namespace(like)
    offset = 0 if alignment == "top_left" else n_keys - n_queries
    i = xp.reshape(arange(xp, n_queries, like), (n_queries, 1))
    j = xp.reshape(arange(xp, n_keys, like), (1, n_keys))
    return j <= i + offset


def causal_is_trivial(n_queries: int, n_keys: int, alignment: str) -> bool:
    """Return True when the causal mask allows every key to every query.

    E.g. one new token at the bottom right of a KV cache sees everything.
    """
    offset = 0 if alignment == "top_left" else n_keys - n_queries
    return n_keys - 1 <= offset


_CACHED_MASK_SIZE = 1 << 22  # cache masks up to 4 MB; bigger ones are rebuilt


@lru_cache(maxsize=32)
def _numpy_causal_mask(n_queries: int, n_keys: int, alignment: str) -> np.ndarray:
    offset = 0 if alignment == "top_left" else n_keys - n_queries
    mask = np.arange(n_keys)[None, :] <= np.arange(n_queries)[:, None] + offset
    mask.flags.writeable = False
    return mask


@holds_one_blas_thread
def attention(
    q: Array,
    k: Array,
    v: Array,
    *,
    mask: Array | None = None,
    causal: str | None = None,
    scale: float | None = None,
    key_padding_mask: Array | None = None,
    enable_gqa: bool = False,
    return_trace: bool = False,
) -> AttentionResult:
    """Attend from queries ``q`` to keys ``k`` carrying values ``v``.

    See the module docstring for shapes, mask polarity and causal alignment.
    ``enable_gqa=True`` (as in PyTorch SDPA): q (..., H_q, L, d_k) with k, v
    (..., H_kv, S, .) where H_kv divides H_q; query head h uses KV head
    h // (H_q / H_kv). K and V are never repeated: the query heads are grouped
    as (..., H_kv, H_q/H_kv, L, d_k) and the KV heads broadcast over the group.
    """
    return attend(
        q, k, v, mask=mask, causal=causal, scale=scale, key_padding_mask=key_padding_mask,
        enable_gqa=enable_gqa, return_trace=return_trace, check_values=True,
    )  # fmt: skip


def attend(
    q, k, v, *, mask, causal, scale, key_padding_mask, enable_gqa, return_trace, check_values,
    on_scores=None, on_weights=None,
) -> AttentionResult:
    """:func:`attention` for callers that checked q, k and v for NaN and inf themselves.

    ``check_values=False`` skips only the finiteness scan of q, k and v (a
    decoder step would otherwise rescan its whole KV cache in every layer);
    shapes, masks and overflowing scores are still checked.

    ``on_scores(scores)`` and ``on_weights(weights)`` (hook points, or None) see the scaled
    scores, blocked keys ``-inf``, and the weights, each (..., H, L, S) (query heads, also
    with GQA), and return what attention goes on with (the same shape) or their argument.
    Blocked keys stay blocked whatever a score hook returns.
    """
    check_causal(causal)
    xp, q, k, v, scale = prepare_qkv(q, k, v, scale, check_values=check_values)
    qs, ks, vs = shape_of(q), shape_of(k), shape_of(v)
    n_q, n_k = qs[-2], ks[-2]

    groups = _gqa_groups(qs, ks, vs) if enable_gqa else 1
    if groups > 1:
        heads = (qs[-3],)
        batch = broadcast_shape(qs[:-3], ks[:-3], vs[:-3], fields=("q", "k", "v")) + heads
    else:
        batch = broadcast_shape(qs[:-2], ks[:-2], vs[:-2], fields=("q", "k", "v"))
    scores_shape = batch + (n_q, n_k)

    bool_masks, float_mask = [], None
    if mask is not None:
        mask = as_array(mask, "mask")
        _check_mask_shape(shape_of(mask), scores_shape, "mask")
        if mask.dtype == xp.bool:
            bool_masks.append(mask)
        else:
            float_mask = _float_mask(xp, mask, q.dtype)
    if key_padding_mask is not None:
        bool_masks.append(_padding_as_mask(xp, key_padding_mask, scores_shape))

    if groups > 1:
        n_kv = ks[-3]
        q = xp.reshape(q, qs[:-3] + (n_kv, groups) + qs[-2:])  # (..., H_kv, g, L, d_k)
        k_g = xp.expand_dims(k, axis=-3)  # (..., H_kv, 1, S, d_k)
        v_g = xp.expand_dims(v, axis=-3)  # (..., H_kv, 1, S, d_v)
        bool_masks = [_group_mask(xp, m, n_kv, groups) for m in bool_masks]
        if float_mask is not None:
            float_mask = _group_mask(xp, float_mask, n_kv, groups)
        hooks = [None if f is None else _grouped(xp, f, n_kv, groups, what)
                 for f, what in ((on_scores, "scores"), (on_weights, "weights"))]  # fmt: skip
        parts = _attend(xp, q, k_g, v_g, bool_masks, float_mask, causal, scale, *hooks)
        parts = {name: _ungroup(xp, name, a) for name, a in parts.items()}
        q = xp.reshape(q, qs)
    else:
        parts = _attend(xp, q, k, v, bool_masks, float_mask, causal, scale, on_scores, on_weights)

    steps = TraceBuilder(enabled=return_trace)
    for name, value in (("q", q), ("k", k), ("v", v)):
        steps.add(name, value)
    for name in ("dots", "scores", "allowed", "max", "exps", "sum", "weights", "output"):
        if parts.get(name) is not None:
            steps.add(name, parts[name])
    return AttentionResult(
        output=parts["output"],
        weights=parts["weights"],
        fully_masked=parts["fully_masked"],
        trace=steps.build(),
    )


def prepare_qkv(q, k, v, scale, *, check_values: bool = True):
    """Check q, k, v and the scale; return ``(xp, q, k, v, scale)`` in one float dtype.

    Raises ``FieldError`` naming the shapes for mismatched dimensions, empty
    axes, non-numbers, NaN or infinity (located at the argument the message
    starts with).
    """
    q, k, v = as_array(q, "q"), as_array(k, "k"), as_array(v, "v")
    xp = namespace(q, k, v)
    qs, ks, vs = shape_of(q), shape_of(k), shape_of(v)
    for name, s in (("q", qs), ("k", ks), ("v", vs)):
        if len(s) < 2:
            raise FieldError(name, f"has shape {s}; it needs at least 2 dimensions (..., n, d)")
        if 0 in s:
            raise FieldError(name, f"has shape {s}; no dimension may be empty")
    n_q, d_k = qs[-2:]
    n_k = ks[-2]
    if ks[-1] != d_k:
        raise FieldError(
            "q",
            f"has shape {qs} and k has shape {ks}: their last dimensions (d_k) differ, {d_k} vs {ks[-1]}"
        )
    if vs[-2] != n_k:
        raise FieldError(
            "k",
            f"has shape {ks} and v has shape {vs}: they need the same number of keys S ({n_k} vs {vs[-2]})"
        )
    dtype = float_dtype(xp, q, k, v)
    q, k, v = to_float(xp, q, dtype, "q"), to_float(xp, k, dtype, "k"), to_float(xp, v, dtype, "v")
    if check_values:
        for name, a in (("q", q), ("k", k), ("v", v)):
            check_finite(xp, a, name)
    scale = default_scale(d_k, scale)
    return xp, q, k, v, scale


def check_scores(xp, scores) -> None:
    """Raise a ValueError when finite inputs gave scores beyond the dtype's range.

    A plain ``ValueError``, not a ``FieldError``: q, k and the scale share the
    blame, and no one argument is the one to change.
    """
    if not bool(xp.all(xp.isfinite(scores))):
        raise ValueError(
            f"the scores q . k * scale overflowed to infinity; the inputs are too large for {scores.dtype}"
        )


def _attend(xp, q, k, v, bool_masks, float_mask, causal, scale, on_scores=None, on_weights=None) -> dict:
    """Compute attention on checked, same-dtype arrays; return every intermediate."""
    # 1) match every query with every key
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below instead
        dots = q @ xp.matrix_transpose(k)  # (..., L, S)
        scores = dots * scale
    check_scores(xp, scores)
    if float_mask is not None:
        scores = scores + float_mask
    # 2) which keys each query may see
    allowed = None
    for m in bool_masks:
        allowed = m if allowed is None else xp.logical_and(allowed, m)
    if float_mask is not None and bool(xp.any(float_mask == -xp.inf)):
        blocked_by_float = float_mask != -xp.inf
        allowed = blocked_by_float if allowed is None else xp.logical_and(allowed, blocked_by_float)
    n_q, n_k = q.shape[-2], k.shape[-2]
    if causal is not None and not causal_is_trivial(n_q, n_k, causal):
        c = causal_mask(n_q, n_k, causal, like=q)
        allowed = c if allowed is None else xp.logical_and(allowed, c)
    if on_scores is not None:  # a hook point: it sees blocked keys as -inf, and they stay blocked
        shown = scores if allowed is None else xp.where(allowed, scores, -xp.inf)
        scores = _hooked(xp, on_scores, shown, "scores")
    # 3) guarded softmax: set blocked scores aside before exponentiating
    shape = shape_of(scores)
    if allowed is None:
        fully = xp.zeros(shape[:-1], dtype=xp.bool, device=_device(q))
        m = xp.max(scores, axis=-1, keepdims=True)
        exps = xp.exp(scores - m)
    else:
        allowed = xp.broadcast_to(allowed, shape)
        fully = xp.logical_not(xp.any(allowed, axis=-1))
        m = xp.max(xp.where(allowed, scores, -xp.inf), axis=-1, keepdims=True)
        m = xp.where(xp.expand_dims(fully, axis=-1), 0.0, m)  # a fully masked row has no max
        exps = xp.where(allowed, xp.exp(xp.where(allowed, scores - m, 0.0)), 0.0)
    total = xp.sum(exps, axis=-1, keepdims=True)
    weights = exps / xp.where(total == 0.0, 1.0, total)  # total is >= 1 on any allowed row
    if on_weights is not None:
        weights = _hooked(xp, on_weights, weights, "weights")
    # 4) mix the values
    output = weights @ v  # (..., L, d_v)
    return {
        "dots": dots,
        "scores": scores,
        "allowed": allowed,
        "max": m,
        "exps": exps,
        "sum": total,
        "weights": weights,
        "output": output,
        "fully_masked": fully,
    }


def _hooked(xp, fn, a, what: str):
    """``fn(a)`` where a hook may replace an intermediate: the same shape, and no NaN."""
    out = fn(a)
    if shape_of(out) != shape_of(a):
        shapes = f"returned shape {shape_of(out)}; it must keep {shape_of(a)}"
        raise FieldError("fwd_hooks", f"a hook on the {what} {shapes}")
    if bool(xp.any(xp.isnan(out))):
        raise FieldError("fwd_hooks", f"a hook on the {what} returned NaN")
    return out


def _grouped(xp, fn, n_kv: int, groups: int, what: str):
    """A hook on (..., H, L, S) called with grouped (..., H_kv, g, L, S) arrays, and its answer regrouped."""

    def call(a):
        s = shape_of(a)
        flat = xp.reshape(a, s[:-4] + (n_kv * groups,) + s[-2:])
        out = fn(flat)
        if shape_of(out) != shape_of(flat):  # refused as a hook of the ungrouped shape would be
            return _hooked(xp, lambda _: out, flat, what)
        return xp.reshape(out, s)

    return call


def _device(x):
    from array_api_compat import device

    return device(x)


def _gqa_groups(qs, ks, vs) -> int:
    if len(qs) < 3 or len(ks) < 3 or len(vs) < 3:
        raise FieldError(
            "enable_gqa", f"needs a head axis: q {qs}, k {ks} and v {vs} must be (..., H, n, d)"
        )
    n_q_heads, n_kv_heads = qs[-3], ks[-3]
    if vs[-3] != n_kv_heads:
        raise FieldError("k", f"has shape {ks} and v has shape {vs}: their head counts differ")
    if n_q_heads % n_kv_heads:
        raise FieldError(
            "q",
            f"has {n_q_heads} heads (shape {qs}) and k has {n_kv_heads} (shape {ks}); "
            "the query heads must be a multiple of the KV heads"
        )
    return n_q_heads // n_kv_heads


def _check_mask_shape(shape, scores_shape, field) -> None:
    if not fits(shape, scores_shape):
        raise FieldError(
            field,
            f"has shape {shape}; it must broadcast to the scores' shape {scores_shape} "
            f"(..., L={scores_shape[-2]}, S={scores_shape[-1]})"
        )


def _float_mask(xp, mask, dtype):
    if not xp.isdtype(mask.dtype, "real floating"):
        raise FieldError(
            "mask",
            f"has dtype {mask.dtype}; use bool (True = may attend) "
            "or floating (added to the scores, -inf blocks)"
        )
    mask = xp.astype(mask, dtype)
    if bool(xp.any(xp.isnan(mask))) or bool(xp.any(mask == xp.inf)):
        raise FieldError(
            "mask",
            f"of shape {shape_of(mask)} holds NaN or +inf; an additive mask may hold "
            "finite numbers and -inf (blocked) only"
        )
    return mask


def _padding_as_mask(xp, key_padding_mask, scores_shape):
    """Turn (..., S) key padding (True = real token) into a (..., 1, S) mask."""
    kpm = as_array(key_padding_mask, "key_padding_mask")
    shape = shape_of(kpm)
    if kpm.dtype != xp.bool:
        raise FieldError(
            "key_padding_mask", f"has dtype {kpm.dtype}; it must be bool (True = real token)"
        )
    if len(shape) < 1 or not fits(shape[:-1] + (1, shape[-1]), scores_shape):
        raise FieldError(
            "key_padding_mask",
            f"has shape {shape}; it must be (..., S={scores_shape[-1]}) with "
            f"leading dimensions that broadcast to {scores_shape[:-2]}"
        )
    return xp.expand_dims(kpm, axis=-2)


def _group_mask(xp, m, n_kv, groups):
    """Lay a mask out as (..., H_kv, g, L, S) to match grouped query heads."""
    shape = shape_of(m)
    if len(shape) < 3:
        return m
    if shape[-3] == 1:
        return xp.expand_dims(m, axis=-3)
    return xp.reshape(m, shape[:-3] + (n_kv, groups) + shape[-2:])


def _ungroup(xp, name, a):
    """Merge the (H_kv, g) axes of a grouped result back into H_q query heads."""
    if a is None:
        return None
    shape = shape_of(a)
    at = -3 if name == "fully_masked" else -4  # fully_masked has no key axis
    merged = shape[:at] + (shape[at] * shape[at + 1],)
    return xp.reshape(a, merged + shape[at + 2 :])
