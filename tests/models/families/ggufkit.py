"""GGUF files of the tiny models familykit writes no GGUF of: Llama 3, Mistral, Qwen3, Phi-3, Gemma, Gemma 3.

:func:`write` writes ``families.model(name)``'s weights as llama.cpp's ``convert_hf_to_gguf.py``
writes that architecture, with gguf's writer: tensor names from gguf's ``TensorNameMap``; a
``llama`` GGUF's W_Q and W_K rows permuted into interleaved pairs (familykit's ``_permute``) and,
for Llama 3, its frequency factors as ``rope_freqs.weight`` (computed as the converter computes
them); every Gemma norm stored as 1 + w; Phi-3's fused ``qkv_proj`` and ``gate_up_proj`` as
``attn_qkv`` and ``ffn_up``; the settings under the architecture's keys; the tokenizer as
familykit writes it. ``kind``: "F32" (the folder's values exactly) or "Q8_0" (2-D weights
quantised by ``gguf.quants``).

:data:`HF_SEMANTICS` says, for each, which settings transformers must be given to compute what
llama.cpp computes from the file (llama.cpp runs no sliding window for a ``llama`` GGUF, scales
a Gemma 3's scores by 1/√head_dim and makes five layers in six local): the oracle for files
transformers cannot read itself (Gemma, Llama 3's factors) is transformers on the folder's
weights with those settings.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from familykit import RECIPES, _permute, add_tokenizer, random_blocks

ARCHITECTURES = {"llama3": "llama", "mistral": "llama", "qwen3": "qwen3", "phi3": "phi3", "gemma": "gemma",
                 "gemma3": "gemma3", "smollm2": "llama"}  # fmt: skip
# transformers' config changes that give llama.cpp's reading of each file
HF_SEMANTICS = {
    "llama3": {},
    "mistral": {"sliding_window": None},
    "qwen3": {},
    "phi3": {},
    "gemma": {},
    "gemma3": {"query_pre_attn_scalar": 32, "layer_types": ["sliding_attention"] * 3},
    "smollm2": {},
}


def _rope_factors(config) -> np.ndarray:
    """Llama 3's frequency factors as ``convert_hf_to_gguf.py`` computes them (one per pair)."""
    p = config.rope_parameters
    head = config.head_dim
    freqs = 1.0 / (p["rope_theta"] ** (np.arange(0, head, 2, dtype=np.float32) / head))
    low, high = p["original_max_position_embeddings"] / p["low_freq_factor"], \
        p["original_max_position_embeddings"] / p["high_freq_factor"]  # fmt: skip
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high:
            out.append(1.0)
        elif wavelen > low:
            out.append(p["factor"])
        else:
            smooth = (p["original_max_position_embeddings"] / wavelen - p["low_freq_factor"]) / (
                p["high_freq_factor"] - p["low_freq_factor"])  # fmt: skip
            out.append(1 / ((1 - smooth) / p["factor"] + smooth))
    return np.array(out, dtype=np.float32)


def _settings(writer, name: str, config) -> None:
    head = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    params = config.rope_parameters
    theta = params["full_attention"]["rope_theta"] if name == "gemma3" else params["rope_theta"]
    writer.add_rope_freq_base(theta)
    if head != config.hidden_size // config.num_attention_heads or name.startswith("gemma"):
        writer.add_key_length(head)
        writer.add_value_length(head)
    if ARCHITECTURES[name] == "llama":
        writer.add_vocab_size(config.vocab_size)
        writer.add_rope_dimension_count(head)
    if name == "phi3":
        writer.add_rope_dimension_count(head)
    if name == "gemma3":
        writer.add_sliding_window(config.sliding_window)


def write(families, name: str, kind: str = "F32", *, down: str | None = None) -> Path:
    """``name``'s tiny model as a GGUF of ``kind`` ("F32" or "Q8_0"), written once in the session's folder."""
    import gguf
    from gguf.quants import quantize

    path = families.root / "gguf-more" / f"{name}-{kind}{'-' + down if down else ''}.gguf"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    recipe, (model, tokenizer) = RECIPES[name], families.model(name)
    arch = ARCHITECTURES[name]
    config = model.config
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_type("model")
    writer.add_name(f"attnlab tiny {name}")
    writer.add_file_type({"F32": 0, "Q8_0": 7}[kind])
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    _settings(writer, name, config)
    add_tokenizer(writer, recipe, tokenizer)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], config.num_hidden_layers)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    tensors = []
    for hf_name, tensor in model.state_dict().items():
        if hf_name == "lm_head.weight" and tied:
            continue
        gguf_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        assert gguf_name is not None, f"{name}: no GGUF name for {hf_name}"
        w = tensor.detach().float().numpy().copy()
        if arch == "llama" and gguf_name.endswith("attn_q.weight"):
            w = _permute(w, config.num_attention_heads)
        elif arch == "llama" and gguf_name.endswith("attn_k.weight"):
            w = _permute(w, config.num_key_value_heads)
        if name.startswith("gemma") and gguf_name.endswith("norm.weight"):
            w = w + 1  # Gemma's converter stores the multiplier itself
        tensors.append((gguf_name, w))
    if name == "llama3":
        tensors.append(("rope_freqs.weight", _rope_factors(config)))
    rng = np.random.default_rng(recipe.seed)
    for gguf_name, w in tensors:
        if down and gguf_name.endswith("ffn_down.weight"):
            q = gguf.GGMLQuantizationType[down]
            writer.add_tensor(gguf_name, random_blocks(down, w.shape[0], w.shape[1], rng), raw_dtype=q)
        elif w.ndim < 2 or kind == "F32":
            writer.add_tensor(gguf_name, w.astype(np.float32))
        else:
            q = gguf.GGMLQuantizationType[kind]
            writer.add_tensor(gguf_name, quantize(w.astype(np.float32), q), raw_dtype=q)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
