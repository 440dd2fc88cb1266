"""Every sentence of the MoE lab is true of its numbers: each claim recomputed here (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.moe import CONTROLS, LAB


@st.composite
def inputs(draw) -> dict:
    tokens, experts = draw(st.integers(1, 32)), draw(st.integers(2, 16))
    given = {
        "tokens": tokens,
        "experts": experts,
        "k": draw(st.integers(1, experts)),
        "token": draw(st.integers(0, tokens - 1)),
        "scale": draw(st.sampled_from([0.1, 1.0, 2.5, 5.0])),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


@settings(max_examples=40, deadline=None)
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer(v)
    router, gates, dense, load = page_claims(answer)
    rng = np.random.default_rng(v["seed"])
    x = rng.standard_normal((v["tokens"], 4))
    logits = v["scale"] * (x @ rng.standard_normal((4, v["experts"])))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    row = p[v["token"]]
    order = sorted(range(v["experts"]), key=lambda e: (-row[e], e))
    assert router["top"] == order[: v["k"]] and router["best"] == order[0]
    assert np.isclose(router["best_probability"], row[order[0]], rtol=1e-12)
    assert np.isclose(router["kept"], row[order[: v["k"]]].sum(), rtol=1e-12)
    assert np.isclose(sum(gates["gates"].values()), 1.0, rtol=1e-12)
    for e in order[: v["k"]]:
        assert np.isclose(gates["gates"][f"E{e + 1}"], row[e] / row[order[: v["k"]]].sum(), rtol=1e-12)
    assert gates["dropped"] == v["experts"] - v["k"]
    a = np.exp(x @ x.T / 2.0)
    a = a / a.sum(axis=1, keepdims=True)
    assert dense["positive"] == int((a[v["token"]] > 0).sum()) and np.isclose(
        dense["smallest"], a[v["token"]].min()
    )
    counts = np.zeros(v["experts"], dtype=int)
    for i in range(v["tokens"]):
        for e in sorted(range(v["experts"]), key=lambda e, i=i: (-p[i][e], e))[: v["k"]]:
            counts[e] += 1
    assert load["load"] == counts.tolist() and load["idle"] == int((counts == 0).sum())
    assert counts[load["busiest"]] == counts.max() and load["balanced"] == v["tokens"] * v["k"] / v["experts"]
