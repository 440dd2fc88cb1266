"""Synthetic model numbers for the connection labs' tests, in the shapes ``models.labs`` records them
(no model): next-token logits (sampling lab). ``from synthetic import ...``."""

from __future__ import annotations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.sampling.walk import MAX_K
from shipped_shapes import SHAPES

VOCAB = 200


@st.composite
def rows(draw) -> np.ndarray:
    """A full row of VOCAB distinct float32 logits (the vocabulary)."""
    seed = draw(st.integers(0, 2**32 - 1))
    scale = draw(st.sampled_from([0.5, 2.0, 8.0]))
    row = (np.random.default_rng(seed).standard_normal(VOCAB) * scale).astype(np.float32)
    assume(len(np.unique(row)) == VOCAB)
    return row


def recorded(row: np.ndarray, tokens: int = 5) -> dict:
    """What the run records from ``row``: the MAX_K largest, their texts and shares at temperature 1."""
    r = np.asarray(row, dtype=np.float64)
    ids = np.lexsort((np.arange(r.size), -r))[:MAX_K]
    p = np.exp(r - r.max()) / np.exp(r - r.max()).sum()
    return {
        "context": [f" t{i}" for i in range(tokens)],
        "n_tokens": tokens,
        "vocab": int(r.size),
        "ids": [int(i) for i in ids],
        "tokens": [f" w{int(i)}" for i in ids],
        "logits": [float(r[i]) for i in ids],
        "p_model": [float(p[i]) for i in ids],
    }


def logits_measured(row: np.ndarray) -> dict:
    return {"logits": Measured("done", data=recorded(row))}


def embeddings_recorded(seed: int, n: int, d: int = 384) -> dict:
    """Unit float32 vectors as MiniLM's are recorded: n sentences' and n matches' (each near its sentence)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, d))
    b = a + rng.standard_normal((n, d))
    a = (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)
    b = (b / np.linalg.norm(b, axis=1, keepdims=True)).astype(np.float32)
    return {"a": a.astype(float).tolist(), "b": b.astype(float).tolist(), "d": d, "tokens": [[5, 6]] * n}


def embeddings_measured(seed: int, n: int, d: int = 384) -> dict:
    return {"embeddings": Measured("done", data=embeddings_recorded(seed, n, d))}


def kv_run(prompt: int, new: int, shapes: dict, itemsize: int = 4, extra: int = 0) -> dict:
    """A generation's caches as ``models.labs.kv.generation_cache`` records them: ``prompt`` tokens, then
    ``new`` more; every layer's K and V of (kv heads, tokens, head size) numbers of ``itemsize`` bytes.
    ``extra`` bytes are added to the last step's measure (a cache that is not what its shapes say)."""
    steps = []
    for n in range(prompt, prompt + new + 1):
        layer = 2 * shapes["kv_heads"] * n * shapes["head_dim"] * itemsize
        shape = [shapes["kv_heads"], n, shapes["head_dim"]]
        steps.append({"tokens": n, "key_shape": shape, "value_shape": shape,
                      "dtype": {2: "float16", 4: "float32", 8: "float64"}[itemsize], "itemsize": itemsize,
                      "layers": shapes["layers"], "same_every_layer": True,
                      "per_layer": [layer] * shapes["layers"],
                      "bytes": layer * shapes["layers"]})  # fmt: skip
    steps[-1]["bytes"] += extra
    return {
        "prompt_ids": list(range(prompt)),
        "prompt_tokens": [f" p{i}" for i in range(prompt)],
        "new_ids": list(range(100, 100 + new)),
        "new_tokens": [f" n{i}" if i % 3 else "\n" for i in range(new)],
        "steps": steps,
    }


def shapes_measured(model: str = "smollm2") -> dict:
    """The registry's shapes of ``model`` (:data:`SHAPES`), as the lab's server passes them in."""
    return {"shapes": Measured("done", data=dict(SHAPES[model]))}


def needle_rows(seed: int, lengths=(16, 32, 64, 128, 256), boost: float = 4.0, hits: int = 3) -> list[dict]:
    """Needle rows as ``models.labs.needle.row`` records them: the last query's scaled scores (the needle's
    tokens, 4 and 5, lifted by ``boost``), the mean share over 270 heads, the top next token (the needle
    word at the first ``hits`` lengths)."""
    rng = np.random.default_rng(seed)
    out = []
    for i, n in enumerate(lengths):
        scores = rng.standard_normal(n)
        scores[[4, 5]] += boost
        out.append({
            "n_tokens": n, "needle": [4, 5], "needle_labels": [" man", "go"], "query_label": " is",
            "scores": scores.astype(np.float32).astype(float).tolist(), "model_share": 0.5,
            "mean_share": float(rng.uniform(0, 0.1)), "heads": 270,
            "top_next": " man" if i < hits else " the", "top_next_id": 7,
        })  # fmt: skip
    return out


def needle_measured(seed: int, **kw) -> dict:
    return {"needle": Measured("done", data={"texts": [], "rows": needle_rows(seed, **kw)})}


def rope_facts(base: float = 100000.0, head_dim: int = 64, context: int = 8192,
               convention: str = "interleaved", scaling: str | None = None) -> dict:
    """A model's RoPE as ``models.labs.facts.rope`` gives it (SmolLM2's by default); ``scaling``: the
    frequencies stretched as Llama 3's (factor 8 past a 64-position original context), written out."""
    from attnlab.engine.forward import ScaledRoPE
    from attnlab.engine.model import RopeScaling

    stretch = RopeScaling(kind="llama3", factor=8.0, original_context=64) if scaling else None
    rope = ScaledRoPE(head_dim=head_dim, base=base, convention=convention, scaling=stretch)
    freqs = rope.inverse_frequencies
    return {"model": "smollm2", "title": "SmolLM2-135M-Instruct", "called": "SmolLM2", "source": "gguf",
            "base": base, "head_dim": head_dim, "context": context, "convention": convention,
            "scaling": scaling, "frequencies": [float(f) for f in freqs]}  # fmt: skip


def rope_measured(**kw) -> dict:
    return {"rope": Measured("done", data=rope_facts(**kw))}
