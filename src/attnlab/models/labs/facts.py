"""What the labs ask of a model without running it: its shapes and its RoPE (as its files state them).

Plain data, no display strings. ``shapes(model)`` is the registry's ``ModelSpec``
(``models/registry.py``, the one place a model's identity lives; its shapes read from its
files); ``rope(model)`` the RoPE of the Architecture the registry read from its files: base,
head size, trained context, the pairing its stored weights use, and its frequencies.
"""

from __future__ import annotations

from functools import cache

from attnlab.models import registry
from attnlab.models.errors import Refusal


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


@cache
def rope(model: str) -> dict:
    """``model``'s RoPE as its files state it (its config or GGUF header, read by the registry): base,
    head size, trained context, pairing, and the inverse frequencies its global layers turn with
    (``frequencies``: ``base^(-2i/d)``, stretched where the files give a scaling: ``scaling``, its
    kind, else None). A model whose positions are not rotary (GPT-2's are learned) is refused at
    ``model``.

    SmolLM2's GGUF stores W_Q and W_K in interleaved pairs (``models/families/llama``), so its
    RoPE turns coordinates 2i and 2i + 1 together; a Hugging Face folder's turn i with i + d/2.
    """
    from attnlab.engine.forward import ScaledRoPE

    spec = registry.spec(model)
    facts = spec.facts()
    arch = facts.arch
    if arch is None or arch.positions != "rope":
        raise Refusal(("model",), "no_rope", spec.title)
    turned = ScaledRoPE(head_dim=arch.d_head, base=arch.rope_base, convention=arch.rope_pairs,
                        scaling=arch.rope_scaling)  # fmt: skip
    return {
        "model": spec.name,
        "title": spec.title,
        "called": spec.called,
        "source": facts.format,
        "base": float(arch.rope_base),
        "head_dim": int(arch.d_head),
        "context": int(arch.n_ctx),
        "convention": arch.rope_pairs,
        "scaling": arch.rope_scaling.kind if arch.rope_scaling is not None else None,
        "frequencies": [float(f) for f in turned.inverse_frequencies],
    }
