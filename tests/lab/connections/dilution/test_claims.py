"""Every sentence of the dilution lab is true of its numbers: each claim recomputed here (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.dilution import CONTROLS, LAB


@st.composite
def inputs(draw) -> dict:
    given = {
        "keys": draw(st.integers(2, 4096)),
        "d_k": draw(st.integers(1, 256)),
        "scaling": draw(st.sampled_from(["on", "off"])),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


def row(v: dict, n: int, scaled: bool) -> np.ndarray:
    rng = np.random.default_rng(v["seed"])
    q = rng.standard_normal(v["d_k"])
    k = rng.standard_normal((4096, v["d_k"]))[:n]
    s = (k @ q) / (math.sqrt(v["d_k"]) if scaled else 1.0)
    w = np.exp(s - s.max())
    return w / w.sum()


def entropy(w: np.ndarray) -> float:
    w = w[w > 0]
    return float(-(w * np.log(w)).sum())


@settings(max_examples=30, deadline=None)
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer_for(v)
    first, scaling, trend = page_claims(answer)
    n, on = v["keys"], v["scaling"] == "on"
    mine = row(v, n, on)
    assert np.isclose(first["largest"], mine.max(), rtol=1e-12) and np.isclose(
        first["entropy"], entropy(mine)
    )
    assert first["entropy"] <= first["most"] + 1e-12 and first["most"] == math.log(n)
    with_, without = row(v, n, True).max(), row(v, n, False).max()
    assert np.isclose(scaling["largest_on"], with_, rtol=1e-12) and np.isclose(
        scaling["largest_off"], without
    )
    if v["d_k"] > 1:
        expected = "sharper" if scaling["largest_off"] > scaling["largest_on"] else "flatter"
        assert scaling["compare"] in (expected, "as sharp")
    assert np.isclose(trend["first"], row(v, 2, on).max()) and np.isclose(
        trend["last"], row(v, 4096, on).max()
    )
    assert trend["falls"] == (trend["last"] < trend["first"])
    assert ("falls" in answer["words"][2]["text"]) == trend["falls"]
