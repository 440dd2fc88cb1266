"""Llama-style decoders: Llama 2 and 3 (SmolLM, SmolLM2), Mistral, Qwen2, Qwen3 and Phi-3, as descriptions.

Every one is a pre-norm decoder with RMSNorm, rotary positions and a gated MLP
(act(x W_gate) ⊙ (x W_up) W_down, SiLU unless the config names another activation). What
each family adds, and the defaults a file that leaves a setting out gets (transformers'
config classes for a folder, llama.cpp for a GGUF):

=========  ==========================================================================================
llama      ``rope_type: llama3`` frequency scaling (or ``linear``); ``attention_bias``/``mlp_bias``
           (off); tied output when ``tie_word_embeddings`` (off); eps 1e-6; θ 10,000; KV heads = heads.
mistral    a sliding window on every layer (``sliding_window``, default 4,096; null: none); KV heads 8.
qwen2      biases on q, k and v (not on W_O); a window only with ``use_sliding_window`` (off), on the
           layers from ``max_window_layers`` on (or as ``layer_types`` says); KV heads 32.
qwen3      Qwen2 without the biases (``attention_bias``, off), an RMSNorm on each q and k head
           (``q_norm``, ``k_norm``) before RoPE; head_dim 128.
phi3       q, k and v in one ``qkv_proj`` and gate and up in one ``gate_up_proj``, split at load time
           into the engine's weights (rows q | k | v, gate | up); eps 1e-5; a window when
           ``sliding_window`` is set (off); a partial rotation or ``longrope`` refused by name.
=========  ==========================================================================================

The head size is ``head_dim`` where given, else hidden_size / heads. A GGUF names its settings
under ``{architecture}.*`` (Mistral is written as ``llama``; Llama 3's frequency factors as the
tensor ``rope_freqs.weight``). llama.cpp's converter permutes a ``llama`` GGUF's W_Q and W_K rows
within each head from Hugging Face's half-split layout into interleaved pairs, so those weights
rotate pairs (2i, 2i + 1): ``rope_pairs="interleaved"`` (scores unchanged; q and k coordinates in
a trace are in that interleaved order). The other architectures keep Hugging Face's layout.

:func:`load` opens the shipped SmolLM2's GGUF (its "q4_1" and cached "float32" paths,
:mod:`attnlab.models.families.gguf_weights`); any other checkpoint opens through
:mod:`attnlab.models.families.checkpoint`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnlab.engine.layers import RMSNormParams, SwiGLUParams
from attnlab.engine.model import Architecture, AttentionWeights, BlockWeights, RopeScaling, Weights
from attnlab.models.errors import Refusal
from attnlab.models.families import gguf_weights
from attnlab.models.families.errors import UnsupportedSetting
from attnlab.models.families.settings import Settings, activation, build, head_size, rope
from attnlab.models.gguf_file import GGUFFile
from attnlab.models.model import Decoder

FAMILIES = ("llama", "mistral", "qwen2", "qwen3", "phi3")  # by config.json's model_type
GGUF_ARCHITECTURES = ("llama", "qwen2", "qwen3", "phi3")  # by general.architecture

# transformers' defaults for what a config.json may leave out
_DEFAULTS = {
    "llama": dict(eps=1e-6, theta=10000.0, n_ctx=2048, kv=None),
    "mistral": dict(eps=1e-6, theta=10000.0, n_ctx=4096 * 32, kv=8),
    "qwen2": dict(eps=1e-6, theta=10000.0, n_ctx=32768, kv=32),
    "qwen3": dict(eps=1e-6, theta=10000.0, n_ctx=32768, kv=32),
    "phi3": dict(eps=1e-5, theta=10000.0, n_ctx=4096, kv=None),
}

# Tensor names, as a Hugging Face folder and a GGUF file spell them ({i}: the layer).
HF_NAMES = {
    "embed": "model.embed_tokens.weight",
    "unembed": "lm_head.weight",
    "final_norm": "model.norm.weight",
    "norm_1": "model.layers.{i}.input_layernorm.weight",
    "norm_2": "model.layers.{i}.post_attention_layernorm.weight",
    "q": "model.layers.{i}.self_attn.q_proj.weight",
    "k": "model.layers.{i}.self_attn.k_proj.weight",
    "v": "model.layers.{i}.self_attn.v_proj.weight",
    "o": "model.layers.{i}.self_attn.o_proj.weight",
    "qkv": "model.layers.{i}.self_attn.qkv_proj.weight",
    "q_norm": "model.layers.{i}.self_attn.q_norm.weight",
    "k_norm": "model.layers.{i}.self_attn.k_norm.weight",
    "gate": "model.layers.{i}.mlp.gate_proj.weight",
    "up": "model.layers.{i}.mlp.up_proj.weight",
    "down": "model.layers.{i}.mlp.down_proj.weight",
    "gate_up": "model.layers.{i}.mlp.gate_up_proj.weight",
}
GGUF_NAMES = {
    "embed": "token_embd.weight",
    "unembed": "output.weight",
    "final_norm": "output_norm.weight",
    "norm_1": "blk.{i}.attn_norm.weight",
    "norm_2": "blk.{i}.ffn_norm.weight",
    "q": "blk.{i}.attn_q.weight",
    "k": "blk.{i}.attn_k.weight",
    "v": "blk.{i}.attn_v.weight",
    "o": "blk.{i}.attn_output.weight",
    "qkv": "blk.{i}.attn_qkv.weight",
    "q_norm": "blk.{i}.attn_q_norm.weight",
    "k_norm": "blk.{i}.attn_k_norm.weight",
    "gate": "blk.{i}.ffn_gate.weight",
    "up": "blk.{i}.ffn_up.weight",
    "down": "blk.{i}.ffn_down.weight",
    "gate_up": "blk.{i}.ffn_up.weight",  # Phi-3's fused gate | up is written as ffn_up
    "norm_1_post": "blk.{i}.post_attention_norm.weight",
    "norm_2_post": "blk.{i}.post_ffw_norm.weight",
}


def _windows(s: Settings, family: str, n_layer: int) -> tuple[int | None, tuple[int, ...] | None]:
    """The sliding window and the layers that use it (None: every layer), as transformers decides."""
    types = s.get("layer_types")
    if s.null("sliding_window"):  # written as null: no window, whatever the family's default
        return None, None
    if family == "mistral" or family == "phi3":
        window = s.whole("sliding_window", 4096 if family == "mistral" else None)
        return window, None
    if family in ("qwen2", "qwen3"):
        if not s.flag("use_sliding_window", False):
            return None, None
        window = s.whole("sliding_window", 4096)
        if types is None:
            first = s.whole("max_window_layers", 28, minimum=0)
            return window, tuple(i for i in range(n_layer) if i >= first)
        return window, _local(s, types, n_layer)
    if types is not None and any(t != "full_attention" for t in types):  # llama: every layer global
        return s.whole("sliding_window"), _local(s, types, n_layer)
    return None, None


def _local(s: Settings, types, n_layer: int) -> tuple[int, ...]:
    """The layers ``layer_types`` marks ``sliding_attention`` (every other one full_attention)."""
    from attnlab.models.families.errors import BadSetting

    kinds = ("sliding_attention", "full_attention")
    if not isinstance(types, list) or len(types) != n_layer or any(t not in kinds for t in types):
        raise BadSetting(path=s.path, key=s.key("layer_types"), value=types,
                         need=f"a list of {n_layer} of {', '.join(kinds)}")  # fmt: skip
    return tuple(i for i, t in enumerate(types) if t == "sliding_attention")


def from_config(s: Settings, family: str) -> Architecture:
    """The Architecture a Hugging Face ``config.json`` of ``family`` (one of :data:`FAMILIES`) gives."""
    d = _DEFAULTS[family]
    d_model, n_head = s.whole("hidden_size"), s.whole("num_attention_heads")
    n_layer = s.whole("num_hidden_layers")
    base, scaling = rope(s, d["theta"])
    if family == "phi3" and scaling is not None:
        raise UnsupportedSetting(path=s.path, key="rope_scaling", value=scaling.kind, supported=("none",))
    window, local = _windows(s, family, n_layer)
    if s.flag("mlp_bias", False):  # the engine's gated MLP has no biases
        raise UnsupportedSetting(path=s.path, key="mlp_bias", value=True, supported=("false",))
    return build(
        s,
        keys={"n_head": "num_attention_heads", "n_kv_head": "num_key_value_heads", "d_head": "head_dim"},
        family=family,
        causal=True,
        n_layer=n_layer,
        d_model=d_model,
        n_head=n_head,
        n_kv_head=s.whole("num_key_value_heads", d["kv"] or n_head),
        d_head=head_size(s, d_model, n_head) if family != "qwen3" else s.whole("head_dim", 128),
        d_ff=s.whole("intermediate_size"),
        d_vocab=s.whole("vocab_size"),
        n_ctx=s.whole("max_position_embeddings", d["n_ctx"]),
        norm="rms",
        norm_eps=s.number("rms_norm_eps", d["eps"], zero=True),
        positions="rope",
        rope_base=base,
        rope_scaling=scaling,
        rope_pairs="half",
        sliding_window=window,
        local_layers=local,
        qk_norm=family == "qwen3",
        mlp="gated",
        activation=activation(s, "hidden_act", "silu"),
        tied_output=s.flag("tie_word_embeddings", False),
    )


def has_biases(s: Settings, family: str) -> bool:
    """Whether q, k and v (and, where stored, W_O) have biases: Qwen2's always, others' when
    ``attention_bias`` says so."""
    return family == "qwen2" or s.flag("attention_bias", False)


def from_gguf(s: Settings, arch_name: str, tensors: set[str] | frozenset = frozenset(), rope_freqs=None):
    """The Architecture a GGUF of ``arch_name`` (one of :data:`GGUF_ARCHITECTURES`) gives: its settings
    under ``{arch_name}.*`` (``s`` reads them by their short names), llama.cpp's defaults."""
    d_model, n_head = s.whole("embedding_length"), s.whole("attention.head_count")
    vocab = s.get("vocab_size")
    if vocab is None:
        vocab = len(s.values.get("tokenizer.ggml.tokens") or ())
    scaling = None
    if rope_freqs is not None:  # Llama 3's frequency factors, as convert_hf_to_gguf.py writes them
        scaling = RopeScaling(kind="factors", factor=1.0, factors=tuple(float(f) for f in rope_freqs))
    elif (kind := s.get("rope.scaling.type", "none")) not in ("none", "linear"):
        key = s.key("rope.scaling.type")
        raise UnsupportedSetting(path=s.path, key=key, value=kind, supported=("none", "linear"))
    elif kind == "linear":
        scaling = RopeScaling(kind="linear", factor=s.number("rope.scaling.factor"))
    d_head = s.whole("attention.key_length") if s.has("attention.key_length") else \
        head_size(s, d_model, n_head, key="attention.key_length", width_key="embedding_length",
                  heads_key="attention.head_count")  # fmt: skip
    if (turned := s.get("rope.dimension_count", d_head)) != d_head:  # a partial rotation
        raise UnsupportedSetting(path=s.path, key=s.key("rope.dimension_count"), value=turned,
                                 supported=(f"{d_head} (every coordinate turns)",))  # fmt: skip
    window = s.whole("attention.sliding_window", None) if arch_name == "phi3" else None
    return build(
        s,
        keys={"n_head": s.key("attention.head_count"), "n_kv_head": s.key("attention.head_count_kv"),
              "d_head": s.key("attention.key_length")},  # fmt: skip
        family=arch_name,
        causal=True,
        n_layer=s.whole("block_count"),
        d_model=d_model,
        n_head=n_head,
        n_kv_head=s.whole("attention.head_count_kv", n_head),
        d_head=d_head,
        d_ff=s.whole("feed_forward_length"),
        d_vocab=int(vocab),
        n_ctx=s.whole("context_length"),
        norm="rms",
        norm_eps=s.number("attention.layer_norm_rms_epsilon", zero=True),
        positions="rope",
        rope_base=s.number("rope.freq_base", 10000.0),
        rope_scaling=scaling,
        rope_pairs="interleaved" if arch_name == "llama" else "half",
        sliding_window=window,
        qk_norm=arch_name == "qwen3",
        mlp="gated",
        activation="silu",
        tied_output="output.weight" not in tensors,
    )


