"""The one list of models: a ``ModelSpec`` each, read by the schema, the API, the jobs and the CLI.

Adding a model touches only :data:`SPECS` (or a ``register`` call): its name,
title, kind, shapes, caps, how to load it and how to count its tokens. Each
model loads lazily, once per process, and is shared by the CLI and the API.

``loader`` and ``tokenizer`` are ``"module:attribute"`` strings, imported only
when used, so listing the models never imports a model's code or reads its
files, and a worker process can find the loader by name.
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from attnlab.models.errors import Refusal

DEFAULT_MAX_TOKENS = 256  # the Real model view's cap, counted by the model's own tokenizer
DEFAULT_MAX_CHARS = 2000  # a bound on the request body; the token cap is the real limit


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """One model as every part of attnlab knows it.

    ``tokenizer`` names a function ``() -> loaders.Counter``: ``tokens(text)``
    gives the token strings the trace will show (specials included) and
    ``text(id)`` one token's text, without loading the model's weights.
    """

    name: str
    title: str
    architecture: Literal["encoder", "decoder"]
    kind: str  # how the page says it: "encoder (bidirectional)", "decoder (causal, GQA)"
    loader: str  # "module:attribute", a () -> model
    tokenizer: str  # "module:attribute", a () -> (text -> list of token strings)
    n_layer: int
    n_head: int
    n_kv_head: int
    d_head: int
    generates: bool = False
    instruct: bool = False  # tuned for chat turns (the chat template is still a choice, never the default)
    max_tokens: int = DEFAULT_MAX_TOKENS
    max_chars: int = DEFAULT_MAX_CHARS
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kv_groups(self) -> list[list[int]]:
        """kv_groups[g] = the query heads that read KV head g (GQA: consecutive runs)."""
        group = self.n_head // self.n_kv_head
        return [list(range(g * group, (g + 1) * group)) for g in range(self.n_kv_head)]

    @property
    def chat_default(self) -> bool:
        """Generation continues the text as it is unless the chat template is asked for, instruct or not."""
        return False

    def load(self) -> Any:
        return _resolve(self.loader)()


SPECS: dict[str, ModelSpec] = {}
_loaded: dict[str, Any] = {}
_counters: dict[str, Any] = {}
_lock = threading.Lock()


def _resolve(path: str) -> Any:
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def register(spec: ModelSpec) -> ModelSpec:
    """Add ``spec`` (or replace the one of that name)."""
    with _lock:
        SPECS[spec.name] = spec
        _loaded.pop(spec.name, None)
        _counters.pop(spec.name, None)
    return spec


def unregister(name: str) -> None:
    """Remove model ``name`` (tests that registered a fake one)."""
    with _lock:
        SPECS.pop(name, None)
        _loaded.pop(name, None)
        _counters.pop(name, None)


def names() -> tuple[str, ...]:
    return tuple(SPECS)


def spec(name: object) -> ModelSpec:
    """The spec of ``name``, else ``FieldError`` at ``model`` listing the names."""
    found = SPECS.get(name) if isinstance(name, str) else None
    if found is None:
        raise Refusal(("model",), "unknown_model", name, tuple(SPECS))
    return found


def title(name: str) -> str:
    """How the page names model ``name`` (its registry title; an unregistered name as it is)."""
    found = SPECS.get(name)
    return found.title if found is not None else name


def check_name(name: object) -> str:
    """Return ``name`` if it names a model, else raise ``FieldError`` at ``model`` listing the names."""
    return spec(name).name


def decoders() -> tuple[str, ...]:
    """The models that generate text."""
    return tuple(n for n, s in SPECS.items() if s.generates)


WEIGHTS = ("auto", "q4_1", "float32")  # what a model's products may run on (``get_model(weights=)``)


def get_model(name: str, weights: str = "auto"):
    """The shared instance of model ``name``, loading it on first use.

    ``weights``: "auto" (the model as its loader opens it: the fastest exact path here), or the
    path its products run on, "q4_1" (a GGUF file's blocks) or "float32" (float weights), each
    kept as its own shared instance.
    """
    s = spec(name)
    if weights == "auto":
        with _lock:  # one load at a time: a second caller waits for the first's model
            if name not in _loaded:
                _loaded[name] = s.load()
            return _loaded[name]
    key = f"{name}:{weights}"
    base = get_model(name)
    if base.path == weights:
        return base
    with _lock:
        if key not in _loaded:
            _loaded[key] = base.with_path(weights)
        return _loaded[key]


def is_loaded(name: str) -> bool:
    """Whether ``name`` is already in memory (loading it would be instant)."""
    return name in _loaded


def counter(name: str):
    """Model ``name``'s tokenizer alone (a ``loaders.Counter``; no weights), built once."""
    s = spec(name)
    found = _counters.get(name)
    if found is None:
        found = _resolve(s.tokenizer)()
        with _lock:
            _counters[name] = found
    return found


def token_strings(name: str, text: str) -> list[str]:
    """The tokens ``name``'s trace of ``text`` will have, from its tokenizer alone (no weights)."""
    return counter(name).tokens(text)


# -- the shipped models ----------------------------------------------------------


def _shipped(name: str, **fields: Any) -> ModelSpec:
    """Register shipped model ``name``: ``loaders.<name>`` loads it, ``loaders.<name>_counter`` counts."""
    at = "attnlab.models.loaders"
    return register(ModelSpec(name=name, loader=f"{at}:{name}", tokenizer=f"{at}:{name}_counter", **fields))


MINILM = _shipped(
    "minilm", title="all-MiniLM-L6-v2", architecture="encoder", kind="encoder (bidirectional)",
    n_layer=6, n_head=12, n_kv_head=12, d_head=32,
)  # fmt: skip
SMOLLM2 = _shipped(
    "smollm2", title="SmolLM2-135M-Instruct", architecture="decoder", kind="decoder (causal, GQA)",
    n_layer=30, n_head=9, n_kv_head=3, d_head=64, generates=True, instruct=True,
)  # fmt: skip
