"""The guided playback: a 31-second script whose frames come from the engine."""

from __future__ import annotations

import math

import pytest

from attnlab.engine import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.notebook import playback


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


def test_the_keyframes_land_where_the_captions_say():
    p = playback.playback()
    frames = [f["trace"] for f in p["frames"]]
    assert frames[0]["q"] == [0.5, -1.0]
    assert frames[40]["q"] == [2.0, 1.0]
    assert p["frames"][40]["display"]["sources"][1]["percent"] == "58%"
    assert frames[40]["output"] == [-0.00393691965450399, 0.8679552806894639]
    assert frames[115]["q"] == [1.0, 1.0]  # every score equal: the pie splits in thirds
    assert frames[230]["q"] == [3.0, -0.5]
    assert frames[265]["q"] == [0.0, 0.0]
    assert frames[-1]["q"] == [2.0, 1.0]
    assert playback.query_at(21.0) == (2.5, 0.25)  # halfway between keyframes 19 s and 23 s


def test_every_step_animates_the_pictures():
    # the first 19 s used to hold q still (only a highlight moved): now in every
    # caption's range q travels, the pie re-splits and the arrows re-add
    p = playback.playback()
    frames = p["frames"]
    for c in p["captions"]:
        span = frames[round(c["start"] * p["fps"]):round(c["end"] * p["fps"]) + 1]
        qs = {tuple(f["trace"]["q"]) for f in span}
        pies = {tuple(s["end"] for s in f["geometry"]["pie"]) for f in span}
        arrows = {tuple(tuple(a["end"]) for a in f["geometry"]["arrows"]) for f in span}
        assert len(qs) > 5 and len(pies) > 5 and len(arrows) > 5, c["number"]
    # over the first 19 s, neighbouring frames differ almost always (holds are elsewhere)
    still = [i for i in range(190) if frames[i]["trace"]["q"] == frames[i + 1]["trace"]["q"]]
    assert still == []


def test_each_frame_says_what_it_shows():
    # caption and picture come from the same frame: every number the words name
    # is the frame's own display string, which the pictures use as their labels
    p = playback.playback()
    for i, f in enumerate(p["frames"]):
        c = p["captions"][f["caption"]]
        assert c["start"] <= f["t"] <= c["end"]
        d = f["display"]
        words = f["text"]
        assert "{" not in words
        template = playback._script()["captions"][f["caption"]]["text"]
        for name in ("q", "output"):
            if "{" + name + "}" in template:
                assert d[name] in words, (i, name)
        for s in d["sources"]:
            if "{share:" + s["label"] + "}" in template:
                assert s["percent"] in words, (i, s["label"])
        # the display strings are the engine's numbers, rounded as the page rounds
        assert d["q"] == fmt.vector(f["trace"]["q"])
        assert [s["percent"] for s in d["sources"]] == fmt.percents(f["trace"]["weights"])  # adding up to 100
    # 19 to 22 s: the words follow q (they once said [3, -0.5] while q was [2.25, 0.625])
    f = p["frames"][205]
    assert f["display"]["q"] == "[2.375, 0.438]" and "at q = [2.375, 0.438] B takes" in f["text"]


def test_the_still_steps_are_their_anchor_frames():
    caps = playback.playback()["captions"]
    assert len(caps) == 7
    assert "B takes 33%, C 33% and A 34%" in caps[2]["text"]  # rounded to add up to 100
    assert "[-0.094, 1.525]" in caps[3]["text"]
    # 0.65% + 91.64% + 7.71%: by largest remainder A 1%, B 91%, C 8% (once 1 + 92 + 8 = 101)
    assert caps[4]["anchor_frame"] == 230 and "B takes 91%" in caps[4]["text"]
    assert caps[5]["anchor_frame"] == 270 and "(A 34%, B 33%, C 33%)" in caps[5]["text"]
    assert caps[6]["text"].startswith("q returns to [2, 1]: at q = [2, 1] B takes 58%")
    frames = playback.playback()["frames"]
    for c in caps:
        f = frames[c["anchor_frame"]]
        template = playback._script()["captions"][c["number"] - 1]["text"]
        assert f["display"]["q"] in c["text"] or "{q}" not in template


def test_every_captions_claims_hold_over_its_frames():
    """Each caption's claims, frame by frame: its placeholders' numbers are the frame's, and what it
    says of them holds (the shares total one, o stays in the triangle, q moves further along B's key,
    the pie evens out, q returns to [2, 1])."""
    p = playback.playback()
    frames = p["frames"]
    by_caption: dict[int, list[dict]] = {}
    for f in frames:
        by_caption.setdefault(f["caption"], []).append(f)
        c, trace = f["claims"], f["trace"]
        for name in ("q", "output"):
            if name in c:
                assert c[name] == trace[name]
        for label, share in c.get("shares", {}).items():
            assert share == trace["weights"][p["labels"].index(label)]
            shown = fmt.percents(trace["weights"])[p["labels"].index(label)]
            assert f"{label} takes {shown}" in f["text"] or f"{label} {shown}" in f["text"]
        for label, score in c.get("scores", {}).items():
            assert score == trace["scores"][p["labels"].index(label)]
            assert f"{label} {fmt.rounded(score)}" in f["text"]
        if "total" in c:  # "together they make one"
            assert abs(c["total"] - 1.0) <= 1e-15 and c["total"] == math.fsum(trace["weights"])
        if "hull" in c:  # "inside the triangle of the values"
            assert c["hull"]["shape"] == "triangle" and len(c["hull"]["hull"]) == 3
            (ax, ay), (bx, by), (cx, cy) = c["hull"]["hull"]
            ox, oy = c["output"]
            for (x0, y0), (x1, y1) in (((ax, ay), (bx, by)), ((bx, by), (cx, cy)), ((cx, cy), (ax, ay))):
                assert (x1 - x0) * (oy - y0) - (y1 - y0) * (ox - x0) >= 0  # left of each edge: inside
        if "sources" in c:
            assert c["sources"] == p["labels"] and len(c["sources"]) == 3  # "One query, three sources"
        if "at_zero" in c:  # "At [0, 0] every score is 0 and the output is the plain average"
            assert c["at_zero"]["scores"] == [0.0, 0.0, 0.0]
            average = [math.fsum(v[j] for v in p["values"]) / 3 for j in range(2)]
            assert c["at_zero"]["output"] == pytest.approx(average, abs=1e-15)
        if "returns_to" in c:  # "q returns to [2, 1]"
            assert c["end_q"] == c["returns_to"] == list(WORKED.q)
    # claims over a caption's whole range: q moving further along B's key brings o towards v_B,
    # and the scores drawing together even the pie out
    towards = [f["claims"] for f in by_caption[4]]
    assert all(a["along_key"] <= b["along_key"] for a, b in zip(towards, towards[1:]))
    assert all(a["distance_to_value"] >= b["distance_to_value"] for a, b in zip(towards, towards[1:]))
    evening = [f["claims"] for f in by_caption[5]]
    assert all(a["spread"] >= b["spread"] for a, b in zip(evening, evening[1:]))


def test_the_clock_and_the_steps_are_the_labs_words():
    p = playback.playback()
    assert p["start_time"] == {"text": "0.0 s of 31 s", "spoken": "0.0 seconds of 31"}
    assert p["frames"][123]["time"] == {"text": "12.3 s of 31 s", "spoken": "12.3 seconds of 31"}
    assert [c["title"] for c in p["captions"]] == [f"Step {n} of 7" for n in range(1, 8)]
    assert p["description"].startswith(f"A {fmt.rounded(p['duration'])}-second guided explanation")
