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
    check_trend(v, trend, answer["words"][2]["text"])


def check_trend(v: dict, trend: dict, text: str) -> None:
    """The trend sentence explains dilution only beside numbers that show it: the largest share falls
    from 2 to 4,096 keys and ends with no key holding most of the weight."""
    assert trend["most"] == (trend["last"] > 0.5)
    assert trend["dilutes"] == (trend["falls"] and not trend["most"])
    assert ("dilutes" in text) == trend["dilutes"]
    assert ("more than half of the weight" in text) == (trend["falls"] and trend["most"])
    assert ("did not dilute" in text) == (not trend["falls"])
    assert ("rises" in text) == (trend["last"] > trend["first"])
    if "times" in trend:  # without the scaling: scores √d_k times larger, a sharper softmax
        assert v["scaling"] == "off" and v["d_k"] > 1 and trend["times"] == math.sqrt(v["d_k"])
        assert row(v, 4096, False).max() >= row(v, 4096, True).max()
    else:
        assert v["scaling"] == "on" or v["d_k"] == 1 or trend["dilutes"]


def test_scaling_off_where_the_largest_share_rises_is_not_called_dilution():
    """Scaling off, d_k = 64, seed 0: the largest share rises from 94% to 98% between 2 and 4,096 keys.
    The sentence says so, and explains no dilution beside it."""
    v = read(CONTROLS, {"keys": 64, "d_k": 64, "scaling": "off", "seed": 0}, "inputs")
    trend = LAB.answer_for(v)["words"][2]
    said = trend["text"]
    assert said.startswith("From 2 to 4,096 keys (scaling off), the largest share rises from 94% to 98%")
    assert "pick one key out of more and more" not in said and "Attention dilutes" not in said
    assert trend["claims"]["dilutes"] is False and trend["claims"]["falls"] is False
    assert "Without the scaling every score is √64 = 8 times larger" in trend["text"]
    check_trend(v, trend["claims"], trend["text"])
    on = LAB.answer_for(read(CONTROLS, {"keys": 64, "d_k": 64, "scaling": "on", "seed": 0}, "inputs"))
    assert on["words"][2]["text"].endswith("Attention dilutes.") and on["words"][2]["claims"]["dilutes"]


def test_the_lede_claims_no_fall_the_numbers_may_not_show():
    assert "the largest share falls" not in LAB.lede
    assert "The sentences below say which of the two the numbers show." in LAB.lede
