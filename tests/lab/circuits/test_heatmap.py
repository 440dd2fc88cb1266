"""A grid of numbers as the page draws it: every value, its cell's text and title; blank where NaN."""

from __future__ import annotations

import numpy as np

from attnlab.lab.circuits.heatmap import grid, share_legend, signed, signed_legend


def test_a_grid_carries_each_value_its_text_and_title_and_none_for_nan():
    v = np.array([[0.5, np.nan], [-1.25, 2.0]])
    g = grid(v, rows=["L0", "L1"], columns=["H0", "H1"],
             cell=lambda i, j, x: "" if x is None else signed(x, 1),
             title=lambda i, j, x: f"{i},{j}: {x}", scale="signed", limit=2.0,
             legend=signed_legend(2.0, above="up", below="down", blank="none"), label="A grid")  # fmt: skip
    assert g["values"] == [[0.5, None], [-1.25, 2.0]]
    assert g["cells"] == [["+0.5", ""], ["−1.2", "+2"]]
    assert g["titles"] == [["0,0: 0.5", "0,1: None"], ["1,0: -1.25", "1,1: 2.0"]]
    assert (g["scale"], g["limit"], g["label"]) == ("signed", 2.0, "A grid")
    assert g["legend"]["text"] == (
        "Blue: up; red: down; white: 0. Full colour at ±2 (beyond it, drawn as ±2). Blank: none."
    )


def test_signed_numbers_and_the_share_legend():
    assert [signed(x) for x in (5.2104, -0.4, 0.0, -0.0001)] == ["+5.21", "−0.4", "0", "0"]
    assert share_legend("induction score")["claims"] == {"limit": 1.0, "blank": False}
