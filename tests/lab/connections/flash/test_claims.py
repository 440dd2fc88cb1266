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
    i0 = row // tile * tile
    walked = -(-min(n, i0 + tile) // tile)  # the key tiles up to the block's last row; the rest skipped
    t = min((v["keys"] - 1) // tile, walked - 1)
    # 1) the walk: row's block, the tiles it walks under the causal mask, m, l and O / l over the keys so far
    c = words[0]["claims"]
    assert c["block"] == [i0, min(n, i0 + tile)] and c["causal"] is True
    assert c["all_tiles"] == tiles and c["tiles"] == walked and c["skipped"] == tiles - walked
    assert c["tile"] == t + 1 and c["keys"] == [t * tile, min(n, (t + 1) * tile)]
    assert c["masked"] == ([row + 1, c["keys"][1]] if c["keys"][1] > row + 1 else [])
    assert ("skips" in words[0]["text"]) == (walked < tiles)
    seen = s[row, : min(c["keys"][1], row + 1)]  # the keys walked so far that row may see
    assert abs(c["m"] - seen.max()) <= 2 * slack
    assert abs(c["l"] - np.exp(seen - seen.max()).sum()) <= 1e-13 * c["l"]
    w_seen = np.exp(seen - seen.max()) / np.exp(seen - seen.max()).sum()
    assert np.allclose(c["output"], w_seen @ val[: len(seen)], rtol=0, atol=1e-13)
    assert f"m = {fmt.rounded(c['m'])}" in words[0]["text"]
    # 2) the rescaling: only when this tile raised the maximum, by e^(m - m')
    c = words[1]["claims"]
    if t == 0:
        assert c == {"tile": 1, "rescaled": False}
    else:
        before = s[row, : min(t * tile, row + 1)].max()
        assert abs(c["m_before"] - before) <= 2 * slack and c["rescaled"] == (c["m_after"] > c["m_before"])
        assert abs(c["factor"] - np.exp(before - c["m_after"])) <= 1e-15
        assert ("raised the maximum" in words[1]["text"]) == c["rescaled"]
    # 3) exact: the block's final O against plain causal attention (like with like)
    c = words[2]["claims"]
    assert c["causal"] is True and "plain causal attention" in words[2]["text"]
    masked = np.where(np.tri(n, dtype=bool), s, -np.inf)
    w_full = np.exp(masked - masked.max(axis=1, keepdims=True))
    full = (w_full / w_full.sum(axis=1, keepdims=True)) @ val
    assert np.allclose(answer["data"]["full_output"], full[row], rtol=0, atol=1e-14)

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
    assert c["causal"] is True and "against plain causal attention (both causal" in words[5]["text"]
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


def test_no_table_mixes_keys_with_rows_and_each_says_it_is_causal():
    """The walk, the row's weights by key, the window's change by row: one kind of row per table, each
    but the walk titled causal; a key after the row shows as masked, never as a weight of 0."""
    answer = LAB.answer(read(CONTROLS, {"n": 16, "tile": 4, "row": 9, "window": 3}, "inputs"))
    titles = [t["title"] for t in answer["numbers"]]
    assert titles == [
        "Row 9, tile by tile",
        "Plain causal attention for row 9: its weight on each key",
        "The window of 3 against plain causal attention: each row's largest change",
        "Inputs (seeded)",
    ]
    assert not any("key / row" in c for t in answer["numbers"] for c in t["columns"])
    by_key = answer["numbers"][1]
    assert by_key["columns"] == ["key", "row 9's weight", "value"] and len(by_key["rows"]) == 16
    assert [r[1] for r in by_key["rows"][10:]] == ["masked"] * 6 and by_key["rows"][9][1] != "masked"
    by_row = answer["numbers"][2]
    assert by_row["columns"] == ["row", "keys it sees", "largest change"]
    assert [r[1] for r in by_row["rows"][:4]] == ["0–0 (all)", "0–1 (all)", "0–2 (all)", "1–3"]


def test_the_walk_is_causal_and_skips_the_tiles_after_its_block():
    """Row 5 of 16 in tiles of 4: its block (rows 4–7) walks key tiles 1–2 and skips 3–4, and its output
    is plain causal attention's, not the unmasked one's (which it used to be compared with)."""
    answer = LAB.answer(read(CONTROLS, {"n": 16, "tile": 4, "row": 5}, "inputs"))
    first = answer["words"][0]
    assert first["text"].startswith(
        "Row 5 is in the query block of rows 4–7. Under the causal mask its block walks key tiles 1–2 of 4 "
        "and skips key tiles 3–4: every key there comes after every row of the block. After key tile 2 "
        "(keys 4–7, of which 6–7 are masked for row 5)"
    )
    q, k, val, s = reference(read(CONTROLS, {"n": 16}, "inputs"))
    unmasked = np.exp(s[5] - s[5].max())
    assert not np.allclose(answer["data"]["full_output"], (unmasked / unmasked.sum()) @ val)
    assert answer["data"]["full_weights"][6:] == [0.0] * 10
    assert len(answer["data"]["m"]) == 2
    assert "causal against causal everywhere" in LAB.lede
