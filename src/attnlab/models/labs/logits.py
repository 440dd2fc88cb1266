"""The sampling lab's numbers: the next-token logits after a text, read from a kept SmolLM2 trace.

A trace job (``Jobs.start``; shared with the Real model view) keeps every position's logits;
``next_logits(trace, top)`` takes the last row (what the model predicts after the whole text),
the ``top`` largest logits (largest first; ties: the lower id), their tokens' texts, and
each one's share of the model's whole distribution (softmax over the vocabulary at temperature 1,
in float64). Numbers only.
"""

from __future__ import annotations

import numpy as np

from attnlab.models import registry


def next_logits(trace, top: int) -> dict:
    row = np.asarray(trace.logits[-1], dtype=np.float64)  # (vocab,): float32 values, exactly
    ids = np.lexsort((np.arange(row.size), -row))[:top]  # largest first, ties to the lower id
    z = row - row.max()
    p_model = np.exp(z) / np.exp(z).sum()
    text = registry.counter(trace.model).text
    return {
        "context": list(trace.tokens),
        "n_tokens": len(trace.tokens),
        "vocab": int(row.size),
        "ids": [int(i) for i in ids],
        "tokens": [text(int(i)) for i in ids],
        "logits": [float(row[i]) for i in ids],
        "p_model": [float(p_model[i]) for i in ids],
    }
