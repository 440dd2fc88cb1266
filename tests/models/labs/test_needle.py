"""The needle texts and rows (models/labs/needle.py): texts fitted to SmolLM2's own token counts, the
needle's tokens found by their text, and a row's shares as the model computed them."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.lab.connections.dilution.needle import FILLER, LENGTHS, QUESTION, arguments, softmax
from attnlab.models import registry
from attnlab.models.labs.needle import needle_tokens, row, texts


def test_the_needles_tokens_are_found_by_their_text():
    tokens = ["The", " secret", " word", " is", " man", "go", ".", " The"]
    assert needle_tokens(tokens, "".join(tokens), "mango") == [4, 5]
    assert needle_tokens(["ab", "cd"], "abcd", "bc") == [0, 1]
    assert needle_tokens(["a", " mango"], "a mango", "mango") == [1]


@pytest.mark.models
def test_each_text_is_the_longest_that_fits():
    a = arguments("mango")
    found = texts("smollm2", a["needle"], tuple(FILLER), QUESTION, LENGTHS)
    count = registry.counter("smollm2").tokens
    for n, text in zip(LENGTHS, found):
        assert text.startswith("The secret word is mango.") and text.endswith(QUESTION)
        assert len(count(text)) <= n
        words = text[len(a["needle"]) : -len(QUESTION)].split()
        pool = " ".join(FILLER).split()
        longer = a["needle"] + "".join(" " + w for w in [*words, pool[len(words) % len(pool)]])
        assert len(count(longer + QUESTION)) > n  # one more filler word would not fit
    assert [len(count(t)) for t in found] == [16, 32, 64, 128, 256]  # these parts fill each length exactly


@pytest.mark.models
def test_a_rows_shares_are_the_models(smollm2):
    text = texts("smollm2", "The secret word is mango.", tuple(FILLER), QUESTION, (64,))[0]
    trace = smollm2.trace(text, details=True)
    r = row(trace, text, "mango", 18, 6)
    assert r["n_tokens"] == 64 and r["needle_labels"] == [" mango"] and r["query_label"] == " is"
    weights = softmax(r["scores"])
    assert (
        abs(weights[r["needle"]].sum() - r["model_share"]) < 1e-6
    )  # float64 from the scores, float32 weights
    every = np.stack([trace.layer_weights(lay)[:, -1, r["needle"]].sum(-1) for lay in range(30)])
    assert r["heads"] == 270 and abs(r["mean_share"] - every.astype(np.float64).mean()) < 1e-12
    assert r["top_next"] == " mango" and r["model_share"] > 0.5  # layer 18 head 6 finds the needle
