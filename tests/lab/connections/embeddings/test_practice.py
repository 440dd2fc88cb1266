"""The embeddings lab's challenges, checked on the learner's τ and vectors."""

from __future__ import annotations

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.embeddings import CONTROLS, LAB
from attnlab.lab.connections.embeddings.walk import TAU_MAX, TAU_STEP


def check(cid: str, response=None, measured=None, **given) -> dict:
    return LAB.check(cid, read(CONTROLS, given, "inputs"), response, measured)


def test_loss_below_is_the_warmest_step_under_01():
    steps = [round(i * TAU_STEP, 10) for i in range(1, round(TAU_MAX / TAU_STEP) + 1)]
    loss = {t: LAB.answer(read(CONTROLS, {"tau": t}, "inputs"), {})["data"]["loss"] for t in steps}
    warmest = max(t for t in steps if loss[t] < 0.1)
    met = check("loss-below", tau=warmest)
    assert met["met"] and met["words"]["claims"]["loss"] == loss[warmest]
    cooler = check("loss-below", tau=round(warmest - TAU_STEP, 10))
    assert not cooler["met"] and "find the highest" in cooler["words"]["text"]
    assert "sharpen" in check("loss-below", tau=TAU_MAX)["words"]["text"]


def test_a_pair_closer_to_another_match_can_never_be_met():
    out = check("loss-below", tau=0.01, noise=2.0, seed=3)
    assert out["words"]["claims"]["correct"] < 4 and "no τ brings it under 0.1" in out["words"]["text"]


def test_attentions_divisor_is_flatter():
    assert check("sharper", "flatter")["met"] and not check("sharper", "sharper")["met"]


def test_a_goal_on_embeddings_not_in_yet_waits_for_them():
    assert not check("loss-below", source="minilm")["met"]
