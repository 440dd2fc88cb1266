"""Every sentence of the cross-attention lab is true of its numbers: each claim recomputed here
(hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.cross import CONTROLS, LAB
from attnlab.lab.connections.cross.walk import PROMPTS, WORDS, feature


@st.composite
def inputs(draw) -> dict:
    grid = draw(st.integers(2, 8))
    given = {
        "grid": grid,
        "prompt": draw(st.sampled_from(list(PROMPTS))),
        "row": draw(st.integers(0, grid - 1)),
        "col": draw(st.integers(0, grid - 1)),
        "word": draw(st.integers(0, 4)),
        "sharpness": draw(st.sampled_from([0.5, 1.0, 3.0, 8.0])),
    }
    return read(CONTROLS, given, "inputs")


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@settings(max_examples=30, deadline=None)
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer(v)
    patch, match, share, mix, word_map, shared = page_claims(answer)
    g, words = v["grid"], PROMPTS[v["prompt"]]
    keys = np.array([WORDS[w][0] for w in words])
    vals = np.array([WORDS[w][1] for w in words])
    feats = np.array([feature(r, c, g) for r in range(g) for c in range(g)])
    weights = softmax(v["sharpness"] * feats @ keys.T / np.sqrt(3))
    p = v["row"] * g + v["col"]
    assert patch["q"] == [v["sharpness"] * f for f in feats[p]] and patch["words"] == list(words)
    kinds = [c for c, f in zip(("ball", "grass", "sky"), feats[p]) if f]
    assert patch["shows"] == (kinds[0] if kinds else "nothing in particular")
    assert np.allclose(answer["data"]["cross_weights"], weights, rtol=1e-13)
    assert np.allclose(answer["data"]["cross_outputs"][p], weights[p] @ vals, atol=1e-13)
    assert set(match) | set(share) | set(mix)  # the explorer's own claims (tests/lab/explorer check them)
    column = weights[:, v["word"]]
    assert word_map["word"] == words[v["word"]] and np.isclose(word_map["largest"], column.max(), rtol=1e-13)
    assert word_map["at"] == [int(column.argmax()) // g, int(column.argmax()) % g]
    assert np.isclose(word_map["smallest"], column.min(), rtol=1e-13)
    assert np.isclose(shared["text_share"] + shared["image_share"], 1.0) and 0 < shared["text_share"] < 1
    assert np.isclose(shared["text_share"], sum(answer["data"]["shared_weights"][p][g * g :]), rtol=1e-13)
