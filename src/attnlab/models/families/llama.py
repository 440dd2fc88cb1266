"""Llama-style decoders from a GGUF file: the Architecture its metadata gives, and the loaded model.

A llama-architecture GGUF (``general.architecture == "llama"``) names its shapes under
``llama.*``: blocks, heads and KV heads, widths, RoPE's base, RMSNorm's eps, the context it
was trained for. Blocks are pre-norm with RMSNorm, attention has no biases, the MLP is
SwiGLU, and the output layer is the token embeddings' transpose unless the file stores an
``output`` tensor.

llama.cpp's converter permutes W_Q's and W_K's rows within each head from Hugging Face's
half-split layout into interleaved pairs, so the stored weights rotate pairs (2i, 2i + 1):
``rope_pairs="interleaved"``. Scores are unchanged; q and k coordinates in a trace are in that
interleaved order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.engine.model import Architecture
from attnlab.lab.realmodel import problems
from attnlab.models.families import gguf_weights
from attnlab.models.gguf_file import GGUFFile
from attnlab.models.model import Decoder


def architecture(md: dict, tensors: set[str] | None = None) -> Architecture:
    """The Architecture a llama-architecture GGUF file's metadata gives (``tensors``: its tensors' names)."""
    if md.get("general.architecture") != "llama":
        raise ValueError(f"expected a llama GGUF, got {md.get('general.architecture')!r}")
    n_head = int(md["llama.attention.head_count"])
    d_model = int(md["llama.embedding_length"])
    vocab = md.get("llama.vocab_size")
    if vocab is None:
        vocab = len(md["tokenizer.ggml.tokens"])
    return Architecture(
        family="llama",
        causal=True,
        n_layer=int(md["llama.block_count"]),
        d_model=d_model,
        n_head=n_head,
        n_kv_head=int(md.get("llama.attention.head_count_kv", n_head)),
        d_head=int(md.get("llama.attention.key_length", d_model // n_head)),
        d_ff=int(md["llama.feed_forward_length"]),
        d_vocab=int(vocab),
        n_ctx=int(md["llama.context_length"]),
        norm="rms",
        norm_eps=float(md["llama.attention.layer_norm_rms_epsilon"]),
        norm_placement="pre",
        positions="rope",
        rope_base=float(md.get("llama.rope.freq_base", 10000.0)),
        rope_pairs="interleaved",
        mlp="gated",
        activation="silu",
        tied_output=tensors is None or "output.weight" not in tensors,
    )


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
    from attnlab.models.tokens import gguf_bpe_tokenizer

    if weights not in ("auto", *gguf_weights.PATHS):
        raise FieldError(("weights",), problems.unknown_weights(weights, gguf_weights.PATHS))
    dtype = np.dtype(dtype)
    g = GGUFFile(path)
    arch = architecture(g.metadata, set(g.tensors))
    if weights == "auto":
        weights = "q4_1" if dtype == np.float32 and quant.kernel() is not None else "float32"
    if weights == "q4_1":
        if dtype != np.float32:
            raise FieldError(("dtype",), problems.blocks_need_float32())
        if quant.kernel() is None:
            raise RuntimeError(f"the q4_1 path cannot run here: {quant.reason()}")
        w = gguf_weights.block_weights(g, arch)
        path_name = "q4_1"
    else:
        w, _ = gguf_weights.float32_weights(g, arch, cache_dir=cache_dir)
        if dtype != np.float32:
            w = gguf_weights.cast(w, dtype)
        path_name = dtype.name
    tokenizer = gguf_bpe_tokenizer(g.metadata)
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
    )
