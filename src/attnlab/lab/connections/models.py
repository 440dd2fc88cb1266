"""The live labs' model choice: any model that writes, the shipped SmolLM2 first.

A lab whose live part runs a decoder (the KV cache, speculative decoding, serving) has a
``model`` control (:func:`model_control`): a choice among the registry's decoders, the shipped
SmolLM2 and every decoder found on this computer (``attnlab models``), read when a request
arrives, so a found model is offered as soon as the registry knows it. A name that is not
among them (a path, say) is refused as any choice is. :func:`called` is how the lab's sentences
name the chosen model ("SmolLM2", or a found model's name).
"""

from __future__ import annotations

from attnlab.lab.connections.controls import Control
from attnlab.models import registry

DEFAULT = "smollm2"


LEARNED_POSITIONS = ("gpt2",)  # the decoder families whose positions are learned, not rotary


def decoder_options() -> tuple[tuple[str, str], ...]:
    """Every model that writes, as ``(name, title)``: the choice's options now."""
    return tuple((name, registry.title(name)) for name in registry.decoders())


def rope_options() -> tuple[tuple[str, str], ...]:
    """Every model that writes and rotates its queries and keys (RoPE): all but the learned-position
    families (known from the family, no file read)."""
    return tuple((name, registry.title(name)) for name in registry.decoders()
                 if registry.spec(name).family not in LEARNED_POSITIONS)  # fmt: skip


def model_control(hint: str, options=decoder_options) -> Control:
    """The ``model`` choice (:data:`DEFAULT` first) among ``options`` (a function: read per request)."""
    return Control("model", "Model", "choice", DEFAULT, options=options, hint=hint)


def called(model: str) -> str:
    """How a sentence names ``model``: "SmolLM2", or a found model's name."""
    return registry.spec(model).called


FILES = {"gguf": "GGUF file", "safetensors": "config"}  # what states a model's settings, by its format


def settings_file(model: str) -> str:
    """What states ``model``'s settings, as a sentence says it: "GGUF file" or "config"."""
    return FILES.get(registry.spec(model).format or "", "files")
