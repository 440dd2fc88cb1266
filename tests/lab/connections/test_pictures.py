"""The pictures' data: fractions the page only scales, ticks with their texts."""

from __future__ import annotations

import pytest

from attnlab.lab.connections import pictures as pic


def test_a_heatmap_inks_by_the_largest_allowed_value():
    h = pic.heatmap(
        "h",
        "t",
        "c",
        ["r0", "r1"],
        ["a", "b"],
        [[1.0, -4.0], [2.0, 99.0]],
        signed=True,
        blocked=[[False, False], [False, True]],
    )
    assert h["fill"] == [[0.25, 1.0], [0.5, 0.0]] and h["sign"] == [[1, -1], [1, 1]]
    assert h["blocked"] == [[False, False], [False, True]] and h["label_every"] == 1
    wide = pic.heatmap("w", "t", "c", ["r"], [f"{j}–{j + 1}" for j in range(0, 200, 2)], [[1.0] * 100])
    assert wide["label_every"] == 18  # 100 labels of 7 characters and a space; 45 characters fit across


def test_axes():
    ax = pic.axis("x", 0.0, 9.2)
    assert [t["text"] for t in ax["ticks"]] == ["0", "2", "4", "6", "8", "10"]
    assert pic.place(ax, 5.0) == 0.5 and pic.place(ax, 20.0) == 1.0
    log = pic.axis("n", 3.0, 2e4, log=True)
    assert [t["text"] for t in log["ticks"]] == ["1", "10", "10²", "10³", "10⁴", "10⁵"]
    assert pic.place(log, 1000.0) == pytest.approx(0.6)
    assert [t["text"] for t in pic.axis("y", -0.25, 0.3)["ticks"]] == ["−0.4", "−0.2", "0", "0.2", "0.4"]


def test_lines_and_bars_place_their_values():
    x, y = pic.axis("x", 0, 10), pic.axis("y", 0, 1)
    ln = pic.lines(
        "l", "t", "c", x, y, [{"name": "s", "cls": "now", "xs": [0, 5], "ys": [0.0, 1.0]}], marker=10
    )
    assert ln["series"][0]["points"] == [[0.0, 0.0], [0.5, 1.0]] and ln["marker"]["at"] == 1.0
    b = pic.bars(
        "b",
        "t",
        "c",
        [{"label": "a", "value": -2.0, "text": "-2"}, {"label": "b", "value": 1.0, "text": "1"}],
    )
    assert [(x["length"], x["negative"]) for x in b["bars"]] == [(1.0, True), (0.5, False)] and b["signed"]
    logb = pic.bars(
        "b",
        "t",
        "c",
        [{"label": "a", "value": 10, "text": ""}, {"label": "b", "value": 1e4, "text": ""}],
        log=True,
    )
    assert [x["length"] for x in logb["bars"]] == [0.0, 1.0]
    assert pic.power_text(10) == "10¹⁰" and pic.power_text(-3) == "10⁻³"
