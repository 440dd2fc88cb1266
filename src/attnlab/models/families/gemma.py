"""Gemma, Gemma 2 and Gemma 3: Llama-style decoders with Gemma's habits, as descriptions.

What every Gemma does: its norms multiply by 1 + w (a Hugging Face file stores w, so the
weight the engine multiplies by is 1 + w, computed in float32 as transformers computes it; a
GGUF stores 1 + w itself), its MLP is GeGLU with tanh-GELU (``hidden_activation``, default
``gelu_pytorch_tanh``), its token embeddings are multiplied by √d_model (held, as transformers
holds it, as a float32 number), its output is tied to the embeddings, and its attention is
causal with RoPE in Hugging Face's half-split layout.

=========  ==========================================================================================
gemma      head_dim 256, KV heads 16, θ 10,000, eps 1e-6, scale 1/√head_dim.
gemma2     sandwich norms (``post_attention_layernorm``, ``post_feedforward_layernorm``); scores and
           logits soft-capped (``attn_logit_softcapping`` 50, ``final_logit_softcapping`` 30);
           local layers (``sliding_window`` 4,096) and global ones alternating, layer 0 local (or
           as ``layer_types`` says); scale 1/√``query_pre_attn_scalar`` (256); KV heads 4.
gemma3     Gemma 2's sandwich norms and scale, an RMSNorm (1 + w) on each q and k head before RoPE,
           no soft caps unless set; every sixth layer global (``sliding_window_pattern`` 6, or
           ``layer_types``), the others local (window 4,096); two RoPE bases: local layers θ 10,000
           (``rope_local_base_freq``), global θ 1,000,000 with their ``rope_scaling`` (linear) where set.
           A multimodal Gemma 3 folder is read as its text model (``text_config``).
=========  ==========================================================================================

A GGUF gives the same settings under ``gemma*.``; what it leaves out comes from llama.cpp: local
layers every other one (Gemma 2) or five in six (Gemma 3), Gemma 3's local θ 10,000, the soft
caps 50 and 30 (Gemma 2). llama.cpp scales scores by 1/√head_dim, except for the 27B models (46
and 62 layers), which take 1/√(d_model / heads): that is their ``query_pre_attn_scalar``.
"""

from __future__ import annotations

import math

import numpy as np

from attnlab.engine.model import Architecture, RopeScaling
from attnlab.models.families.errors import UnsupportedSetting
from attnlab.models.families.llama import HF_NAMES
from attnlab.models.families.settings import Settings, activation, build, rope

FAMILIES = ("gemma", "gemma2", "gemma3")  # gemma3: config.json's gemma3_text, or gemma3 (multimodal)
GGUF_ARCHITECTURES = ("gemma", "gemma2", "gemma3")

_DEFAULTS = {
    "gemma": dict(kv=16, n_ctx=8192, window=None, pattern=None, attn_cap=None, final_cap=None),
    "gemma2": dict(kv=4, n_ctx=8192, window=4096, pattern=2, attn_cap=50.0, final_cap=30.0),
    "gemma3": dict(kv=16, n_ctx=131072, window=4096, pattern=6, attn_cap=None, final_cap=None),
}

# Gemma 2 and 3 name their sandwich norms as Llama names its MLP norm: post_attention_layernorm is the
# norm on the attention's output; the MLP's input norm is pre_feedforward_layernorm.
HF_SANDWICH = dict(
    HF_NAMES,
    norm_1_post="model.layers.{i}.post_attention_layernorm.weight",
    norm_2="model.layers.{i}.pre_feedforward_layernorm.weight",
    norm_2_post="model.layers.{i}.post_feedforward_layernorm.weight",
)


def names(family: str, prefix: str = "model.") -> dict[str, str]:
    """The Hugging Face tensor names of ``family``, under ``prefix`` instead of ``model.`` (a multimodal
    Gemma 3 keeps its text model under ``language_model.model.`` or ``model.language_model.``)."""
    table = HF_NAMES if family == "gemma" else HF_SANDWICH
    return {k: prefix + v[len("model."):] if v.startswith("model.") else v for k, v in table.items()}


def embed_scale(d_model: int) -> float:
    """√d_model as transformers holds it: a float32 number (the engine rounds it on to its dtype)."""
    return float(np.float32(math.sqrt(d_model)))


def _local_layers(pattern: int, n_layer: int) -> tuple[int, ...]:
    """Layers i with (i + 1) % pattern != 0: every ``pattern``-th layer global, the others local."""
    return tuple(i for i in range(n_layer) if (i + 1) % pattern)


