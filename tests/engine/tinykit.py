"""Tiny random models for the engine's tests: an :class:`Architecture` and its :class:`Weights`.

- :func:`llama`: a pre-norm decoder (RMSNorm, GQA, RoPE, SwiGLU, no biases, tied output), the
  shape the fast ops take; ``joined=True`` lays w_q, w_k, w_v and w_gate, w_up side by side as
  the GGUF loader does; ``kind="q4_1"`` keeps the blocks' matrices as Q4_1 blocks.
- :func:`bert`: a post-norm encoder (LayerNorm, biases everywhere, GELU, learned positions, token
  types, a LayerNorm on the embeddings, a pooled head), the shape the fast ops leave to the
  reference.
- :func:`gpt2`: a pre-norm decoder with LayerNorm, biases, tanh GELU and learned positions.
- :func:`stack`: the same model as a stack of :func:`attnlab.engine.block.transformer_block`
  calls, written from the forward's docstring, for bit-for-bit comparisons.
- :func:`joined_copy`: the same weights laid side by side; :func:`hooked`: a forward and every
  activation it passed a hook point.

Every weight is drawn from the ``rng`` given, so a seed gives the same model every run.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnlab.engine.block import BlockParams, transformer_block
from attnlab.engine.fast.decode import side_by_side
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.forward import REFERENCE, forward
from attnlab.engine.hooks import Hooks, hook_names
from attnlab.engine.layers import LayerNormParams, MLPParams, RMSNormParams, SwiGLUParams
from attnlab.engine.layers import norm as apply_norm
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.engine.positions import RoPE


def quant_matrix(rng, n_in: int, n_out: int) -> QuantMatrix:
    """A random Q4_1 matrix (n_in, n_out): random nibbles, small float16 scales and minimums."""
    blocks = rng.integers(0, 256, (n_out, n_in // 32, 20), dtype=np.uint8)
    scales = (rng.standard_normal((n_out, n_in // 32, 2)) * 0.05).astype(np.float16)
    blocks[..., :4] = scales.view(np.uint8).reshape(n_out, n_in // 32, 4)
    return QuantMatrix("Q4_1", np.ascontiguousarray(blocks.reshape(n_out, -1)))


def llama(
    rng,
    *,
    dtype=np.float64,
    kind: str = "float",
    joined: bool = False,
    n_layer: int = 2,
    d_model: int = 16,
    n_head: int = 4,
    n_kv_head: int = 2,
    d_head: int = 8,
    d_ff: int = 24,
    d_vocab: int = 40,
    n_ctx: int = 512,
    positions: str = "rope",
    rope_base: float = 100.0,
    rope_pairs: str = "interleaved",
    norm_weights: bool = True,
    **changes,
) -> tuple[Architecture, Weights]:
    """A Llama-style decoder of random weights (see the module docstring); ``changes``: more
    :class:`Architecture` fields (``attn_scale``, ``embed_scale`` ...)."""
    arch = Architecture(
        family="llama", causal=True, n_layer=n_layer, d_model=d_model, n_head=n_head, n_kv_head=n_kv_head,
        d_head=d_head, d_ff=d_ff, d_vocab=d_vocab, n_ctx=n_ctx, positions=positions, rope_base=rope_base,
        rope_pairs=rope_pairs, **changes,
    )  # fmt: skip

    def w(n_in, n_out):
        if kind == "q4_1":
            return quant_matrix(rng, n_in, n_out)
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(dtype)

    def rms():
        weight = (1 + 0.1 * rng.standard_normal(d_model)).astype(dtype) if norm_weights else None
        return RMSNormParams(weight, 1e-5)

    blocks = []
    for _ in range(n_layer):
        n_q, n_kv = n_head * d_head, n_kv_head * d_head
        attn = AttentionParams(w(d_model, n_q), w(d_model, n_kv), w(d_model, n_kv), w(n_q, d_model))
        mlp = SwiGLUParams(w_gate=w(d_model, d_ff), w_up=w(d_model, d_ff), w_down=w(d_ff, d_model))
        blocks.append(BlockParams(attn=attn, mlp=mlp, norm_1=rms(), norm_2=rms()))
    embed = rng.standard_normal((d_vocab, d_model)).astype(np.float32 if kind == "q4_1" else dtype)
    w = Weights(embed=embed, blocks=tuple(blocks), final_norm=rms())
    return arch, joined_copy(w) if joined and kind != "q4_1" else w


def joined_copy(w: Weights) -> Weights:
    """The same weights with each block's w_q, w_k, w_v and w_gate, w_up copied side by side into one
    array (as the GGUF loader lays them out): the fast ops read each group with one product."""
    blocks = []
    for b in w.blocks:
        a, f = b.attn, b.mlp
        attn = dataclasses.replace(a, **dict(zip(("w_q", "w_k", "w_v"), side_by_side(a.w_q, a.w_k, a.w_v))))
        mlp = SwiGLUParams(*side_by_side(f.w_gate, f.w_up), f.w_down)
        blocks.append(dataclasses.replace(b, attn=attn, mlp=mlp))
    return dataclasses.replace(w, blocks=tuple(blocks))


def hooked(arch: Architecture, w: Weights, ids, ops=REFERENCE, **options):
    """The forward's output and every activation it passed a hook point, by name (read, not changed)."""
    seen = {}

    def keep(a, name):
        seen[name] = a

    out = forward(arch, w, ids, ops=ops, hooks=Hooks([(lambda n: True, keep)], hook_names(arch)), **options)
    return out, seen


