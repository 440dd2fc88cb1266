"""GPT-2 as a description: learned positions, LayerNorm before each sublayer, biases, tanh-GELU, tied output.

    x = W_E[ids] + W_pos[positions]
    per block:  h = x + Attn(LN_1(x));  x = h + MLP(LN_2(h))     MLP: gelu_tanh(x W_fc + b) W_proj + b
    logits = LN_f(x) W_Eᵀ

A Hugging Face folder stores its matrices as ``Conv1D`` weights, (n_in, n_out): already the
engine's layout, so they are read as they are (float values; their stored rows are inputs, so
no product reads them as blocks). q, k and v sit side by side in ``c_attn`` (columns q | k |
v), split here. Names start with ``transformer.`` (GPT2LMHeadModel) or not (GPT2Model).
A GGUF stores them transposed like any Linear (``attn_qkv`` rows q | k | v, ``ffn_up``,
``ffn_down``), with ``position_embd`` and, where the converter wrote one, an ``output``.

Defaults (transformers' GPT2Config): ``n_inner`` 4 · n_embd, ``layer_norm_epsilon`` 1e-5,
``activation_function`` gelu_new, ``n_positions`` 1,024, scores scaled by 1/√d_head
(``scale_attn_weights``; false: unscaled); ``scale_attn_by_inverse_layer_idx`` is refused by name.
"""

from __future__ import annotations

from attnlab.engine.block import BlockParams
from attnlab.engine.layers import LayerNormParams, MLPParams
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.models.families.errors import UnsupportedSetting
from attnlab.models.families.settings import Settings, activation, build, head_size

FAMILIES = ("gpt2",)
GGUF_ARCHITECTURES = ("gpt2",)


def from_config(s: Settings) -> Architecture:
    """The Architecture a GPT-2 ``config.json`` gives."""
    d_model, n_head = s.whole("n_embd"), s.whole("n_head")
    if s.flag("scale_attn_by_inverse_layer_idx", False):
        raise UnsupportedSetting(path=s.path, key="scale_attn_by_inverse_layer_idx", value=True,
                                 supported=("false",))  # fmt: skip
    d_head = head_size(s, d_model, n_head, key="head_dim", width_key="n_embd", heads_key="n_head")
    return build(
        s,
        keys={"n_head": "n_head", "n_kv_head": "n_head", "d_head": "n_embd / n_head"},
        family="gpt2",
        causal=True,
        n_layer=s.whole("n_layer"),
        d_model=d_model,
        n_head=n_head,
        n_kv_head=n_head,
        d_head=d_head,
        d_ff=s.whole("n_inner", 4 * d_model),
        d_vocab=s.whole("vocab_size"),
        n_ctx=s.whole("n_positions", 1024),
        norm="layer",
        norm_eps=s.number("layer_norm_epsilon", 1e-5, zero=True),
        positions="learned",
        mlp="plain",
        activation=activation(s, "activation_function", "gelu_new"),
        attn_scale=None if s.flag("scale_attn_weights", True) else 1.0,
        tied_output=s.flag("tie_word_embeddings", True),
    )


def from_gguf(s: Settings, tensors) -> Architecture:
    """The Architecture a ``gpt2`` GGUF's settings give (``tensors``: its tensors' names)."""
    d_model, n_head = s.whole("embedding_length"), s.whole("attention.head_count")
    d_head = head_size(s, d_model, n_head, key="attention.key_length", width_key="embedding_length",
                       heads_key="attention.head_count")  # fmt: skip
    return build(
        s,
        keys={"n_head": s.key("attention.head_count"), "n_kv_head": s.key("attention.head_count"),
              "d_head": s.key("attention.key_length")},  # fmt: skip
        family="gpt2",
        causal=True,
        n_layer=s.whole("block_count"),
        d_model=d_model,
        n_head=n_head,
        n_kv_head=n_head,
        d_head=d_head,
        d_ff=s.whole("feed_forward_length", 4 * d_model),
        d_vocab=len(s.values.get("tokenizer.ggml.tokens") or ()),
        n_ctx=s.whole("context_length"),
        norm="layer",
        norm_eps=s.number("attention.layer_norm_epsilon", zero=True),
        positions="learned",
        mlp="plain",
        activation="gelu_tanh",
        tied_output="output.weight" not in tensors,
    )