def architecture(md: dict, tensors: set[str] | None = None) -> Architecture:
    """The Architecture a llama-architecture GGUF file's metadata gives (``tensors``: its tensors' names)."""
    if md.get("general.architecture") != "llama":
        raise ValueError(f"expected a llama GGUF, got {md.get('general.architecture')!r}")
    return from_gguf(Settings(md, path="the GGUF metadata", prefix="llama."), "llama",
                     frozenset() if tensors is None else tensors)  # fmt: skip


def weights(t, arch: Architecture, names: dict[str, str], *, biases: bool = False,
            plus_one: bool = False) -> Weights:  # fmt: skip
    """The weights of a Llama-style decoder from store ``t`` (:mod:`attnlab.models.families.store`),
    its tensors named by ``names`` (:data:`HF_NAMES`, :data:`GGUF_NAMES` or a family's own).

    ``biases``: q, k and v have biases (Qwen2; Llama's ``attention_bias`` adds W_O's too, where the
    file has it); ``plus_one``: norms stored as w that multiply by 1 + w (Gemma's Hugging Face files).
    Fused tensors (Phi-3's ``qkv_proj`` and ``gate_up_proj``) are split here into the engine's weights:
    their stored rows are q | k | v and gate | up.
    """
    d, dh, ff = arch.d_model, arch.d_head, arch.d_ff
    n_q, n_kv = arch.n_head * dh, arch.n_kv_head * dh

    def norm(key: str, i: int, width: int = d) -> RMSNormParams:
        return RMSNormParams(t.vector(names[key].format(i=i), (width,), plus_one=plus_one), arch.norm_eps)

    def bias(name: str, width: int, rows: slice | None = None):
        b = name.replace(".weight", ".bias")
        return t.vector(b, (width if rows is None else rows.stop,), rows) if t.has(b) else None

    blocks = []
    for i in range(arch.n_layer):
        name = {key: value.format(i=i) for key, value in names.items()}
        if t.has(name.get("qkv", "")):  # Phi-3: one fused matrix, rows q | k | v
            parts = slice(0, n_q), slice(n_q, n_q + n_kv), slice(n_q + n_kv, n_q + 2 * n_kv)
            w_q, w_k, w_v = (t.linear(name["qkv"], (n_q + 2 * n_kv, d), rows=r) for r in parts)
            b_q = b_k = b_v = None
        else:
            widths = (("q", n_q), ("k", n_kv), ("v", n_kv))
            w_q, w_k, w_v = (t.linear(name[k], (n, d)) for k, n in widths)
            b_q, b_k, b_v = (bias(name[k], n) if biases else None for k, n in widths)
        attn = AttentionWeights(
            w_q=w_q, w_k=w_k, w_v=w_v, w_o=t.linear(name["o"], (d, n_q)), b_q=b_q, b_k=b_k, b_v=b_v,
            b_o=bias(name["o"], d) if biases else None,
            q_norm=norm("q_norm", i, dh) if arch.qk_norm else None,
            k_norm=norm("k_norm", i, dh) if arch.qk_norm else None,
        )  # fmt: skip
        if name.get("gate_up") and not t.has(name["gate"]) and t.has(name["gate_up"]):  # Phi-3: gate | up
            gate = t.linear(name["gate_up"], (2 * ff, d), rows=slice(0, ff))
            up = t.linear(name["gate_up"], (2 * ff, d), rows=slice(ff, 2 * ff))
        else:
            gate, up = t.linear(name["gate"], (ff, d)), t.linear(name["up"], (ff, d))
        blocks.append(
            BlockWeights(
                attn=attn,
                mlp=SwiGLUParams(gate, up, t.linear(name["down"], (d, ff))),
                norm_1=norm("norm_1", i),
                norm_2=norm("norm_2", i),
                norm_1_post=norm("norm_1_post", i) if arch.post_norms else None,
                norm_2_post=norm("norm_2_post", i) if arch.post_norms else None,
            )
        )
    embed = t.embedding(names["embed"], (arch.d_vocab, d))
    unembed = None if arch.tied_output else t.linear(names["unembed"], (arch.d_vocab, d))
    final = RMSNormParams(t.vector(names["final_norm"], (d,), plus_one=plus_one), arch.norm_eps)
    return Weights(embed=embed, blocks=tuple(blocks), final_norm=final, unembed=unembed)


