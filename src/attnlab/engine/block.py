"""Transformer blocks and stacks: attention and a feed-forward network, each with a residual.

Pre-norm (GPT-2, Llama; ``norm="pre"``)::

    h   = x + MHA(norm_1(x))
    out = h + FFN(norm_2(h))

Post-norm (the original Transformer, BERT; ``norm="post"``)::

    h   = norm_1(x + MHA(x))
    out = norm_2(h + FFN(h))

These are ``nn.TransformerEncoderLayer`` with ``norm_first=True`` and ``False``.
A pre-norm stack needs a final norm after its last block; a post-norm stack
already ends on one.

:class:`BlockEdits` are the block's three hook points (ablation, patching and
caching in interpretability): the heads before W_O, the residual stream between
the sublayers, the feed-forward output before its residual add. Without them
a block computes exactly what it computes with edits that return their input.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from attnlab.engine._arrays import Array, arange, as_array, namespace, shape_of
from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.layers import (
    LayerNormParams,
    MLPParams,
    RMSNormParams,
    SwiGLUParams,
    mlp,
)
from attnlab.engine.layers import norm as apply_norm
from attnlab.engine.multihead import AttentionParams, MultiHeadResult, multi_head_attention
from attnlab.engine.positions import RoPE
from attnlab.engine.threads import holds_one_blas_thread
from attnlab.engine.trace import Trace, TraceBuilder

NORM_PLACEMENTS = ("pre", "post")


@dataclass(frozen=True, eq=False)
class BlockParams:
    """One block: ``attn``, ``mlp`` (MLPParams or SwiGLUParams), ``norm_1`` before or
    after attention and ``norm_2`` before or after the MLP (LayerNorm or RMSNorm)."""

    attn: AttentionParams
    mlp: MLPParams | SwiGLUParams
    norm_1: LayerNormParams | RMSNormParams
    norm_2: LayerNormParams | RMSNormParams


@dataclass(frozen=True, eq=False)
class BlockEdits:
    """Functions a block applies to three of its intermediates (hooks); each may be None.

    - ``z(concat)``: the heads side by side before W_O, (..., L, n_head * d_v); query
      head h owns columns h*d_v .. (h+1)*d_v - 1 (never a shared KV head);
    - ``mid(h)``: the residual stream between the sublayers, (..., L, d_model):
      pre-norm ``x + MHA(norm_1(x))``, post-norm ``norm_1(x + MHA(x))``;
    - ``mlp(ff)``: the feed-forward output before its residual add, (..., L, d_model).

    Each returns an array of its argument's shape and dtype (C-contiguous), or its
    argument itself; it never writes into its argument (it may keep it: the block
    does not write into it either). The block goes on with what was returned.
    """

    z: Callable[[Array], Array] | None = None
    mid: Callable[[Array], Array] | None = None
    mlp: Callable[[Array], Array] | None = None


@dataclass(frozen=True, eq=False)
class BlockResult:
    """Output of :func:`transformer_block`.

    ``output`` (..., L, d_model); ``attention`` the block's MultiHeadResult
    (per-head weights included); ``trace`` when asked, in computation order:

    - pre-norm: input, norm_1, attn.*, residual_1, norm_2, mlp.*, output
    - post-norm: input, attn.*, residual_1, norm_1, mlp.*, residual_2, output

    where residual_1 = x + attention output (pre) or x + MHA(x) (post), and
    attn.* / mlp.* are the names of :class:`MultiHeadResult` and :func:`mlp`.
    """

    output: Array
    attention: MultiHeadResult
    trace: Trace | None = None


@dataclass(frozen=True, eq=False)
class StackResult:
    """Output of a stack: ``output`` (..., L, d_model), ``blocks`` each block's result,
    ``trace`` when asked: input, blocks.<i>.<block names>, final_norm (if any), output."""

    output: Array
    blocks: tuple[BlockResult, ...]
    trace: Trace | None = None


@holds_one_blas_thread
def transformer_block(
    x: Array,
    params: BlockParams,
    *,
    n_head: int,
    n_kv_head: int | None = None,
    norm: str = "pre",
    mask: Array | None = None,
    causal: str | None = None,
    key_padding_mask: Array | None = None,
    rope: RoPE | None = None,
    positions: Array | Sequence[int] | None = None,
    cache: KVCache | None = None,
    scale: float | None = None,
    return_trace: bool = False,
    edits: BlockEdits | None = None,
) -> BlockResult:
    """Run one transformer block on ``x`` (..., L, d_model); see the module docstring.

    The attention arguments are passed to :func:`multi_head_attention`. ``edits``:
    see :class:`BlockEdits` (a trace shows the heads and the feed-forward output
    before their edits, ``concat`` and the residuals after them).
    """
    if norm not in NORM_PLACEMENTS:
        raise FieldError("norm", f"norm={norm!r}; use 'pre' (GPT-2, Llama) or 'post' (BERT)")
    x = as_array(x, "x")
    steps = TraceBuilder(enabled=return_trace)
    steps.add("input", x)

    def attend(h):
        return multi_head_attention(
            h,
            params.attn,
            n_head=n_head,
            n_kv_head=n_kv_head,
            mask=mask,
            causal=causal,
            key_padding_mask=key_padding_mask,
            rope=rope,
            positions=positions,
            cache=cache,
            scale=scale,
            return_trace=return_trace,
            edit_z=None if edits is None else edits.z,
        )

    edit_mid = None if edits is None else edits.mid
    edit_mlp = None if edits is None else edits.mlp
    if norm == "pre":
        # 1) normalise, attend, add back
        h_norm = apply_norm(x, params.norm_1)
        steps.add("norm_1", h_norm)
        att = attend(h_norm)
        steps.extend("attn", att.trace)
        h = x + att.output
        if edit_mid is not None:
            h = edit_mid(h)
        steps.add("residual_1", h)
        # 2) normalise, feed forward, add back
        f_norm = apply_norm(h, params.norm_2)
        steps.add("norm_2", f_norm)
        ff, ff_trace = mlp(f_norm, params.mlp, return_trace=return_trace)
        steps.extend("mlp", ff_trace)
        if edit_mlp is not None:
            ff = edit_mlp(ff)
        out = h + ff
    else:
        # 1) attend, add back, normalise
        att = attend(x)
        steps.extend("attn", att.trace)
        r1 = x + att.output
        steps.add("residual_1", r1)
        h = apply_norm(r1, params.norm_1)
        if edit_mid is not None:
            h = edit_mid(h)
        steps.add("norm_1", h)
        # 2) feed forward, add back, normalise
        ff, ff_trace = mlp(h, params.mlp, return_trace=return_trace)
        steps.extend("mlp", ff_trace)
        if edit_mlp is not None:
            ff = edit_mlp(ff)
        r2 = h + ff
        steps.add("residual_2", r2)
        out = apply_norm(r2, params.norm_2)
    steps.add("output", out)
    return BlockResult(output=out, attention=att, trace=steps.build())


@holds_one_blas_thread
def encoder_stack(
    x: Array,
    layers: Sequence[BlockParams],
    *,
    n_head: int,
    norm: str = "post",
    final_norm: LayerNormParams | RMSNormParams | None = None,
    mask: Array | None = None,
    key_padding_mask: Array | None = None,
    scale: float | None = None,
    return_trace: bool = False,
) -> StackResult:
    """Run bidirectional blocks (no causal mask) over ``x`` (..., L, d_model).

    BERT-style encoders are post-norm with no final norm; a pre-norm encoder
    should pass ``final_norm``.
    """
    return _stack(
        x,
        layers,
        final_norm=final_norm,
        return_trace=return_trace,
        block_kwargs=dict(
            n_head=n_head, norm=norm, mask=mask, key_padding_mask=key_padding_mask, scale=scale
        ),
    )


@holds_one_blas_thread
def decoder_stack(
    x: Array,
    layers: Sequence[BlockParams],
    *,
    n_head: int,
    n_kv_head: int | None = None,
    final_norm: LayerNormParams | RMSNormParams | None,
    norm: str = "pre",
    rope: RoPE | None = None,
    positions: Array | Sequence[int] | None = None,
    caches: Sequence[KVCache] | None = None,
    mask: Array | None = None,
    key_padding_mask: Array | None = None,
    scale: float | None = None,
    return_trace: bool = False,
) -> StackResult:
    """Run causal self-attention blocks over ``x`` (..., L, d_model), then ``final_norm``.

    The causal mask is aligned bottom-right, so with ``caches`` (one
    :class:`KVCache` per layer) the L new tokens are the last L positions:
    feeding tokens one at a time gives the same outputs as one full pass.
    ``positions`` default to ``past, past + 1, ...`` where past is the cached length.
    """
    if caches is not None and len(caches) != len(layers):
        raise FieldError("caches", f"{len(caches)} caches for {len(layers)} layers; give one per layer")
    x = as_array(x, "x")
    if positions is None and rope is not None:
        xp = namespace(x)
        past = caches[0].length if caches else 0
        positions = arange(xp, shape_of(x)[-2], x) + past
    return _stack(
        x,
        layers,
        final_norm=final_norm,
        return_trace=return_trace,
        caches=caches,
        block_kwargs=dict(
            n_head=n_head,
            n_kv_head=n_kv_head,
            norm=norm,
            causal="bottom_right",
            rope=rope,
            positions=positions,
            mask=mask,
            key_padding_mask=key_padding_mask,
            scale=scale,
        ),
    )


def _stack(x, layers, *, final_norm, return_trace, block_kwargs, caches=None) -> StackResult:
    if len(layers) == 0:
        raise FieldError("layers", "a stack needs at least one block")
    x = as_array(x, "x")
    steps = TraceBuilder(enabled=return_trace)
    steps.add("input", x)
    results = []
    h = x
    for i, params in enumerate(layers):
        res = transformer_block(
            h,
            params,
            cache=None if caches is None else caches[i],
            return_trace=return_trace,
            **block_kwargs,
        )
        steps.extend(f"blocks.{i}", res.trace)
        results.append(res)
        h = res.output
    if final_norm is not None:
        h = apply_norm(h, final_norm)
        steps.add("final_norm", h)
    steps.add("output", h)
    return StackResult(output=h, blocks=tuple(results), trace=steps.build())
