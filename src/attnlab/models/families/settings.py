"""A checkpoint's settings (a ``config.json`` or a GGUF's metadata), read with the family's defaults.

:class:`Settings` wraps the key/value pairs a file carries. A family reads each value through
it, naming the default it documents (the default of transformers' config class, or of
llama.cpp for a GGUF) or none (a shape: the file must give it). A missing shape, or a value
that cannot describe a model (a head count of 0, a negative epsilon, a string where a number
goes), is refused naming the file and the key (:mod:`attnlab.models.families.errors`).

A GGUF's keys are spelled ``{architecture}.{key}`` (``qwen2.embedding_length``): a
:class:`Settings` made with ``prefix="qwen2."`` reads them by their short names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from attnlab.models.errors import worded
from attnlab.models.families.errors import BadSetting, MissingSetting

REQUIRED = object()  # a value the file must give


class Settings:
    """``values`` from the file at ``path`` (a string, for messages); keys read under ``prefix``;
    ``label``: where these values sit in the file (``"rope_scaling."``), for messages only."""

    def __init__(self, values: Mapping[str, Any], *, path: str, prefix: str = "", label: str = "") -> None:
        self.values, self.path, self.prefix, self.label = values, path, prefix, label

    def key(self, name: str) -> str:
        """``name`` as the file spells it."""
        return self.prefix + name

    def _named(self, name: str) -> str:
        """``name`` as a message names it: where it sits, then its key."""
        return self.label + self.key(name)

    def has(self, name: str) -> bool:
        return self.values.get(self.key(name)) is not None

    def null(self, name: str) -> bool:
        """Whether the file writes ``name`` as null: for an optional setting (a window, a soft cap), none
        at all, where leaving it out gives the family's default."""
        return self.key(name) in self.values and self.values[self.key(name)] is None

    def get(self, name: str, default: Any = None) -> Any:
        """The value as the file writes it (``default`` when absent or null)."""
        value = self.values.get(self.key(name))
        return default if value is None else value

    def _present(self, name: str, default: Any) -> Any:
        value = self.values.get(self.key(name))
        if value is None:
            if default is REQUIRED:
                raise MissingSetting(path=self.path, key=self._named(name))
            return default
        return value

    def whole(self, name: str, default: Any = REQUIRED, *, minimum: int = 1) -> int:
        """A whole number of at least ``minimum`` (a count or a width)."""
        value = self._present(name, default)
        if value is None:
            return value
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            if isinstance(value, float) and value.is_integer() and value >= minimum:
                return int(value)  # some writers store widths as 64.0
            raise BadSetting(path=self.path, key=self._named(name), value=value,
                             need=f"a whole number of at least {minimum}")  # fmt: skip
        return value

    def number(self, name: str, default: Any = REQUIRED, *, zero: bool = False) -> float:
        """A finite number above 0 (``zero``: at least 0)."""
        value = self._present(name, default)
        if value is None:
            return value
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value < 0 or (value == 0 and not zero):
            need = "a finite number of at least 0" if zero else "a finite number above 0"
            raise BadSetting(path=self.path, key=self._named(name), value=value, need=need)
        return float(value)

    def flag(self, name: str, default: bool) -> bool:
        value = self._present(name, default)
        if not isinstance(value, bool):
            raise BadSetting(path=self.path, key=self._named(name), value=value, need="true or false")
        return value

    def text(self, name: str, default: Any = REQUIRED) -> str:
        value = self._present(name, default)
        if value is not None and not isinstance(value, str):
            raise BadSetting(path=self.path, key=self._named(name), value=value, need="a string")
        return value

    def within(self, name: str) -> Settings:
        """The object at ``name`` (e.g. ``text_config``) as settings of the same file."""
        value = self.values.get(self.key(name))
        if not isinstance(value, Mapping):
            raise BadSetting(path=self.path, key=self._named(name), value=value, need="an object")
        return Settings(value, path=self.path, prefix="")


# -- what a family reads the same way ---------------------------------------------------------------

# Hugging Face's activation names -> the engine's (gelu_new, gelu_fast and gelu_pytorch_tanh are one
# formula: 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))).
ACTIVATIONS = {
    "silu": "silu", "swish": "silu", "gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_fast": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh", "relu": "relu",
}  # fmt: skip
ROPE_TYPES = ("default", "linear", "llama3")


def activation(s: Settings, name: str, default: str) -> str:
    """The engine's name for the activation the setting ``name`` gives (refused by name if unknown)."""
    from attnlab.models.families.errors import UnsupportedSetting

    value = s.text(name, default)
    if value not in ACTIVATIONS:
        raise UnsupportedSetting(path=s.path, key=s._named(name), value=value, supported=tuple(ACTIVATIONS))
    return ACTIVATIONS[value]