# -- the shipped SmolLM2 ----------------------------------------------------------------------------


def load(
    path: Path | str,
    *,
    name: str,
    weights: str = "auto",
    dtype=np.float32,
    cache_dir=None,
    stop_tokens: tuple[str, ...] = ("<|im_end|>", "<|endoftext|>"),
) -> Decoder:
    """Open a llama GGUF file (memory-mapped) and build its tokenizer from the metadata.

    ``weights``: "q4_1" (products on the stored blocks: loads in well under a second), "float32"
    (the reference: gguf's dequantized values, from the weight cache, built the first time:
    docs/performance.md) or "auto": q4_1 when ``dtype`` is float32 and the compiled kernels passed
    their self-check here (:func:`attnlab.engine.fast.quant.kernel`), else float32. ``dtype``
    float64 computes on float64 copies of the float32 weights.
    """
    from attnlab.engine.fast import quant
    from attnlab.models.chat import chat_of
    from attnlab.models.tokens import from_gguf

    if weights not in ("auto", *gguf_weights.PATHS):
        raise Refusal(("weights",), "unknown_weights", weights, gguf_weights.PATHS)
    dtype = np.dtype(dtype)
    g = GGUFFile(path)
    arch = architecture(g.metadata, set(g.tensors))
    if weights == "auto":
        weights = "q4_1" if dtype == np.float32 and quant.kernel() is not None else "float32"
    if weights == "q4_1":
        if dtype != np.float32:
            raise Refusal(("dtype",), "blocks_need_float32")
        if quant.kernel() is None:
            raise RuntimeError(f"the q4_1 path cannot run here: {quant.reason()}")
        w = gguf_weights.block_weights(g, arch)
        path_name = "q4_1"
    else:
        w, _ = gguf_weights.float32_weights(g, arch, cache_dir=cache_dir)
        if dtype != np.float32:
            w = gguf_weights.cast(w, dtype)
        path_name = dtype.name
    words = from_gguf(g.metadata)
    tokenizer = words.tokenizer
    stops = [tokenizer.token_to_id(t) for t in stop_tokens]

    def reload(path_to: str) -> Decoder:
        if path_to == "q4_1":
            return load(g.path, name=name, weights="q4_1", cache_dir=cache_dir, stop_tokens=stop_tokens)
        return load(g.path, name=name, weights="float32", dtype=np.dtype(path_to), cache_dir=cache_dir,
                    stop_tokens=stop_tokens)  # fmt: skip

    return Decoder(
        name=name,
        arch=arch,
        weights=w,
        tokenizer=tokenizer,
        path=path_name,
        source=g.path,
        reload=reload,
        stop_ids=[s for s in stops if s is not None],
        chat_template=g.metadata.get("tokenizer.chat_template"),
        chat=chat_of(words),
    )
