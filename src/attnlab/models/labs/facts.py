"""What the labs ask of a model without running it: its shapes (the registry's) and its RoPE (its GGUF's).

Plain data, no display strings. ``shapes(model)`` is the registry's ``ModelSpec``
(``models/registry.py``, the one definition of a model's shapes); ``rope(model)`` reads a
llama-architecture GGUF's metadata (``models/smollm/config.py``): its RoPE base, head size,
trained context and the pairing its stored weights use.
"""

from __future__ import annotations

from functools import cache

from attnlab.models import registry


def shapes(model: str) -> dict:
    """Layers, query heads, key/value heads and head size of ``model``, as its registry entry says."""
    s = registry.spec(model)
    return {
        "model": s.name,
        "title": s.title,
        "called": s.called,  # how a sentence names it ("SmolLM2")
        "architecture": s.architecture,
        "layers": s.n_layer,
        "query_heads": s.n_head,
        "kv_heads": s.n_kv_head,
        "head_dim": s.d_head,
    }


ROPE_FILES = {"smollm2": "smollm2_gguf"}  # the models whose RoPE a GGUF file states


@cache
def rope(model: str) -> dict:
    """``model``'s RoPE as its GGUF file states it: base, head size, trained context, pairing.

    SmolLM2's GGUF stores W_Q and W_K in interleaved pairs (``models/families/llama``), so its
    RoPE turns coordinates 2i and 2i + 1 together.
    """
    from attnlab.models import files
    from attnlab.models.families.llama import architecture
    from attnlab.models.gguf_file import GGUFFile

    spec = registry.spec(model)
    path = getattr(files, ROPE_FILES[spec.name])()
    arch = architecture(GGUFFile(path).metadata)
    return {
        "model": spec.name,
        "title": spec.title,
        "base": float(arch.rope_base),
        "head_dim": int(arch.d_head),
        "context": int(arch.n_ctx),
        "convention": arch.rope_pairs,
    }