def rope(s: Settings, default_theta: float, *, layer_type: str | None = None):
    """RoPE's base and scaling from a Hugging Face config: ``(base, RopeScaling or None)``.

    Read from ``rope_parameters`` (transformers 5: ``{"rope_type", "rope_theta", ...}``, or one such
    object per layer type, ``layer_type`` choosing) or the older ``rope_theta`` and ``rope_scaling``
    (``{"type" or "rope_type", "factor", ...}``). A RoPE type other than default, linear and llama3,
    or a partial rotation, is refused by name: attnlab would not compute it exactly.
    """
    from attnlab.engine.model import RopeScaling
    from attnlab.models.families.errors import UnsupportedSetting

    params, key = s.get("rope_parameters") or {}, "rope_parameters."
    if isinstance(params, Mapping) and layer_type is not None and layer_type in params:
        params, key = params[layer_type], f"rope_parameters.{layer_type}."
    if not isinstance(params, Mapping):
        raise BadSetting(path=s.path, key=key[:-1], value=params, need="an object")
    new = Settings(params, path=s.path, label=key)  # keys as transformers 5 writes them
    theta = new.number("rope_theta") if new.has("rope_theta") else s.number("rope_theta", default_theta)
    partial = new.get("partial_rotary_factor", s.get("partial_rotary_factor", 1.0))
    if partial != 1.0:
        raise UnsupportedSetting(path=s.path, key="partial_rotary_factor", value=partial,
                                 supported=("1.0 (every coordinate turns)",))  # fmt: skip
    scaling = new
    if new.get("rope_type", "default") == "default" and s.has("rope_scaling"):  # the older spelling
        if not isinstance(s.get("rope_scaling"), Mapping):
            raise BadSetting(path=s.path, key="rope_scaling", value=s.get("rope_scaling"), need="an object")
        scaling = Settings(s.get("rope_scaling"), path=s.path, label="rope_scaling.")
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "default":
        return theta, None
    if kind not in ROPE_TYPES:
        key = scaling._named("rope_type")
        raise UnsupportedSetting(path=s.path, key=key, value=kind, supported=ROPE_TYPES)
    factor = scaling.number("factor")
    if kind == "linear":
        return theta, RopeScaling(kind="linear", factor=factor)
    return theta, RopeScaling(
        kind="llama3",
        factor=factor,
        low_freq_factor=scaling.number("low_freq_factor", 1.0),
        high_freq_factor=scaling.number("high_freq_factor", 4.0),
        original_context=scaling.whole("original_max_position_embeddings", 8192),
    )


def head_size(s: Settings, d_model: int, n_head: int, *, key: str = "head_dim",
              width_key: str = "hidden_size", heads_key: str = "num_attention_heads") -> int:  # fmt: skip
    """``key`` where the file gives it, else d_model / n_head (refused when it does not divide)."""
    from attnlab.models.families.errors import ImpossibleShapes

    if s.has(key):
        return s.whole(key)
    if d_model % n_head:
        detail = worded("opening.heads_do_not_divide", s.key(width_key), d_model, s.key(heads_key), n_head)
        raise ImpossibleShapes(path=s.path, detail=detail)
    return d_model // n_head


def build(s: Settings, **fields):
    """The Architecture of ``fields``, a shape the engine refuses (heads that do not share the KV heads
    evenly, an odd rotary head) named by the settings' keys."""
    from attnlab.engine.errors import FieldError
    from attnlab.engine.model import Architecture
    from attnlab.models.families.errors import ImpossibleShapes

    n_head, n_kv = fields["n_head"], fields["n_kv_head"]
    keys = fields.pop("keys", {})
    if n_head % n_kv:
        kv_key = keys.get("n_kv_head", "kv")
        detail = worded("opening.groups_do_not_divide", keys.get("n_head", "heads"), n_head, kv_key, n_kv)
        raise ImpossibleShapes(path=s.path, detail=detail)
    if fields.get("positions", "rope") == "rope" and fields["d_head"] % 2:
        detail = worded("opening.odd_rotary_head", keys.get("d_head", "head_dim"), fields["d_head"])
        raise ImpossibleShapes(path=s.path, detail=detail)
    try:
        return Architecture(**fields)
    except FieldError as error:  # a value no key check above caught: the engine's words, at its field
        raise ImpossibleShapes(path=s.path, detail=str(error)) from None
