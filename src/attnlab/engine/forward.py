"""One forward pass for any model description: embed, the blocks, the head.

    1) x = W_E[ids] · embed_scale (+ W_pos[positions + offset]) (+ W_type[0]) (→ LayerNorm)  (T, d_model)
    2) per block, pre-norm (GPT-2, Llama):
           h = x + Attn(norm_1(x));  x = h + MLP(norm_2(h))
       with sandwich norms (Gemma 2, 3):
           h = x + norm_1_post(Attn(norm_1(x)));  x = h + norm_2_post(MLP(norm_2(h)))
       post-norm (BERT):
           h = norm_1(x + Attn(x));  x = norm_2(h + MLP(h))
       Attn: q = h W_Q, k = h W_K, v = h W_V (+ biases), a norm on each q and k head where the
       model has one, RoPE on q and k where the model rotates them (a local layer with its own
       base), scores = q·k · scale (soft-capped: c · tanh(s / c)), causal: bottom-right, a local
       layer's keys at most W - 1 positions back, padding keys blocked; pattern =
       softmax(scores), z = pattern @ v per head, attn_out = concat(z) W_O
    3) the final norm, then logits = x W_U (W_U = W_Eᵀ when tied), soft-capped where the model
       caps them — or, for a sentence encoder, the mean of the real tokens' rows scaled to
       unit length.

``arch`` is an :class:`attnlab.engine.model.Architecture`, ``weights`` its
:class:`attnlab.engine.model.Weights`. Every activation passes a hook point named as
TransformerLens names it (:mod:`attnlab.engine.hooks`).

The arithmetic is done by ``ops``: :data:`REFERENCE` (:class:`Reference`, below: the engine's
readable layers) or the fast path's (``attnlab.engine.fast.ops``: compiled steps, products
on quantised blocks, our thread pool), which swaps faster forms of the same steps into this
same walk (and, for a decoding step with nothing hooked, a whole block in three compiled calls of
those same steps: ``ops.whole_block``). Shapes: one sequence is (T, d_model); an encoder's batch
(B, T, d_model) with ``key_padding`` (B, T) (True = real token) leads with B everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attnlab.engine._arrays import check_finite, namespace, shape_of
from attnlab.engine.attention import attend
from attnlab.engine.cache import KVCache
from attnlab.engine.hooks import Hooks, block_names, no_hooks
from attnlab.engine.layers import activate, linear, norm, silu
from attnlab.engine.model import Architecture, RopeScaling, Weights
from attnlab.engine.positions import RoPE, embed


def forward(
    arch: Architecture,
    weights: Weights,
    ids,
    *,
    ops=None,
    hooks: Hooks | None = None,
    caches: Sequence[KVCache] | None = None,
    positions=None,
    key_padding=None,
    start_at_layer: int = 0,
    resid=None,
    stop_at_layer: int | None = None,
    last_only: bool = False,
):
    """Run the model on token ids ``ids`` (T,) (an encoder: (B, T) with ``key_padding``).

    Returns the logits (T, d_vocab) of a decoder (only the last row's (1, d_vocab) with
    ``last_only``) or an encoder's sentence embeddings (d_model,) / (B, d_model);
    ``stop_at_layer=l``: the residual stream entering block l instead (nothing after it runs;
    ``l = n_layer``: the residual leaving the last block, before the final norm).
    ``start_at_layer=l`` with ``resid`` (T, d_model): start from that residual stream entering
    block l (nothing before it runs; ``ids`` still say what the text is).
    ``caches``: one KVCache per layer; the new tokens sit after what they hold (positions
    cache length, +1, ... unless ``positions`` are given).
    """
    ops = ops or REFERENCE
    hook = hooks if hooks else no_hooks
    stop = arch.n_layer if stop_at_layer is None else stop_at_layer
    if positions is None:
        past = caches[0].length if caches else 0
        n_tok = shape_of(resid)[-2] if resid is not None else np.shape(ids)[-1]
        positions = np.arange(past, past + n_tok)
    ropes = {False: _rope(arch), True: _rope(arch, local=True)}  # global and local layers' RoPE

    # 1) embed (unless the residual stream entering block start_at_layer is given)
    if resid is None:
        x = hook("hook_embed", ops.embed(weights.embed, ids, arch.embed_scale))  # (T, d_model)
        if arch.positions == "learned":
            x = x + hook("hook_pos_embed", weights.pos_embed[positions + arch.position_offset])
        if arch.token_types:
            x = x + hook("hook_token_type_embed", weights.type_embed[0])
        if arch.embed_norm:
            x = hook("embed.ln.hook_normalized", ops.norm(x, weights.embed_norm))
    else:
        x = resid

    # 2) the blocks (a step refused in any layer leaves every cache as it was)
    kept = _lengths(caches)
    try:
        for layer in range(start_at_layer, stop):
            x = block(
                arch,
                weights.blocks[layer],
                x,
                layer,
                ops=ops,
                hook=hook,
                cache=None if caches is None else caches[layer],
                rope=ropes[arch.is_local(layer)],
                positions=positions,
                key_padding=key_padding,
            )
    except (ValueError, FloatingPointError):
        _truncate(caches, kept)
        raise
    if stop_at_layer is not None:
        return x

    # 3) the head
    if arch.head == "pooled":
        return ops.pool(x, key_padding)
    if last_only:
        x = x[..., -1:, :]
    if arch.final_norm:
        x = hook("ln_final.hook_normalized", ops.final_norm(x, weights.final_norm))
    logits = ops.unembed(x, weights)  # (T, d_vocab)
    return logits if arch.final_softcap is None else ops.softcap(logits, arch.final_softcap)


def block(arch: Architecture, p, x, layer: int, *, ops, hook, cache, rope, positions, key_padding):
    """One block on the residual stream x (T, d_model); see the module docstring."""
    window = arch.window(layer)
    whole = ops.whole_block(arch, p, x, hook=hook, cache=cache, rope=rope, positions=positions,
                            key_padding=key_padding, window=window)  # fmt: skip
    if whole is not None:  # the fast path's decoding step: the steps below in a few compiled calls
        return whole
    n = block_names(layer)
    x = hook(n.resid_pre, x)
    if arch.norm_placement == "pre":
        h = hook(n.ln1, ops.norm(x, p.norm_1))
        attn_out = attention(arch, p.attn, h, n, ops=ops, hook=hook, cache=cache, rope=rope,
                             positions=positions, key_padding=key_padding, window=window)  # fmt: skip
        if arch.post_norms:  # sandwich: the sublayer's output normalised before it is added
            attn_out = hook(n.ln1_post, ops.norm(attn_out, p.norm_1_post))
        mid = hook(n.resid_mid, x + hook(n.attn_out, attn_out))
        mlp_out = mlp(arch, p.mlp, hook(n.ln2, ops.norm(mid, p.norm_2)), n, ops=ops, hook=hook)
        if arch.post_norms:
            mlp_out = hook(n.ln2_post, ops.norm(mlp_out, p.norm_2_post))
        return hook(n.resid_post, mid + hook(n.mlp_out, mlp_out))
    attn_out = hook(n.attn_out, attention(arch, p.attn, x, n, ops=ops, hook=hook, cache=cache, rope=rope,
                                          positions=positions, key_padding=key_padding, window=window))
    h = hook(n.ln1, ops.norm(hook(n.resid_mid, x + attn_out), p.norm_1))
    mlp_out = hook(n.mlp_out, mlp(arch, p.mlp, h, n, ops=ops, hook=hook))
    return hook(n.ln2, ops.norm(hook(n.resid_post, h + mlp_out), p.norm_2))


def attention(arch: Architecture, p, h, n, *, ops, hook, cache, rope, positions, key_padding, window=None):
    """Multi-head attention from h (T, d_model): the attention sublayer's output (T, d_model), before
    the block's hook_attn_out (and sandwich norm). ``window``: this layer's sliding window, or None."""
    q, k, v = ops.project_qkv(h, p, arch)  # (T, H, d_head), (T, H_kv, d_head), (T, H_kv, d_head)
    q, k, v = hook(n.q, q), hook(n.k, k), hook(n.v, v)
    if arch.qk_norm:  # an RMSNorm over each head's d_head coordinates (Qwen 3, Gemma 3)
        q = hook(n.q_normed, ops.norm(q, p.q_norm))  # (T, H, d_head)
        k = hook(n.k_normed, ops.norm(k, p.k_norm))  # (T, H_kv, d_head)
    if rope is not None:
        q, k = ops.rotate(q, k, rope, positions)
        q, k = hook(n.rot_q, q), hook(n.rot_k, k)
    z = ops.attend(
        q,
        k,
        v,
        arch=arch,
        cache=cache,
        key_padding=key_padding,
        on_scores=_point(hook, n.scores),
        on_pattern=_point(hook, n.pattern),
        window=window,
    )  # (T, H, d_head)
    z = hook(n.z, z)
    return ops.linear(ops.heads_side_by_side(z), p.w_o, p.b_o)  # (T, d_model)


def mlp(arch: Architecture, p, h, n, *, ops, hook):
    """The feed-forward sublayer on h (T, d_model): its output (T, d_model), before the block's
    hook_mlp_out (and sandwich norm)."""
    if arch.mlp == "gated":
        pre, lin = ops.gate_up(h, p)  # (T, d_ff) each: act(pre) * lin
        pre, lin = hook(n.mlp_pre, pre), hook(n.mlp_pre_linear, lin)
        post = hook(n.mlp_post, ops.gated(pre, lin, arch.activation))
        return ops.linear(post, p.w_down, None)
    pre = hook(n.mlp_pre, ops.linear(h, p.w_1, p.b_1))  # (T, d_ff)
    post = hook(n.mlp_post, ops.act(pre, arch.activation))
    return ops.linear(post, p.w_2, p.b_2)


def _lengths(caches):
    """Each cache's length (per layer; a layer may hold one cache per row), to undo a refused step."""
    if caches is None:
        return None
    return [[c.length for c in layer] if isinstance(layer, list | tuple) else layer.length
            for layer in caches]  # fmt: skip


