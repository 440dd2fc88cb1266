"""The dilution lab's needle: every claim recomputed from the recorded rows (hypothesis, on synthetic
rows), the design as stated, and where the lab shows it."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import assert_page_words
from synthetic import needle_measured, needle_rows

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.dilution import CONTROLS, LAB
from attnlab.lab.connections.dilution.needle import HEAD, LENGTHS, Needle, arguments
from attnlab.lab.connections.live import Measured


def softmax(s) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    e = np.exp(s - s.max())
    return e / e.sum()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-2.0, 12.0), st.integers(0, 5))
def test_every_claim(seed, boost, hits):
    rows = needle_rows(seed, boost=boost, hits=hits)
    needle = Needle("mango", rows)
    design, kept, answered = needle.sentences()
    for s in (design, kept, answered):
        assert_page_words(s["text"])
    assert design["claims"] == {"word": "mango", "layer": 18, "head": 6, "query": " is"}
    shares = [float(softmax(r["scores"])[r["needle"]].sum()) for r in rows]
    even = [len(r["needle"]) / r["n_tokens"] for r in rows]
    c = kept["claims"]
    assert math.isclose(c["first"], shares[0], rel_tol=1e-12) and math.isclose(
        c["last"], shares[-1], rel_tol=1e-12
    )
    assert c["rises"] == (shares[-1] > shares[0]) and (" rises " in kept["text"]) == c["rises"]
    assert c["even_first"] == even[0] == 2 / 16 and c["even_last"] == even[-1] == 2 / 256
    assert math.isclose(c["ratio"], shares[-1] / even[-1], rel_tol=1e-12)
    assert c["mean_first"] == rows[0]["mean_share"] and c["heads"] == 270
    assert answered["claims"] == {"found": [i < hits for i in range(5)], "hits": min(hits, 5)}
    data = needle.data()
    assert data["tokens"] == list(LENGTHS) and data["even"] == even
    for r, w, h, g in zip(rows, data["head_share"], data["entropy"], data["largest"]):
        p = softmax(r["scores"])
        assert math.isclose(w, p[r["needle"]].sum(), rel_tol=1e-12) and math.isclose(
            g, p.max(), rel_tol=1e-12
        )
        assert math.isclose(h, float(-(p * np.log(p)).sum()), rel_tol=1e-12) and h <= math.log(r["n_tokens"])
    json.dumps([needle.picture(), needle.table(), data], allow_nan=False)


def test_the_design_asked_of_the_model():
    assert arguments("violet") == {
        "needle": "The secret word is violet.",
        "filler": [
            "The grass is green.", "The sky is blue.", "The sun is warm.", "Birds sing in the trees.",
            "Water flows down the hill.", "Leaves fall in autumn.", "Snow is cold and white.",
            "The road runs past the farm.",
        ],
        "question": " What is the secret word? The secret word is",
        "word": "violet",
        "lengths": [16, 32, 64, 128, 256],
        "layer": HEAD[0],
        "head": HEAD[1],
    }  # fmt: skip
    asked = LAB.ask(read(CONTROLS, {"needle": "on", "word": "violet"}, "inputs"))
    assert [(a.run, a.model) for a in asked] == [("needle", "smollm2")] and asked[0].args["word"] == "violet"
    assert LAB.ask(read(CONTROLS, {}, "inputs")) == ()


def test_the_needle_in_the_labs_answer():
    v = read(CONTROLS, {"needle": "on"}, "inputs")
    answer = LAB.answer(v, needle_measured(1))
    assert [p["id"] for p in answer["pictures"]] == ["largest", "entropy", "top", "needle"]
    assert answer["numbers"][1]["title"] == "The needle, layer 18 head 6" and "needle" in answer["data"]
    assert answer["words"][3]["text"].startswith("The needle: the text starts “The secret word is mango.”")
    off = LAB.answer(read(CONTROLS, {}, "inputs"), needle_measured(1))
    assert "needle" not in off["data"] and len(off["words"]) == 3
    waiting = LAB.answer(v, {"needle": Measured("waiting", stage="running", done=2, total=5, unit="trace")})
    assert waiting["words"][-1]["text"] == "SmolLM2 traces the needle texts: running, 2 of 5 texts done…"
