"""The guided playback: a 31-second script whose frames come from the engine."""

from __future__ import annotations

import pytest

from attnlab.engine import trace_query
from attnlab.lab import playback
from attnlab.lab.examples import WORKED


def test_script_is_31_seconds_with_captions_covering_it():
    p = playback.playback()
    assert p["duration"] == 31.0
    assert len(p["frames"]) == 31 * p["fps"] + 1
    caps = p["captions"]
    assert caps[0]["start"] == 0.0 and caps[-1]["end"] == 31.0
    for a, b in zip(caps, caps[1:]):
        assert a["end"] == b["start"]  # no gap, no overlap
    assert [c["phase"] for c in caps[1:4]] == ["match", "share", "mix"]


def test_frames_are_the_engines_numbers():
    p = playback.playback()
    for f in p["frames"][::7]:
        t = trace_query(f["trace"]["q"], WORKED.keys, WORKED.values)
        assert f["trace"]["weights"] == list(t.weights)
        assert f["trace"]["output"] == list(t.output)
        arrows = f["geometry"]["arrows"]
        assert arrows[0]["start"] == [0.0, 0.0]
        assert arrows[-1]["end"] == list(t.output)  # tip to tail ends at o exactly
        assert f["geometry"]["pie"][-1]["end"] == pytest.approx(1.0, abs=1e-15)
        for k, proj in zip(t.keys, f["geometry"]["projections"]):
            # q minus its projection is orthogonal to the key
            r = [qj - pj for qj, pj in zip(t.q, proj)]
            assert abs(r[0] * k[0] + r[1] * k[1]) < 1e-12


def test_one_window_per_plane_holds_every_frame():
    p = playback.playback()
    kv, vv = p["key_view"], p["value_view"]
    assert kv["xmax"] - kv["xmin"] == kv["ymax"] - kv["ymin"]  # equal units
    for f in p["frames"]:
        x, y = f["trace"]["q"]
        assert kv["xmin"] <= x <= kv["xmax"] and kv["ymin"] <= y <= kv["ymax"]
        for a in f["geometry"]["arrows"]:
            assert vv["xmin"] <= a["end"][0] <= vv["xmax"]
            assert vv["ymin"] <= a["end"][1] <= vv["ymax"]


def test_the_first_frame_is_the_page_example_and_q_moves_later():
    p = playback.playback()
    frames = [f["trace"] for f in p["frames"]]
    assert frames[0]["q"] == [2.0, 1.0]
    assert frames[0]["output"] == [-0.00393691965450399, 0.8679552806894639]
    assert p["frames"][0]["display"]["sources"][1]["percent"] == "58%"
    assert frames[230]["q"] == [3.0, -0.5]
    assert frames[265]["q"] == [0.0, 0.0]
    assert frames[-1]["q"] == [2.0, 1.0]
    assert playback.query_at(21.0) == (2.5, 0.25)  # halfway between keyframes 19 s and 23 s


def test_captions_are_filled_from_their_anchor_frames():
    caps = playback.playback()["captions"]
    assert "B takes 58%, C 28% and A 14%" in caps[2]["text"]
    assert "[-0.004, 0.868]" in caps[3]["text"]
    assert caps[4]["anchor_frame"] == 230 and "B takes 92%" in caps[4]["text"]
    assert "(33% each)" in caps[5]["text"] and "[0.333, 0.333]" in caps[5]["text"]
    assert all("{" not in c["text"] for c in caps)
