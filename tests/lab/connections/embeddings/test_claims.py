"""Every sentence of the embeddings lab is true of its numbers: each claim recomputed here with NumPy
(hypothesis), on seeded vectors and on synthetic recorded ones."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims
from synthetic import embeddings_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.embeddings import CONTROLS, LAB
from attnlab.lab.connections.embeddings.answer import current
from attnlab.lab.connections.live import Measured

SENTENCES = ["one", "two", "three", "four", "five", "six"]


def softmax_rows(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@st.composite
def inputs(draw, source: str) -> dict:
    n = draw(st.integers(2, 6))
    given = {
        "source": source,
        "sentences": "\n".join(SENTENCES[:n]),
        "matches": "\n".join(s.upper() for s in SENTENCES[:n]),
        "tau": round(draw(st.integers(1, 100)) * 0.01, 10),
        "d": draw(st.integers(2, 64)),
        "noise": round(draw(st.integers(0, 40)) * 0.05, 10),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


def check_words(answer: dict, a: np.ndarray, b: np.ndarray, v: dict) -> None:
    n, d, tau = a.shape[0], a.shape[1], v["tau"]
    source, rows, loss, attention = page_claims(answer)
    assert source["n"] == n and source["d"] == d and source["source"] == v["source"]
    s = a @ b.T
    p = softmax_rows(s / tau)
    own = np.diagonal(p)
    assert math.isclose(rows["own_mean"], own.mean(), rel_tol=1e-12)
    assert math.isclose(rows["least_share"], own.min(), rel_tol=1e-12)
    assert math.isclose(own[rows["least"] - 1], own.min(), rel_tol=1e-12)
    losses = -np.log(own)
    assert math.isclose(loss["loss"], losses.mean(), rel_tol=1e-9, abs_tol=1e-15) and loss["loss"] >= 0
    right = sum(bool(s[i, i] > np.delete(s[i], i).max()) for i in range(n))
    assert loss["correct"] == right and loss["cold_to_zero"] == (right == n)
    assert loss["hot_limit"] == math.log(n)
    w = softmax_rows(s / math.sqrt(d))
    assert math.isclose(attention["temperature"], math.sqrt(d)) and attention["even"] == 1 / n
    assert math.isclose(attention["largest"], w.max(), rel_tol=1e-12) and attention["largest"] >= 1 / n

    def cos_mean(weights: np.ndarray) -> float:
        out = weights @ b
        return float(np.mean([o @ v / (np.linalg.norm(o) * np.linalg.norm(v)) for o, v in zip(out, b)]))

    assert math.isclose(attention["cos_tau_mean"], cos_mean(p), rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(attention["cos_attention_mean"], cos_mean(w), rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(inputs("random"))
def test_every_claim_on_seeded_vectors(v):
    n = len(v["sentences"].split("\n"))
    rng = np.random.default_rng(v["seed"])
    a = unit(rng.standard_normal((n, v["d"])))
    b = unit(a + v["noise"] * rng.standard_normal((n, v["d"])))
    check_words(LAB.answer(v, {}), a, b, v)


@settings(max_examples=25, deadline=None)
@given(inputs("minilm"), st.integers(0, 2**32 - 1))
def test_every_claim_on_recorded_vectors(v, seed):
    n = len(v["sentences"].split("\n"))
    m = embeddings_measured(seed, n)
    a = unit(np.asarray(m["embeddings"].data["a"]))
    b = unit(np.asarray(m["embeddings"].data["b"]))
    check_words(LAB.answer(v, m), a, b, v)


def test_the_loss_tends_to_ln_n_as_tau_grows_and_to_0_as_it_falls():
    w, _ = current(read(CONTROLS, {}, "inputs"), {})
    assert all(w.correct()) and abs(w.loss(1e6) - math.log(w.n)) < 1e-5 and w.loss(1e-3) < 1e-12


def test_without_the_embeddings_the_lab_says_where_they_stand():
    v = read(CONTROLS, {"source": "minilm"}, "inputs")
    failed = LAB.answer(v, {"embeddings": Measured("failed", message="all-MiniLM-L6-v2 is not installed.")})
    assert failed["pictures"] == [] and failed["data"] == {}
    assert [w["text"] for w in failed["words"]] == [
        "MiniLM embeds your sentences: it could not run. all-MiniLM-L6-v2 is not installed."
    ]