def _truncate(caches, lengths) -> None:
    if caches is None:
        return
    for layer, length in zip(caches, lengths):
        if isinstance(layer, list | tuple):
            for c, n in zip(layer, length):
                c.truncate(min(n, c.length))
        else:
            layer.truncate(min(length, layer.length))


def _point(hook, name: str):
    """The hook at ``name`` as a one-argument callback, or None when nothing is hooked there."""
    if hook is no_hooks or name not in hook:
        return None
    return lambda a: hook(name, a)


def _rope(arch: Architecture, *, local: bool = False) -> RoPE | None:
    """The RoPE the global layers rotate with (``local``: the local layers', where they have their own
    base; else the global one), or None where positions are not rotary."""
    if arch.positions != "rope":
        return None
    if local and arch.rope_base_local is not None:  # Gemma 3: local layers keep a plain RoPE of their own
        return RoPE(head_dim=arch.d_head, base=arch.rope_base_local, convention=arch.rope_pairs)
    if arch.rope_scaling is not None:
        return ScaledRoPE(head_dim=arch.d_head, base=arch.rope_base, convention=arch.rope_pairs,
                          scaling=arch.rope_scaling)  # fmt: skip
    return RoPE(head_dim=arch.d_head, base=arch.rope_base, convention=arch.rope_pairs)


