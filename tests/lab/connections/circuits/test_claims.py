"""Every sentence of the circuits lab is true of its numbers: each claim recomputed here (hypothesis,
on synthetic recorded runs), and the words while SmolLM2's run is not in."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
from copykit import induction, measured, run_data
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import assert_page_answer

from attnlab.lab import numbers as fmt
from attnlab.lab.connections.circuits import CONTROLS, LAB, words
from attnlab.lab.connections.circuits.words import FEEDS, drop_points, pct
from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.realmodel.census import SCORES


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from(SCORES),
       st.sampled_from([0.3, 3.0, 12.0]), st.sampled_from(["mean", "zero"]))  # fmt: skip
def test_every_claim(seed, tested, shown, spread, how):
    data = run_data(seed, tested=tested, spread=spread, how=how)
    values = read(CONTROLS, {"map": shown, "how": how, "tested": tested}, "inputs")
    answer = LAB.answer(values, measured(data))
    assert_page_answer(answer)
    said = answer["words"]
    ids, rows = data["ids"], data["rows"]
    ind, prev = np.array(data["scores"]["induction"]), np.array(data["scores"]["previous"])
    layer, head = divmod(int(np.argmax(ind)), ind.shape[1])
    census, heads = said[1]["claims"], said[2]["claims"]
    assert census == {"layer": layer, "head": head, "induction": ind[layer, head]}
    assert f"layer {layer}, head {head}" in said[1]["text"] and pct(ind[layer, head]) in said[1]["text"]
    assert heads["heads"] == data["tested"] and heads["previous"] == [prev[a, b] for a, b in data["tested"]]
    below = sorted((-prev[a, b], a, b) for a in range(layer) for b in range(prev.shape[1]))
    assert heads["heads"] == [[a, b] for _, a, b in below[:tested]]
    clean = induction(rows["clean"], ids)
    verdict = said[-1]["claims"]
    if not data["tested"]:
        assert len(said) == 4 and verdict["feeds"] is False
        return
    assert math.isclose(said[3]["claims"]["clean"], clean, rel_tol=1e-12) and said[3]["claims"]["how"] == how
    drops = []
    for i, result in enumerate(said[4:-1]):
        c = result["claims"]
        keys, every = induction(rows["keys"][i], ids), induction(rows["all"][i], ids)
        assert c["head"] == data["tested"][i]
        assert math.isclose(c["keys"], keys, rel_tol=1e-12) and math.isclose(c["all"], every, rel_tol=1e-12)
        assert math.isclose(c["drop"], clean - keys, rel_tol=1e-9, abs_tol=1e-15)
        assert c["direction"] == ("falls" if c["keys"] < c["clean"] else "rises" if c["keys"] > c["clean"]
                                  else "stays")  # fmt: skip
        assert f" {c['direction']} " in result["text"]
        assert f"({pct(every)} with the queries" in result["text"]
        # the drop said is the difference of the two percentages shown beside it
        assert c["drop_shown"] == fmt.difference(pct(clean), pct(keys)) == drop_points(clean, keys)
        if c["direction"] != "stays":
            assert f"from {pct(c['clean'])} to {pct(keys)}" in result["text"]
        assert f"of {fmt.plural(c['drop_shown'].removeprefix('-'), 'point')}." in result["text"]
        drops.append(c["drop"])
    best = max(range(len(drops)), key=lambda i: (drops[i], -i))
    assert verdict["head"] == data["tested"][best]
    assert math.isclose(verdict["drop"], drops[best], rel_tol=1e-12)
    assert verdict["feeds"] == (verdict["drop"] >= FEEDS)
    assert said[-1]["text"].startswith("L") == verdict["feeds"]
    assert answer["data"]["feeder"] == data["tested"][best]
    assert answer["data"]["scores"] == data["scores"][shown]
    assert [p["id"] for p in answer["pictures"]] == ["map", "drops", "pattern", "pattern-off"]


def test_a_rise_in_words_is_the_difference_of_the_shown_scores():
    # the case: 94.34% -> 94.46% reads "rises from 94.3% to 94.5%", so it is a rise of 0.2 points
    # (once 0.1: the unrounded rise, 0.12, rounded)
    c = SimpleNamespace(tested=[(2, 3)], clean=0.9434, keys=[0.9446], every=[0.95], drops=[0.9434 - 0.9446],
                        feeder=0)  # fmt: skip
    said = words.result(c, 0)
    assert said["text"] == (
        "Without L2 H3, the induction score rises from 94.3% to 94.5% through the keys alone (95% with the "
        "queries recomputed too): a rise of 0.2 points."
    )
    assert said["claims"]["drop_shown"] == "-0.2"
    assert "by 0.2 points" in words.verdict(c)["text"]


def test_the_words_while_the_run_is_not_in():
    values = read(CONTROLS, {"seed": 5, "words": 4, "repeats": 3}, "inputs")
    absent = LAB.answer(values, {})
    assert absent["pictures"] == []
    assert absent["words"][0]["claims"] == {"seed": 5, "n_words": 4, "repeats": 3}
    assert absent["words"][1]["text"].startswith(
        "SmolLM2 scores every head on the probe and switches the previous-token heads off: this runs where "
        "the lab is served"
    )
    text = absent["data"]["probe"]
    assert len(text.split()) == 12 and text.split()[:4] == text.split()[4:8]
    running = Measured("waiting", stage="running", done=2, total=5, unit="step")
    waiting = LAB.answer(values, {"copying": running})
    assert waiting["words"][1]["text"].endswith(": running, 2 of 5 steps done…")


def test_the_map_marks_the_heads_and_follows_the_chosen_score():
    data = run_data(11, layers=6, heads=4, tested=3)
    first = LAB.answer(read(CONTROLS, {"map": "induction"}, "inputs"), measured(data))["pictures"][0]
    other = LAB.answer(read(CONTROLS, {"map": "breadth"}, "inputs"), measured(data))["pictures"][0]
    assert first["title"] == "Every head's induction score on the probe" and first["fill"] != other["fill"]
    layer, head = data["induction_head"]
    boxes = [(m["rows"][0], m["start"]) for m in first["marks"]]
    assert boxes == [(layer, head), *(tuple(h) for h in data["tested"])]
    top = np.array(data["scores"]["induction"])
    assert first["fill"][layer][head] == 1.0 == float(top[layer, head] / top.max())
