"""A toy model with the real models' job interface, to test the model jobs without weights.

``load(name)`` gives a model called ``name``: two layers of two heads, one
token per word, attention from q and k drawn from a generator seeded by the
text (so a text's trace is always the same); "minilm" sees every token,
other names are causal. ``generate`` writes " w0", " w1", ... ``load_slow``
gives one that spends a minute on each layer: a job that is still running
when a test stops the worker. Both load in a worker process (importable).
:func:`sweep` is a toy circuits run that makes way and stops between its steps, as a
patching sweep does (``model.step(i)`` runs each step: a test may gate it).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from attnlab.models.traces import ModelTrace


@dataclass(frozen=True)
class ToyConfig:
    n_layer: int = 2
    n_head: int = 2
    d_head: int = 4


@dataclass(frozen=True)
class ToyPiece:
    id: int
    text: str
    finish: str | None = None


class ToyModel:
    """Two layers, two heads, one token per word."""

    def __init__(self, name: str, *, layer_seconds: float = 0.0) -> None:
        self.name = name
        self.config = ToyConfig()
        self.arch = self.config  # the real models' description: its n_layer is all a job reads
        self.layer_seconds = layer_seconds
        self.traces = 0  # forward passes run: tests count computations with it

    def encode(self, text: str) -> list[int]:
        return [zlib.crc32(word.encode()) % 1000 for word in text.split()]

    def trace(self, text: str, *, details: bool = False, progress=None) -> ModelTrace:
        self.traces += 1
        c = self.config
        tokens = text.split()
        n = len(tokens)
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        allowed = np.ones((n, n), dtype=bool) if self.name == "minilm" else np.tril(np.ones((n, n), bool))
        q, k, v = (rng.standard_normal((c.n_layer, c.n_head, n, c.d_head), dtype=np.float32) for _ in "qkv")
        scale = 1.0 / float(np.sqrt(c.d_head))
        scores = np.einsum("lhqd,lhkd->lhqk", q, k) * np.float32(scale)
        for layer in range(c.n_layer):
            time.sleep(self.layer_seconds)
            if progress is not None:
                progress(layer + 1, c.n_layer)
        e = np.exp(np.where(allowed, scores, -np.inf) - scores.max(axis=-1, keepdims=True))
        extra = {"q": q, "k": k, "v": v, "scores": scores} if details else {}
        if details and self.name != "minilm":  # a decoder's next-token logits over 16 toy words
            extra["logits"] = rng.standard_normal((n, 16)).astype(np.float32)
        return ModelTrace(
            model=self.name,
            tokens=tokens,
            ids=self.encode(text),
            weights=(e / e.sum(axis=-1, keepdims=True)).astype(np.float32),
            allowed=allowed,
            scale=scale,
            kv_groups=[[h] for h in range(c.n_head)],
            **extra,
        )

    def generate(
        self, prompt: str, *, max_new_tokens: int, sampling=None, on_logits=None
    ) -> Iterator[ToyPiece]:
        for i in range(max_new_tokens):
            if on_logits is not None:  # a row whose arg-max is token i: the drawn one
                on_logits(np.where(np.arange(max_new_tokens) == i, 2.0, 0.0))
            yield ToyPiece(id=i, text=f" w{i}", finish="length" if i == max_new_tokens - 1 else None)


def load(name: str) -> ToyModel:
    return ToyModel(name)


def load_slow(name: str) -> ToyModel:
    return ToyModel(name, layer_seconds=60.0)


def counter():
    """A token counter for a toy spec: one token per word, as the toy model's trace has."""
    from attnlab.models.loaders import Counter

    return Counter(tokens=str.split, text=lambda i: f"w{i}")


def toy_spec(name: str = "toy"):
    """A tiny ModelSpec for tests: adding it to the registry adds a model everywhere."""
    from attnlab.models.registry import ModelSpec, Shapes

    c = ToyConfig()
    shapes = Shapes(n_layer=c.n_layer, n_head=c.n_head, n_kv_head=c.n_head, d_head=c.d_head, context=64)
    return ModelSpec(
        name=name,
        title="Toy decoder",
        family="toy",
        loader="attnlab.models.toy:load_toy",
        tokenizer="attnlab.models.toy:counter",
        shapes=shapes,
        cap=8,
    )


def load_toy() -> ToyModel:
    return ToyModel("toy")


def sweep(model, say, check, *, job: str, steps: int) -> dict:
    """A toy sweep of ``steps`` steps: ``check()`` before each (it may stop here, or make way), then
    ``model.step(i)`` where the model has one; ``{"done": n}``, partial when stopped."""
    from attnlab.models.jobs.kinds import Stopped

    say("running", steps)
    for i in range(steps):
        if check():
            raise Stopped({"done": i, "steps": steps})
        if hasattr(model, "step"):
            model.step(i)
        say("progress", i + 1)
    return {"done": steps, "steps": steps}


sweep.makes_way = True  # between its steps, another learner's job may run (models/jobs/work.py)
sweep.stops = True  # cancelled, it stops at its next check with what it has