def from_config(s: Settings, family: str) -> Architecture:
    """The Architecture a Hugging Face ``config.json`` of ``family`` (one of :data:`FAMILIES`) gives."""
    from attnlab.models.families.llama import _local

    d = _DEFAULTS[family]
    d_model, n_head = s.whole("hidden_size"), s.whole("num_attention_heads")
    n_layer = s.whole("num_hidden_layers")
    d_head = s.whole("head_dim", 256)
    if s.flag("use_bidirectional_attention", False):  # EmbeddingGemma: an encoder
        raise UnsupportedSetting(path=s.path, key="use_bidirectional_attention", value=True,
                                 supported=("false (a causal decoder)",))  # fmt: skip
    local_base = None
    if family == "gemma3":
        base, scaling = rope(s, 1_000_000.0, layer_type="full_attention")
        local = s.number("rope_local_base_freq", 10_000.0)
        local_base, local_scaling = rope(s, local, layer_type="sliding_attention")
        if local_scaling is not None:
            raise UnsupportedSetting(path=s.path, key="rope_parameters.sliding_attention.rope_type",
                                     value=local_scaling.kind, supported=("default",))  # fmt: skip
    else:
        base, scaling = rope(s, 10_000.0)
    window, local = None, None
    if d["window"] is not None and not s.null("sliding_window"):
        window = s.whole("sliding_window", d["window"])
        types = s.get("layer_types")
        pattern = s.whole("sliding_window_pattern", d["pattern"])
        local = _local(s, types, n_layer) if types is not None else _local_layers(pattern, n_layer)
    if not local:  # no local layer: every layer global, with the global RoPE
        window, local, local_base = None, None, None
    scale = 1.0 / math.sqrt(d_head) if family == "gemma" else s.number("query_pre_attn_scalar", 256) ** -0.5
    return build(
        s,
        keys={"n_head": "num_attention_heads", "n_kv_head": "num_key_value_heads", "d_head": "head_dim"},
        family=family,
        causal=True,
        n_layer=n_layer,
        d_model=d_model,
        n_head=n_head,
        n_kv_head=s.whole("num_key_value_heads", d["kv"]),
        d_head=d_head,
        d_ff=s.whole("intermediate_size"),
        d_vocab=s.whole("vocab_size"),
        n_ctx=s.whole("max_position_embeddings", d["n_ctx"]),
        norm="rms",
        norm_eps=s.number("rms_norm_eps", 1e-6, zero=True),
        positions="rope",
        rope_base=base,
        rope_scaling=scaling,
        rope_base_local=local_base,
        rope_pairs="half",
        embed_scale=embed_scale(d_model),
        sliding_window=window,
        local_layers=local,
        qk_norm=family == "gemma3",
        post_norms=family != "gemma",
        attn_scale=scale,
        attn_softcap=_cap(s, "attn_logit_softcapping", d["attn_cap"]) if family != "gemma" else None,
        final_softcap=_cap(s, "final_logit_softcapping", d["final_cap"]) if family != "gemma" else None,
        mlp="gated",
        activation=activation(s, "hidden_activation", "gelu_pytorch_tanh"),
        tied_output=True,
    )


def _cap(s: Settings, key: str, default: float | None) -> float | None:
    """A soft cap: the file's, none where it writes null, else the family's default."""
    return None if s.null(key) else s.number(key, default)


def from_gguf(s: Settings, arch_name: str) -> Architecture:
    """The Architecture a GGUF of ``arch_name`` (one of :data:`GGUF_ARCHITECTURES`) gives, llama.cpp's
    defaults for what it leaves out (see the module docstring)."""
    d = _DEFAULTS[arch_name]
    d_model, n_head = s.whole("embedding_length"), s.whole("attention.head_count")
    n_layer = s.whole("block_count")
    d_head = s.whole("attention.key_length", d_model // n_head)
    big = {"gemma2": 46, "gemma3": 62}.get(arch_name) == n_layer  # llama.cpp's 27B: scale by d_model / heads
    scale = 1.0 / math.sqrt(d_model // n_head if big else d_head)
    window = local = local_base = scaling = None
    if arch_name != "gemma":
        window = s.whole("attention.sliding_window", d["window"])
        local = _local_layers(d["pattern"], n_layer)
    if arch_name == "gemma3":
        local_base = 10_000.0
        kind = s.get("rope.scaling.type", "none")
        if kind not in ("none", "linear"):
            raise UnsupportedSetting(path=s.path, key=s.key("rope.scaling.type"), value=kind,
                                     supported=("none", "linear"))  # fmt: skip
        if kind == "linear":
            scaling = RopeScaling(kind="linear", factor=s.number("rope.scaling.factor"))
    vocab = len(s.values.get("tokenizer.ggml.tokens") or ())
    return build(
        s,
        keys={"n_head": s.key("attention.head_count"), "n_kv_head": s.key("attention.head_count_kv"),
              "d_head": s.key("attention.key_length")},  # fmt: skip
        family=arch_name,
        causal=True,
        n_layer=n_layer,
        d_model=d_model,
        n_head=n_head,
        n_kv_head=s.whole("attention.head_count_kv", n_head),
        d_head=d_head,
        d_ff=s.whole("feed_forward_length"),
        d_vocab=vocab,
        n_ctx=s.whole("context_length"),
        norm="rms",
        norm_eps=s.number("attention.layer_norm_rms_epsilon", zero=True),
        positions="rope",
        rope_base=s.number("rope.freq_base", 1_000_000.0 if arch_name == "gemma3" else 10_000.0),
        rope_scaling=scaling,
        rope_base_local=local_base,
        rope_pairs="half",
        embed_scale=embed_scale(d_model),  # llama.cpp: sqrtf(n_embd), a float32 number too
        sliding_window=window,
        local_layers=local,
        qk_norm=arch_name == "gemma3",
        post_norms=arch_name != "gemma",
        attn_scale=scale,
        attn_softcap=s.number("attn_logit_softcapping", d["attn_cap"]) if arch_name == "gemma2" else None,
        final_softcap=s.number("final_logit_softcapping", d["final_cap"]) if arch_name == "gemma2" else None,
        mlp="gated",
        activation="gelu_tanh",
        tied_output=True,
    )