def bert(
    rng,
    *,
    dtype=np.float64,
    n_layer: int = 2,
    d_model: int = 16,
    n_head: int = 4,
    d_ff: int = 32,
    d_vocab: int = 30,
    n_ctx: int = 12,
    activation: str = "gelu",
    head: str = "pooled",
) -> tuple[Architecture, Weights]:
    """A BERT-style post-norm encoder of random weights (see the module docstring)."""
    arch = Architecture(
        family="bert", causal=False, n_layer=n_layer, d_model=d_model, n_head=n_head, n_kv_head=n_head,
        d_head=d_model // n_head, d_ff=d_ff, d_vocab=d_vocab, n_ctx=n_ctx, norm="layer", norm_eps=1e-12,
        norm_placement="post", final_norm=False, embed_norm=True, positions="learned", token_types=True,
        mlp="plain", activation=activation, tied_output=True, head=head,
    )  # fmt: skip

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype)

    def b(n):
        return (0.1 * rng.standard_normal(n)).astype(dtype)

    def ln():
        return LayerNormParams((1 + 0.1 * rng.standard_normal(d_model)).astype(dtype), b(d_model), 1e-12)

    blocks = tuple(
        BlockParams(
            attn=AttentionParams(*(w(d_model, d_model) for _ in range(4)), *(b(d_model) for _ in range(4))),
            mlp=MLPParams(w(d_model, d_ff), w(d_ff, d_model), b(d_ff), b(d_model), activation=activation),
            norm_1=ln(),
            norm_2=ln(),
        )
        for _ in range(n_layer)
    )
    return arch, Weights(
        embed=rng.standard_normal((d_vocab, d_model)).astype(dtype),
        blocks=blocks,
        pos_embed=(0.5 * rng.standard_normal((n_ctx, d_model))).astype(dtype),
        type_embed=(0.5 * rng.standard_normal((2, d_model))).astype(dtype),
        embed_norm=ln(),
    )


def gpt2(rng, *, dtype=np.float64, n_layer: int = 2, n_ctx: int = 32) -> tuple[Architecture, Weights]:
    """A GPT-2-style decoder of random weights: :func:`bert`'s blocks, pre-norm, causal, a final
    LayerNorm, next-token logits through the tied embeddings."""
    arch, w = bert(rng, dtype=dtype, n_layer=n_layer, n_ctx=n_ctx, activation="gelu_tanh", head="logits")
    arch = arch.replace(family="gpt2", causal=True, norm_placement="pre", final_norm=True, embed_norm=False,
                        token_types=False, norm_eps=1e-5)  # fmt: skip
    final = LayerNormParams((1 + 0.1 * rng.standard_normal(arch.d_model)).astype(dtype), None, 1e-5)
    return arch, Weights(embed=w.embed, blocks=w.blocks, pos_embed=w.pos_embed, final_norm=final)


def stack(arch: Architecture, weights: Weights, ids, *, key_padding=None, caches=None, positions=None):
    """The model as a stack of :func:`attnlab.engine.block.transformer_block` calls (traced): the
    embeddings (T, d_model) or (B, T, d_model), each block's :class:`BlockResult`, and the residual
    stream leaving the last block (before any final norm or head)."""
    ids = np.asarray(ids)
    if positions is None:
        past = caches[0].length if caches else 0
        positions = np.arange(past, past + ids.shape[-1])
    x = weights.embed[ids]
    if arch.embed_scale != 1.0:
        x = x * np.asarray(arch.embed_scale, dtype=x.dtype)
    if arch.positions == "learned":
        x = x + weights.pos_embed[positions]
    if arch.token_types:
        x = x + weights.type_embed[0]
    if arch.embed_norm:
        x = apply_norm(x, weights.embed_norm)
    rope = RoPE(head_dim=arch.d_head, base=arch.rope_base, convention=arch.rope_pairs)
    embedded, results = x, []
    for layer, params in enumerate(weights.blocks):
        res = transformer_block(
            x, params, n_head=arch.n_head, n_kv_head=arch.n_kv_head, norm=arch.norm_placement,
            causal="bottom_right" if arch.causal else None, key_padding_mask=key_padding,
            rope=rope if arch.positions == "rope" else None,
            positions=positions if arch.positions == "rope" else None,
            cache=None if caches is None else caches[layer], scale=arch.attn_scale, return_trace=True,
        )  # fmt: skip
        results.append(res)
        x = res.output
    return embedded, results, x
