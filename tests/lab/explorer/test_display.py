"""lab/explorer/display.py: every display string for a trace, rounded (never -0) or precise (-0 kept)."""

from __future__ import annotations

from attnlab.engine.single import trace_query
from attnlab.lab.explorer.display import comparison, display_strings, reference_strings, row_strings

KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]


def test_worked_example_strings():
    d = display_strings(trace_query([2, 1], KEYS, VALUES, labels=["A", "B", "C"]))
    assert d["q"] == "[2, 1]"
    assert d["scale"] == "√2"
    assert (d["m"], d["z"], d["output"]) == ("1.414", "1.736", "[-0.004, 0.868]")
    assert d["output_precise"] == "[-0.00393691965450399, 0.8679552806894639]"
    assert [s["percent"] for s in d["sources"]] == ["14%", "58%", "28%"]
    assert [s["score"] for s in d["sources"]] == ["0", "1.414", "0.707"]
    assert d["keys_coords"] == [["-1", "2"], ["1", "0"], ["0", "1"]]


def test_rounded_display_never_shows_negative_zero_but_precise_keeps_it():
    d = display_strings(trace_query([-0.0, 1], KEYS, VALUES, labels=["A", "B", "C"]))
    assert d["q"] == "[0, 1]"
    assert d["q_coords"] == ["-0", "1"]
    assert d["q_precise"] == "[-0, 1]"
    tiny = display_strings(trace_query([3.0199, -0.0001], KEYS, VALUES))
    assert tiny["q"] == "[3.02, 0]"
    assert "-0" not in tiny["q"]


def test_blocked_sources_and_own_labels():
    t = trace_query([1, 0], KEYS, VALUES, labels=["cat", "sat", "mat"], allowed=[True, False, True])
    d = display_strings(t)
    assert [s["label"] for s in d["sources"]] == ["cat", "sat", "mat"]
    assert d["sources"][1]["share"] == d["sources"][1]["percent"] == "blocked"
    assert d["sources"][1]["precise"].endswith("blocked by the mask (share 0, no contribution)")
    row = row_strings(t)
    assert row["scores_text"][1] == row["weights_text"][1] == "blocked"
    assert row["weights_text"][0] != "blocked"


def test_explicit_scale_is_written_as_a_number():
    d = display_strings(trace_query([2, 1], KEYS, VALUES, scale=0.5))
    assert d["scale"] == "0.5"
    assert [s["score"] for s in d["sources"]] == ["0", "1", "0.5"]


def test_comparison_strings_and_unavailable_reference():
    t = trace_query([3, 1], KEYS, VALUES, labels=["A", "B", "C"])
    answer, reference = comparison(t)
    assert answer["available"] and answer["active"]
    assert answer["display"] == reference_strings(reference)
    assert answer["display"]["q"] == "[2, 1]"
    huge = trace_query([1e-300, 0], [[1e308, 0], [0, 1e308], [1, 1]], VALUES)
    answer, reference = comparison(huge)
    assert reference is None and not answer["available"]
    assert answer["message"].startswith("The comparison with q = [2, 1] is not available")
