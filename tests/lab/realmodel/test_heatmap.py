"""How a heatmap is read (lab/realmodel/heatmap.py): the legend, a cell's readout, the text in a cell."""

from __future__ import annotations

import re

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.heatmap import CELL, CELL_SLOTS, MARKS, cell_text, legend

SLOT = re.compile(r"\{(\w+)\}")


def test_the_legend_marks_its_shares_and_says_the_blocked_swatch_only_with_a_mask():
    causal = legend(causal=True)
    assert [m["share"] for m in causal["marks"]] == list(MARKS)
    assert [m["text"] for m in causal["marks"]] == ["0", "0.01", "0.05", "0.1", "0.25", "0.5", "1"]
    assert causal["label"] == (
        "Colour legend: shares 0, 0.01, 0.05, 0.1, 0.25, 0.5, 1 from faint to dark; grey cells are "
        "blocked (a token may not see later ones)"
    )
    assert causal["blocked_mark"] == "blocked" and causal["blocked"]
    assert causal["words"] == (
        "Darker = larger share. The ink grows with the square root of the share, so thin spreads "
        "(0.01–0.05) stay visible."
    )
    full = legend(causal=False, binned=True)
    assert full["blocked"] == full["blocked_mark"] == "" and "grey" not in full["label"]
    assert full["words"].endswith("each cell is the largest share in its block of tokens.")


def test_each_cell_template_names_only_its_slots():
    for name, template in CELL.items():
        assert tuple(SLOT.findall(template)) == CELL_SLOTS[name], name
    filled = CELL["exact"].format(query="3 sat", key="2 cat", share="0.12", exact="0.1234")
    assert filled == "3 sat → 2 cat: share 0.12 (exactly 0.1234)"
    assert CELL["blocked"].format(query="0 The", key="4 on") == "0 The may not see 4 on"


def test_the_text_inside_a_cell_drops_the_leading_zero_of_every_printed_share():
    shares = [fmt.rounded(k / 100, 2) for k in range(101)]
    text = cell_text(shares)
    assert text["0.12"] == ".12" and text["0.5"] == ".5" and text["0"] == "0" and text["1"] == "1"
    assert set(text) == set(shares) and all(len(t) <= 3 for t in text.values())
