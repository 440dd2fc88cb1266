"""SmolLM2's shape: the numbers a llama-architecture GGUF file's metadata gives."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class SmolLM2Config:
    n_layer: int = 30
    n_head: int = 9
    n_kv_head: int = 3
    d_model: int = 576
    d_head: int = 64
    d_ff: int = 1536
    vocab: int = 49152
    rope_base: float = 100000.0
    eps: float = 1e-5
    context: int = 8192


def config_of(md: dict) -> SmolLM2Config:
    """The configuration a llama-architecture GGUF file's metadata gives."""
    if md.get("general.architecture") != "llama":
        raise ValueError(f"expected a llama GGUF, got {md.get('general.architecture')!r}")
    n_head = int(md["llama.attention.head_count"])
    d_model = int(md["llama.embedding_length"])
    return SmolLM2Config(
        n_layer=int(md["llama.block_count"]),
        n_head=n_head,
        n_kv_head=int(md["llama.attention.head_count_kv"]),
        d_model=d_model,
        d_head=d_model // n_head,
        d_ff=int(md["llama.feed_forward_length"]),
        vocab=int(md["llama.vocab_size"]),
        rope_base=float(md["llama.rope.freq_base"]),
        eps=float(md["llama.attention.layer_norm_rms_epsilon"]),
        context=int(md["llama.context_length"]),
    )
