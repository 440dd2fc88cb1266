"""The sampling lab's challenges, checked on the learner's temperature and logits."""

from __future__ import annotations

import numpy as np

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.sampling import CONTROLS, LAB
from attnlab.lab.connections.sampling.walk import T_MAX, T_STEP, random_logits, shares


def check(cid: str, response=None, measured=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response, measured)


def test_top_90_is_the_hottest_step_that_keeps_90():
    logits = random_logits(0)[:10]
    steps = [round(i * T_STEP, 10) for i in range(1, round(T_MAX / T_STEP) + 1)]
    hottest = max(t for t in steps if shares(logits, t).max() >= 0.9)
    met = check("top-90", temperature=hottest)
    assert met["met"] and met["words"]["claims"]["top_share"] >= 0.9 > met["words"]["claims"]["hotter_share"]
    colder = check("top-90", temperature=round(hottest - T_STEP, 10))
    assert not colder["met"] and "find the highest" in colder["words"]["text"]
    assert "cool it down" in check("top-90", temperature=T_MAX)["words"]["text"]
    assert np.isclose(met["words"]["claims"]["top_share"], shares(logits, hottest).max())


def test_attentions_temperature_is_the_square_root():
    assert check("head", "8")["met"] and not check("head", "64")["met"]


def test_a_goal_on_logits_not_in_yet_waits_for_them():
    out = check("top-90", source="smollm2")
    assert (
        not out["met"]
        and out["words"]["text"] == "SmolLM2's logits are not in yet: wait for them, then check."
    )