def _prefix(t) -> str:
    return "transformer." if t.has("transformer.wte.weight") else ""


def weights(t, arch: Architecture) -> Weights:
    """GPT-2's weights from a Hugging Face folder's store ``t``."""
    p = _prefix(t)
    d, ff, eps = arch.d_model, arch.d_ff, arch.norm_eps

    def ln(name: str) -> LayerNormParams:
        return LayerNormParams(t.vector(p + name + ".weight", (d,)), t.vector(p + name + ".bias", (d,)), eps)

    blocks = []
    for i in range(arch.n_layer):
        h = f"h.{i}."
        qkv, qkv_b = p + h + "attn.c_attn.weight", p + h + "attn.c_attn.bias"
        cols = [slice(j * d, (j + 1) * d) for j in range(3)]  # columns q | k | v
        attn = AttentionParams(
            *(t.conv1d(qkv, (d, 3 * d), c) for c in cols),
            t.conv1d(p + h + "attn.c_proj.weight", (d, d)),
            *(t.vector(qkv_b, (3 * d,), c) for c in cols),
            t.vector(p + h + "attn.c_proj.bias", (d,)),
        )
        mlp = MLPParams(
            w_1=t.conv1d(p + h + "mlp.c_fc.weight", (d, ff)),
            b_1=t.vector(p + h + "mlp.c_fc.bias", (ff,)),
            w_2=t.conv1d(p + h + "mlp.c_proj.weight", (ff, d)),
            b_2=t.vector(p + h + "mlp.c_proj.bias", (d,)),
            activation=arch.activation,
        )
        blocks.append(BlockParams(attn=attn, mlp=mlp, norm_1=ln(h + "ln_1"), norm_2=ln(h + "ln_2")))
    return Weights(
        embed=t.embedding(p + "wte.weight", (arch.d_vocab, d)),
        pos_embed=t.table(p + "wpe.weight", arch.n_ctx, d),
        blocks=tuple(blocks),
        final_norm=ln("ln_f"),
        unembed=None if arch.tied_output else t.linear("lm_head.weight", (arch.d_vocab, d)),
    )


def gguf_weights(t, arch: Architecture) -> Weights:
    """GPT-2's weights from a GGUF's store ``t`` (llama.cpp's names; every matrix stored (n_out, n_in))."""
    d, ff, eps = arch.d_model, arch.d_ff, arch.norm_eps

    def ln(name: str) -> LayerNormParams:
        return LayerNormParams(t.vector(name + ".weight", (d,)), t.vector(name + ".bias", (d,)), eps)

    blocks = []
    for i in range(arch.n_layer):
        b = f"blk.{i}."
        rows = [slice(j * d, (j + 1) * d) for j in range(3)]  # stored rows q | k | v
        attn = AttentionParams(
            *(t.linear(b + "attn_qkv.weight", (3 * d, d), r) for r in rows),
            t.linear(b + "attn_output.weight", (d, d)),
            *(t.vector(b + "attn_qkv.bias", (3 * d,), r) for r in rows),
            t.vector(b + "attn_output.bias", (d,)),
        )
        mlp = MLPParams(
            w_1=t.linear(b + "ffn_up.weight", (ff, d)),
            b_1=t.vector(b + "ffn_up.bias", (ff,)),
            w_2=t.linear(b + "ffn_down.weight", (d, ff)),
            b_2=t.vector(b + "ffn_down.bias", (d,)),
            activation=arch.activation,
        )
        blocks.append(BlockParams(attn=attn, mlp=mlp, norm_1=ln(b + "attn_norm"), norm_2=ln(b + "ffn_norm")))
    return Weights(
        embed=t.embedding("token_embd.weight", (arch.d_vocab, d)),
        pos_embed=t.table("position_embd.weight", arch.n_ctx, d),
        blocks=tuple(blocks),
        final_norm=ln("output_norm"),
        unembed=None if arch.tied_output else t.linear("output.weight", (arch.d_vocab, d)),
    )
