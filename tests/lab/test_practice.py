"""Practice challenges: each goal is checked by the engine on the held example."""

from __future__ import annotations

import math

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab import practice
from attnlab.lab import sequence as seq
from attnlab.lab.sequence import STARTING


def with_query(q):
    return seq.edit_query(STARTING, q)


def test_at_least_eight_challenges_each_with_tiered_hints():
    cs = practice.challenges()
    assert len(cs) >= 8
    assert len({c["id"] for c in cs}) == len(cs)
    assert set(practice.CHECKS) == {c["id"] for c in cs}
    for c in cs:
        assert c["title"] and c["prompt"]
        assert len(c["hints"]) == 3, c["id"]  # nudge, stronger, near-answer
        assert len(set(c["hints"])) == 3


def test_equal_ac_needs_equal_scores():
    miss = practice.check("equal-ac", STARTING)
    assert miss == {
        "met": False,
        "words": "A takes 14% and C 28%: C is ahead by 14.4 points. Move q so that q meets "
        "A's key as much as C's.",
    }
    hit = practice.check("equal-ac", with_query([1.5, 1.5]))
    assert hit["met"] is True
    assert "Equal scores give equal shares" in hit["words"]


def test_near_vb_needs_closeness_and_the_reason():
    far = practice.check("near-vb", STARTING, "positive")
    assert far["met"] is False and "from v_B = [0, 2]" in far["words"]
    near = with_query([6, -3])
    t = near.explorer_trace()
    assert math.dist(t.output, (0.0, 2.0)) < 0.1
    assert practice.check("near-vb", near, "scale")["met"] is False
    ok = practice.check("near-vb", near, "positive")
    assert ok["met"] is True and "positive" in ok["words"]


def test_near_vb_says_when_floats_underflow_to_v_b_exactly():
    held = with_query([1000, -1000])
    assert held.explorer_trace().output == (0.0, 2.0)
    out = practice.check("near-vb", held, "positive")
    assert out["met"] is True and "underflowed to exactly 0" in out["words"]


def test_zero_q_prediction_in_percent():
    assert practice.check("zero-q", STARTING, [33.3, 33.3, 33.4])["met"] is True
    wrong = practice.check("zero-q", STARTING, [14, 58, 28])
    assert wrong["met"] is False
    assert "A 33.3%, B 33.3%, C 33.3%" in wrong["words"]


def test_double_q_sharpens_and_tie_changes_nothing():
    out = practice.check("double-q", STARTING, "grows")
    assert out == {
        "met": True,
        "words": "At q = [2, 1] the largest share is 58%; at 2q = [4, 2] it is 77%. "
        "Doubling q doubles the score differences, so softmax sharpens.",
    }
    assert practice.check("double-q", STARTING, "same")["met"] is False
    flat = practice.check("double-q", with_query([1, 1]), "grows")
    assert flat["met"] is False and "doubling changes nothing" in flat["words"]


def test_block_a_row2_requires_the_mask_and_a_good_prediction():
    assert practice.check("block-a-row2", STARTING, [0, 0])["met"] is False
    held = seq.set_mask_cell(STARTING, 2, 0, False)
    out = held.row_trace(2).output
    guess = [round(x, 2) for x in out]
    assert practice.check("block-a-row2", held, guess)["met"] is True
    off = practice.check("block-a-row2", held, [guess[0] + 0.05, guess[1]])
    assert off["met"] is False and "off by 0.05" in off["words"]


def test_tie_top_needs_a_tie_and_sees_the_third_tie_too():
    assert practice.check("tie-top", STARTING, "ties")["met"] is False
    tie = with_query([2, 2])
    assert practice.check("tie-top", tie, "less")["met"] is False
    out = practice.check("tie-top", tie, "ties")
    assert out["met"] is True and "k_A = 2k_C − k_B" in out["words"]


def test_value_moves_output_but_not_shares():
    assert practice.check("value-moves", STARTING)["met"] is False
    held = seq.edit_value(STARTING, 2, 1, 3.0)
    out = practice.check("value-moves", held)
    assert out["met"] is True
    assert "shares stayed A 14%, B 58%, C 28%" in out["words"]


def test_row2_equal_row1_by_masking_to_one_source():
    assert practice.check("row2-eq-row1", STARTING)["met"] is False
    held = seq.set_mask_cell(STARTING, 1, 1, False)
    held = seq.set_mask_cell(held, 2, 1, False)
    held = seq.set_mask_cell(held, 2, 2, False)
    out = practice.check("row2-eq-row1", held)
    assert out["met"] is True
    assert out["words"].startswith("Row 1 outputs [2, 0] and row 2 outputs [2, 0]: equal.")


def test_row0_masked_prediction_uses_the_causal_mask():
    assert practice.check("row0-masked", STARTING, [2, 0])["met"] is True
    # the unmasked projection's output is not the masked row's
    assert practice.check("row0-masked", STARTING, [-0.004, 0.868])["met"] is False


@pytest.mark.parametrize(
    ("cid", "response", "loc", "message"),
    [
        ("equal-ac", [1, 2], ("response",), "takes no typed response"),
        ("near-vb", None, ("response",), "needs why can the output never reach v_b"),
        ("near-vb", "because", ("response",), "response must be one of positive, scale, length"),
        ("zero-q", [1, 2], ("response",), "response must be a list of 3 numbers"),
        ("zero-q", [1, 2, float("inf")], ("response", 2), r"response\[2\] must be a finite number"),
        ("row0-masked", [True, 0], ("response", 0), r"response\[0\] must be a finite number"),
        ("nope", None, ("challenge",), "challenge 'nope' is not one of"),
    ],
)
def test_bad_responses_are_refused_with_the_field(cid, response, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        practice.check(cid, STARTING, response)
    assert refused.value.loc == loc
