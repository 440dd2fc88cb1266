"""MiniLM's sentence embeddings of a small batch, for the embeddings lab: cheap, so computed at once.

``embed(sentences, matches)`` runs the shared MiniLM (``registry.get_model``; loaded once per
process) on both lists in one call and returns plain floats: each embedding's 384 float32
numbers as Python floats (exactly), unit length as MiniLM's pooling leaves them.
"""

from __future__ import annotations

from functools import lru_cache

from attnlab.models import registry

MODEL = "minilm"


@lru_cache(maxsize=32)
def embed(sentences: tuple[str, ...], matches: tuple[str, ...]) -> dict:
    """``{"a": n × 384, "b": n × 384, "d": 384, "tokens": [[count of a_i, count of b_i], ...]}``."""
    model = registry.get_model(MODEL)
    out = model.encode([*sentences, *matches])  # (2n, 384) float32: one call, each text alone
    n = len(sentences)
    counts = [int(c) for c in model.tokenize([*sentences, *matches]).mask.sum(axis=1)]
    return {
        "a": [[float(x) for x in row] for row in out[:n]],
        "b": [[float(x) for x in row] for row in out[n:]],
        "d": int(out.shape[1]),
        "tokens": [[counts[i], counts[n + i]] for i in range(n)],
    }
