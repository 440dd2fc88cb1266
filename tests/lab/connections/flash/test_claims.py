"""Every sentence of the flash lab is true of its numbers: each claim recomputed here (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import assert_page_answer

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.controls import read
from attnlab.lab.connections.flash import CONTROLS, LAB

SETTINGS = settings(max_examples=40, deadline=None)


@st.composite
def inputs(draw) -> dict:
    n = draw(st.integers(4, 96))
    return read(
        CONTROLS,
        {
            "n": n,
            "tile": draw(st.integers(1, n)),
            "row": draw(st.integers(0, n - 1)),
            "keys": draw(st.integers(1, n)),
            "window": draw(st.integers(1, n)),
            "seed": draw(st.integers(0, 9999)),
        },
        "inputs",
    )


def reference(v: dict):
    """Full attention, the online softmax for the row and the windows, recomputed plainly in NumPy."""
    q, k, val = np.random.default_rng(v["seed"]).standard_normal((3, v["n"], 4))
    s = (q @ k.T) / 2.0
    return q, k, val, s


@SETTINGS
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer(v)
    assert_page_answer(answer)
    words = {i: w for i, w in enumerate(answer["words"])}
    q, k, val, s = reference(v)
    n, tile, row = v["n"], v["tile"], v["row"]
    # a score's rounding error: NumPy's q @ k.T sums its four products in an order of its BLAS's
    # choosing (the SIMD path), the engine in its own; both within 4 eps of sum |q_i k_i| / 2
    slack = 4 * np.finfo(np.float64).eps * float((np.abs(q[row]) @ np.abs(k).T).max()) / 2.0
    tiles = -(-n // tile)
    t = (v["keys"] - 1) // tile
    # 1) the walk: row's block, the tile just finished, m, l and O / l over the keys so far
    c = words[0]["claims"]
    i0 = row // tile * tile
    assert c["block"] == [i0, min(n, i0 + tile)] and c["tiles"] == tiles and c["tile"] == t + 1
    assert c["keys"] == [t * tile, min(n, (t + 1) * tile)]
    seen = s[row, : c["keys"][1]]
    assert abs(c["m"] - seen.max()) <= 2 * slack
    assert abs(c["l"] - np.exp(seen - seen.max()).sum()) <= 1e-13 * c["l"]
    w_seen = np.exp(seen - seen.max()) / np.exp(seen - seen.max()).sum()
    assert np.allclose(c["output"], w_seen @ val[: c["keys"][1]], rtol=0, atol=1e-13)
    assert f"m = {fmt.rounded(c['m'])}" in words[0]["text"]
    # 2) the rescaling: only when this tile raised the maximum, by e^(m - m')
    c = words[1]["claims"]
    if t == 0:
        assert c == {"tile": 1, "rescaled": False}
    else:
        before = s[row, : t * tile].max()
        assert abs(c["m_before"] - before) <= 2 * slack and c["rescaled"] == (c["m_after"] > c["m_before"])
        assert abs(c["factor"] - np.exp(before - c["m_after"])) <= 1e-15
        assert ("raised the maximum" in words[1]["text"]) == c["rescaled"]
    # 3) exact: the block's final O against full attention
    c = words[2]["claims"]
    w_full = np.exp(s - s.max(axis=1, keepdims=True))
    full = (w_full / w_full.sum(axis=1, keepdims=True)) @ val

    tiled = np.array(answer["data"]["output_so_far"][-1])
    assert abs(np.max(np.abs(tiled - full[row]))) / np.max(np.abs(val)) <= c["difference"] + 1e-15
    assert c["within"] == (c["difference"] <= c["bound"]) and c["bound"] == 1e-15
    assert c["within"], "the lab's inputs keep flash within 1e-15 of full attention"
    assert ("bit for bit" in words[2]["text"]) == c["identical"]
    assert c["difference"] >= 0 and (c["difference"] == 0) >= c["identical"]
    # 4) memory and 5) the page's figure
    c = words[3]["claims"]
    assert c["matrix_numbers"] == n * n and c["held_numbers"] == tile * tile + 2 * tile + 4 * tile
    assert f"{n * n:,} numbers per head" in words[3]["text"]
    c = words[4]["claims"]
    assert c["numbers"] == 10**10 and c["numbers"] * c["bytes_each"] / 1e9 == c["gigabytes"] == 20
    # 6) the window against causal attention
    c = words[5]["claims"]
    causal = np.where(np.tri(n, dtype=bool), s, -np.inf)
    band = np.tri(n, dtype=bool) & ~np.tri(n, k=-v["window"], dtype=bool)
    windowed = np.where(band, s, -np.inf)

    def attend(scores):
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)) @ val

    change = np.max(np.abs(attend(windowed) - attend(causal)), axis=1)
    assert np.allclose(c["row_change"], change[row], atol=1e-13)
    assert (
        c["unchanged_rows"]
        == int(np.sum(change <= 1e-12))
        == min(n, v["window"]) + int(np.sum(change[v["window"] :] <= 1e-12))
    )
    assert c["row_sees"] == [max(0, row - v["window"] + 1), row + 1]
    assert ("instead of" in words[5]["text"]) == (row >= v["window"])
    if row < v["window"]:
        assert change[row] <= 1e-13