@dataclass(frozen=True)
class ScaledRoPE(RoPE):
    """RoPE whose inverse frequencies are stretched as ``scaling`` says (an
    :class:`attnlab.engine.model.RopeScaling`: "linear", "llama3" or "factors"); the rotation is RoPE's."""

    scaling: RopeScaling | None = None

    @cached_property
    def inverse_frequencies(self) -> np.ndarray:
        f = RoPE.inverse_frequencies.func(self)  # base^(-2i/d), float64
        s = self.scaling
        if s is None:
            return f
        if s.kind == "linear":
            out = f / s.factor
        elif s.kind == "factors":
            out = f / np.asarray(s.factors, dtype=np.float64)
        else:  # llama3: long wavelengths slowed by the factor, short ones kept, the band between blended
            wavelength = 2 * math.pi / f
            low, high = s.original_context / s.low_freq_factor, s.original_context / s.high_freq_factor
            band = s.high_freq_factor - s.low_freq_factor
            smooth = (s.original_context / wavelength - s.low_freq_factor) / band
            blended = (1 - smooth) * f / s.factor + smooth * f
            out = np.where(wavelength > low, f / s.factor, np.where(wavelength < high, f, blended))
        out.flags.writeable = False
        return out


class Reference:
    """The forward's steps with the engine's readable layers (any array-API namespace).

    Each step is the arithmetic of :func:`attnlab.engine.block.transformer_block` and
    :func:`attnlab.engine.multihead.multi_head_attention`, call for call, so that a model run
    here gives the numbers a stack of those blocks gives, bit for bit.
    """

    def whole_block(self, arch: Architecture, p, x, *, hook, cache, rope, positions, key_padding, window):
        """The whole block at once, where ``ops`` has a faster form of it that gives the bits of the steps
        one by one (the fast path's decoding step without hooks); else None, and the steps run."""
        return None

    def embed(self, table, ids, scale: float = 1.0):
        x = embed(table, np.asarray(ids, dtype=np.int64))  # (T, d_model)
        return x if scale == 1.0 else x * np.asarray(scale, dtype=x.dtype)

    def norm(self, x, params):
        return norm(x, params)

    def final_norm(self, x, params):
        return norm(x, params)

    def linear(self, x, w, b):
        return linear(x, w, b)

    def project_qkv(self, h, p, arch: Architecture):
        xp = namespace(h)
        lead = shape_of(h)[:-1]  # (..., T)
        q = xp.reshape(linear(h, p.w_q, p.b_q), lead + (arch.n_head, arch.d_head))
        k = xp.reshape(linear(h, p.w_k, p.b_k), lead + (arch.n_kv_head, arch.d_head))
        v = xp.reshape(linear(h, p.w_v, p.b_v), lead + (arch.n_kv_head, arch.d_head))
        return q, k, v

    def rotate(self, q, k, rope: RoPE, positions):
        xp = namespace(q)
        qh, kh = _heads_first(xp, q), _heads_first(xp, k)  # (..., H, T, d): RoPE rotates along T
        cos, sin = rope.cos_sin(positions, like=qh)
        return _heads_first(xp, rope.rotate(qh, cos, sin)), _heads_first(xp, rope.rotate(kh, cos, sin))

    def attend(self, q, k, v, *, arch: Architecture, cache, key_padding, on_scores, on_pattern, window=None):
        """Attention of q (..., T, H, d) on k, v (..., T, H_kv, d) and what ``cache`` holds: z (..., T, H,
        d_head). ``window`` W (a local layer): the query at position p sees keys p - W + 1 .. p."""
        xp = namespace(q)
        # NaN weights or an overflow show up here (before the cache keeps them); cached keys were
        # checked when they were new
        for name, a in (("q = x @ w_q", q), ("k = context @ w_k", k), ("v = context @ w_v", v)):
            check_finite(xp, a, name)
        q, k, v = _heads_first(xp, q), _heads_first(xp, k), _heads_first(xp, v)  # (..., H, T, d)
        if cache is not None:
            k, v = cache.append(k, v)  # (..., H_kv, S, d): everything cached
        padding = None if key_padding is None else xp.expand_dims(key_padding, axis=-2)  # (..., 1, S)
        n_q, n_k = shape_of(q)[-2], shape_of(k)[-2]
        mask = None if window is None or n_k <= window else _window_mask(n_q, n_k, window)  # (T, S)
        if arch.attn_softcap is not None:  # capped before the softmax, where the hook point sees scores
            on_scores = _capped(arch.attn_softcap, on_scores, self)
        res = attend(
            q, k, v, mask=mask, causal="bottom_right" if arch.causal else None, scale=arch.scale,
            key_padding_mask=padding, enable_gqa=arch.n_kv_head != arch.n_head, return_trace=False,
            check_values=False, on_scores=on_scores, on_weights=on_pattern,
        )  # fmt: skip
        return _heads_first(xp, res.output)  # (..., T, H, d_head)

    def softcap(self, x, cap: float):
        """``cap · tanh(x / cap)`` (Gemma 2's soft cap: every number squashed into [-cap, cap])."""
        xp = namespace(x)
        c = xp.asarray(cap, dtype=x.dtype)
        return xp.tanh(x / c) * c

    def heads_side_by_side(self, z):
        xp = namespace(z)
        s = shape_of(z)
        return xp.reshape(z, s[:-2] + (s[-2] * s[-1],))  # (..., T, H * d_head)

    def gate_up(self, h, p):
        return linear(h, p.w_gate), linear(h, p.w_up)

    def gated(self, pre, lin, activation: str):
        return (silu(pre) if activation == "silu" else activate(pre, activation)) * lin

    def act(self, pre, activation: str):
        return activate(pre, activation)

    def unembed(self, x, weights: Weights):
        w_u = weights.unembed if weights.unembed is not None else namespace(x).matrix_transpose(weights.embed)
        return linear(x, w_u)

    def unembed_columns(self, x, weights: Weights, tokens: tuple[int, ...]):
        """The logits of ``tokens`` alone, (n, len(tokens)): those columns of the output layer."""
        if weights.unembed is not None:
            return x @ weights.unembed[:, list(tokens)]
        return x @ namespace(x).matrix_transpose(weights.embed[list(tokens)])

    def pool(self, x, key_padding):
        """The mean of the real tokens' rows, scaled to unit length (sentence-transformers' pooling)."""
        xp = namespace(x)
        if key_padding is None:
            key_padding = xp.ones(shape_of(x)[:-1], dtype=xp.bool)
        m = xp.astype(key_padding, x.dtype)[..., None]  # (..., T, 1)
        pooled = xp.sum(x * m, axis=-2) / xp.maximum(xp.sum(m, axis=-2), 1e-9)  # (..., d)
        norms = xp.sqrt(xp.sum(pooled * pooled, axis=-1, keepdims=True))
        return pooled / xp.maximum(norms, 1e-12)


REFERENCE = Reference()


def _window_mask(n_queries: int, n_keys: int, window: int) -> np.ndarray:
    """(T, S) boolean, True = may attend: the T queries are the last T of S positions (bottom-right),
    and the query at position p sees keys j > p - window (Hugging Face's ``sliding_window_overlay``)."""
    p = np.arange(n_keys - n_queries, n_keys)[:, None]  # each query's position
    return np.arange(n_keys)[None, :] > p - window


def _capped(cap: float, then, ops):
    """A scores callback that soft-caps the scores, then passes them to the hook ``then`` (or None)."""

    def call(scores):  # scores (..., H, T, S), blocked keys -inf
        capped = ops.softcap(scores, cap)  # a blocked key would come out -cap: it is shown -inf, as before
        capped = namespace(scores).where(scores == -np.inf, scores, capped)
        return capped if then is None else then(capped)

    return call


def _heads_first(xp, a):
    """Swap the last two axes but one: (..., T, H, d) <-> (..., H, T, d) (a view)."""
    n = len(shape_of(a))
    return xp.permute_dims(a, tuple(range(n - 3)) + (n - 2, n - 3, n - 1))


__all__ = ["REFERENCE", "Reference", "ScaledRoPE", "attention", "block", "forward", "mlp"]
