"""Exported SVG plots: well-formed, equal units, labels escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from attnlab.engine import trace_query
from attnlab.lab import plots
from attnlab.lab.sequence import STARTING

SVG = "{http://www.w3.org/2000/svg}"


def test_key_space_fits_the_points_with_equal_units():
    svg = ET.fromstring(plots.key_space_svg(STARTING.explorer_trace()))
    # keys and q span x -1..2, y 0..2; plus the origin, a one-unit margin: 5 x 4 units
    assert (svg.get("width"), svg.get("height")) == ("240", "192")
    assert svg.find(f"{SVG}title").text == "Key space: q = [2, 1] and the keys of A, B, C"
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert texts == ["k_A", "k_B", "k_C", "q"]


def test_value_space_draws_the_hull_arrows_and_output():
    svg = ET.fromstring(plots.value_space_svg(STARTING.row_trace(1)))
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert texts == ["v_A", "v_B", "v_C (blocked)", "o"]
    assert svg.find(f"{SVG}polygon") is None  # two allowed values: a segment, not a triangle
    assert "o = [1.609, 0.391]" in svg.find(f"{SVG}title").text


def test_labels_are_escaped():
    t = trace_query([1, 0], [[1, 0], [0, 1]], [[1, 0], [0, 1]], labels=["<b>", "&"])
    text = plots.key_space_svg(t)
    assert "&lt;b&gt;" in text and "k_&amp;" in text
    ET.fromstring(text)


def test_plane_needs_two_coordinates():
    with pytest.raises(ValueError, match="q has 3 coordinates; the key plane needs 2"):
        plots.key_space_svg(trace_query([1, 0, 0], [[1, 0, 0]], [[1, 2]]))
