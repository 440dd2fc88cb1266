"""The shared models: each loads lazily, once per process, and is reused by the CLI and the API."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

MODEL_NAMES = ("minilm", "smollm2")

_loaded: dict[str, Any] = {}
_lock = threading.Lock()


def _loader(name: str) -> Callable[[], Any]:
    if name == "minilm":
        from attnlab.models.minilm import MiniLM

        return MiniLM.load
    from attnlab.models.smollm import SmolLM2

    return SmolLM2.load


def check_name(name: object) -> str:
    """Return ``name`` if it names a model, else raise ValueError listing the names."""
    if name not in MODEL_NAMES:
        raise ValueError(f"model {name!r} is unknown; use one of {', '.join(MODEL_NAMES)}")
    return name  # type: ignore[return-value]


def get_model(name: str):
    """The shared instance of model ``name`` ("minilm" or "smollm2"), loading it on first use."""
    check_name(name)
    with _lock:  # one load at a time: a second caller waits for the first's model
        if name not in _loaded:
            _loaded[name] = _loader(name)()
        return _loaded[name]


def is_loaded(name: str) -> bool:
    """Whether ``name`` is already in memory (loading it would be instant)."""
    return name in _loaded
