"""Every sentence of the RoPE lab is true of its numbers: each claim recomputed here (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.rope import CONTROLS, LAB


@st.composite
def inputs(draw) -> dict:
    given = {
        "head_dim": draw(st.sampled_from(["16", "32", "64", "128"])),
        "base": draw(st.sampled_from(["10000", "100000"])),
        "train": draw(st.sampled_from([64, 512, 2048])),
        "factor": draw(st.integers(1, 8)),
        "offset": draw(st.integers(0, 8192)),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


def score(v: dict, offset: float) -> float:
    """Rotate q by offset (each pair i by offset × base^(-2i/d)), k by 0: the offset form of RoPE."""
    d = int(v["head_dim"])
    q, k = np.random.default_rng(v["seed"]).standard_normal((2, d))
    angle = offset * float(v["base"]) ** (-2.0 * np.arange(d // 2) / d)
    a, b = q[: d // 2], q[d // 2 :]
    rotated = np.concatenate([a * np.cos(angle) - b * np.sin(angle), b * np.cos(angle) + a * np.sin(angle)])
    return float(rotated @ k) / math.sqrt(d)


@settings(max_examples=30, deadline=None)
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer_for(v)
    offset_only, past, interp = page_claims(answer)
    assert math.isclose(offset_only["score"], score(v, v["offset"]), abs_tol=1e-9)
    assert math.isclose(offset_only["shifted"], score(v, v["offset"]), abs_tol=1e-9)
    assert offset_only["same"] and offset_only["difference"] <= 1e-9
    slowest = float(v["base"]) ** (-2.0 * (int(v["head_dim"]) // 2 - 1) / int(v["head_dim"])) / (2 * math.pi)
    assert math.isclose(past["trained_turns"], (v["train"] - 1) * slowest, rel_tol=1e-12)
    assert math.isclose(past["turns"], v["offset"] * slowest, rel_tol=1e-12, abs_tol=1e-300)
    assert past["inside"] == (v["offset"] <= v["train"] - 1) == (past["turns"] <= past["trained_turns"])
    assert interp["scaled_offset"] == v["offset"] / v["factor"]
    assert interp["inside"] == (interp["scaled_offset"] <= v["train"] - 1)
    assert math.isclose(interp["score"], score(v, v["offset"] / v["factor"]), abs_tol=1e-9)
    assert interp["covers"] == v["factor"] * (v["train"] - 1)
