"""Practice challenges: each goal is checked by the engine on the held example."""

from __future__ import annotations

import math

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.notebook import practice


def shown(fb: dict) -> dict:
    """A check's feedback as the page reads it: met, the words' text, load."""
    return {"met": fb["met"], "words": fb["words"]["text"], "load": fb["load"]}


def with_query(q):
    return seq.edit_query(STARTING, q)


def test_at_least_eight_challenges_each_with_tiered_hints():
    cs = practice.challenges()
    assert len(cs) >= 8
    assert len({c["id"] for c in cs}) == len(cs)
    assert set(practice.GOALS) == {c["id"] for c in cs}
    for c in cs:
        assert c["title"] and c["prompt"]
        assert len(c["hints"]) == 3, c["id"]  # nudge, stronger, near-answer
        assert len(set(c["hints"])) == 3


def test_equal_ac_needs_equal_scores():
    miss = practice.check("equal-ac", STARTING)
    assert shown(miss) == {
        "met": False,
        # the gap said is the difference of the two shares shown (it once said 14.4 beside 14% and 28%)
        "words": "A takes 14% and C 28.4%: C is ahead by 14.4 points. Move q so that q meets "
        "A's key as much as C's.",
        "load": False,
    }
    hit = practice.check("equal-ac", with_query([1.5, 1.5]))
    assert hit["met"] is True
    assert "Equal scores give equal shares" in hit["words"]["text"]


def test_near_vb_needs_closeness_and_the_reason():
    far = practice.check("near-vb", STARTING, "positive")
    assert far["met"] is False and "from v_B = [0, 2]" in far["words"]["text"]
    near = with_query([6, -3])
    t = near.explorer_trace()
    assert math.dist(t.output, (0.0, 2.0)) < 0.1
    assert practice.check("near-vb", near, "scale")["met"] is False
    ok = practice.check("near-vb", near, "positive")
    assert ok["met"] is True and "positive" in ok["words"]["text"]


def test_near_vb_says_when_floats_underflow_to_v_b_exactly():
    held = with_query([1000, -1000])
    assert held.explorer_trace().output == (0.0, 2.0)
    out = practice.check("near-vb", held, "positive")
    assert out["met"] is True and "underflowed to exactly 0" in out["words"]["text"]


def test_zero_q_prediction_in_percent():
    assert practice.check("zero-q", STARTING, [33.3, 33.3, 33.4])["met"] is True
    wrong = practice.check("zero-q", STARTING, [14, 58, 28])
    assert shown(wrong) == {
        "met": False,
        "words": "Your share for A is much too low; your share for B is much too high; your share "
        "for C is too low. What is every score q·k when q is the zero vector?",
        "load": False,
    }


def test_wrong_predictions_point_the_way_without_the_right_numbers():
    # the right shares (33.3%) appear only in the answer, never in a wrong check's words
    for guess in ([14, 58, 28], [30, 30, 30], [50, 25, 25], [0, 0, 100]):
        words = practice.check("zero-q", STARTING, guess)["words"]["text"]
        assert "33" not in words, words
    short = practice.check("zero-q", STARTING, [30, 30, 30])["words"]["text"]
    assert short.startswith("Your share for A is too low; your share for B is too low")
    assert "Your shares add up to 90%; shares always add up to 100%." in short
    assert "33.3%" in practice.answer("zero-q", STARTING)["text"]
    # a vector prediction: one coordinate right, the other much too low
    words = practice.check("row0-masked", STARTING, [1, 0])["words"]["text"]
    assert words.startswith("Your x is much too low; your y is right.")
    assert "[2, 0]" not in words
    assert practice.answer("row0-masked", STARTING)["text"] == (
        "Row 0's masked output is [2, 0] (shares A 100%, B blocked, C blocked)."
    )


def test_no_feedback_doubles_the_pages_not_yet():
    # the page writes "Not yet." / "✓ Goal met." in front of the words
    held = seq.set_mask_cell(STARTING, 2, 0, False)
    cases = [
        ("equal-ac", STARTING, None), ("near-vb", STARTING, "scale"), ("zero-q", STARTING, [1, 2, 3]),
        ("double-q", STARTING, "same"), ("block-a-row2", held, [0, 0]), ("same-shares", STARTING, "shift"),
        ("value-moves", STARTING, None), ("row2-eq-row1", STARTING, None), ("row0-masked", STARTING, [0, 0]),
    ]
    for cid, h, response in cases:
        words = practice.check(cid, h, response)["words"]["text"]
        assert not words.startswith(("Not yet", "Right", "Goal met")), (cid, words)


def test_double_q_sharpens_and_tie_changes_nothing():
    out = practice.check("double-q", STARTING, "grows")
    assert shown(out) == {
        "met": True,
        "words": "At q = [2, 1] the largest share is 58%; at 2q it is 77%. "
        "Doubling q doubles the score differences, so softmax sharpens.",
        "load": False,
    }
    wrong = practice.check("double-q", STARTING, "same")
    words = wrong["words"]["text"]
    assert wrong["met"] is False and "77%" not in words and "2q = [4, 2]" in words
    flat = practice.check("double-q", with_query([1, 1]), "grows")
    assert flat["met"] is False and "doubling changes nothing" in flat["words"]["text"]


def test_block_a_row2_requires_the_mask_and_a_good_prediction():
    assert practice.check("block-a-row2", STARTING, [0, 0])["met"] is False
    held = seq.set_mask_cell(STARTING, 2, 0, False)
    out = held.row_trace(2).output
    guess = [round(x, 2) for x in out]
    assert practice.check("block-a-row2", held, guess)["met"] is True
    off = practice.check("block-a-row2", held, [guess[0] + 0.05, guess[1]])
    assert off["met"] is False
    assert off["words"]["text"].startswith("Your x is too high; your y is right.")
    assert fmt.rounded(out[0]) not in off["words"]["text"]


def test_same_shares_is_solvable_and_teaches_the_shift():
    # the new challenge (it replaced a second tie task): another q with the shares of [2, 1]
    ref = STARTING.explorer_trace()
    assert practice.check("same-shares", STARTING, "shift")["words"]["text"].startswith(
        "Your q [2, 1] is within 0.5 of [2, 1]"
    )
    moved = practice.check("same-shares", with_query([3, 1]), "shift")
    assert shown(moved) == {
        "met": False,
        "words": "At q = [3, 1], A's share is lower, B's share is higher and C's share is lower "
        "than at [2, 1]. Look for a step that changes every score by the same amount.",
        "load": False,
    }
    solved = with_query([3.5, 2.5])  # [2, 1] + 1.5 [1, 1]
    t = solved.explorer_trace()
    assert max(abs(a - b) for a, b in zip(t.weights, ref.weights)) < 1e-12
    assert practice.check("same-shares", solved, "scores")["met"] is False
    ok = practice.check("same-shares", solved, "shift")
    assert ok["met"] is True
    assert ok["words"]["text"] == (
        "At q = [3.5, 2.5] the shares are A 14%, B 58%, C 28%, as at [2, 1]: every score rose "
        "by 1.061, and softmax only sees the differences."
    )
    # the answer's q solves it
    words = practice.answer("same-shares", STARTING)["text"]
    assert words.startswith("q = [3, 2]: the step [1, 1] adds 0.707")
    assert practice.check("same-shares", with_query([3, 2]), "shift")["met"] is True


def test_same_shares_needs_the_worked_keys():
    keys = seq.held_from_dict({**STARTING.to_dict(), "keys": [[1, 0], [0, 1], [1, 1]]})
    out = practice.check("same-shares", keys, "shift")
    assert out["met"] is False and out["load"] is True
    assert out["words"]["text"].startswith(
        "This challenge needs the worked example's keys ([-1, 2], [1, 0], [0, 1])"
    )


def test_an_example_with_other_sources_is_offered_the_worked_one():
    xyz = seq.held_from_dict({**STARTING.to_dict(), "labels": ["X", "Y", "Z"]})
    for c in practice.challenges():
        if c.get("by_role"):  # the explorer's live challenge names its source by position
            continue
        form = c["response"]
        response = None if form is None else (
            form["options"][0]["id"] if form["type"] == "choice" else [0.0] * form["size"]
        )
        out = practice.check(c["id"], xyz, response)
        assert shown(out) == {
            "met": False,
            "words": "This challenge is written for the worked example's sources A, B, C; yours "
            "are X, Y, Z. Load the A/B/C example to try it.",
            "load": True,
        }, c["id"]
        assert practice.answer(c["id"], xyz)["text"] == out["words"]["text"]


def test_every_answer_solves_its_challenge_where_it_names_a_q():
    # the answer's own q meets the goal (equal-ac: nearest tie; near-vb: [6, -3])
    words = practice.answer("equal-ac", STARTING)["text"]
    assert words.startswith("A and C tie wherever q·k_A = q·k_C. The nearest such q to yours is [1.5, 1.5]")
    assert practice.check("equal-ac", with_query([1.5, 1.5]))["met"] is True
    assert practice.check("near-vb", with_query([6, -3]), "positive")["met"] is True
    # A (0.0003%) would read 0% in whole percents and in tenths: the set is in hundredths, A <0.01%
    assert "B takes 99.83%" in practice.answer("near-vb", STARTING)["text"]


def test_value_moves_output_but_not_shares():
    assert practice.check("value-moves", STARTING)["met"] is False
    held = seq.edit_value(STARTING, 2, 1, 3.0)
    out = practice.check("value-moves", held)
    assert out["met"] is True
    assert "shares stayed A 14%, B 58%, C 28%" in out["words"]["text"]


def test_row2_equal_row1_by_masking_to_one_source():
    assert practice.check("row2-eq-row1", STARTING)["met"] is False
    held = seq.set_mask_cell(STARTING, 1, 1, False)
    held = seq.set_mask_cell(held, 2, 1, False)
    held = seq.set_mask_cell(held, 2, 2, False)
    out = practice.check("row2-eq-row1", held)
    assert out["met"] is True
    assert out["words"]["text"].startswith("Row 1 outputs [2, 0] and row 2 outputs [2, 0]: equal.")


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
        ("nope", None, ("challenge",), "challenge 'nope' is not a challenge; the challenges are"),
    ],
)
def test_bad_responses_are_refused_with_the_field(cid, response, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        practice.check(cid, STARTING, response)
    assert refused.value.loc == loc


def test_the_challenges_quote_the_worked_example_declared_once():
    # the vectors the words quote are filled in from lab.explorer.examples, never typed into the data
    from attnlab.lab.explorer.examples import WORKED_SEQUENCE

    ex = WORKED_SEQUENCE.example
    hints = {c["id"]: c["hints"] for c in practice.challenges()}
    prompts = {c["id"]: c["prompt"] for c in practice.challenges()}
    assert hints["same-shares"][2] == (
        "With k_A = [−1, 2], k_B = [1, 0] and k_C = [0, 1], the step u = [1, 1] adds 1/√2 to every score: "
        "q = [3, 2] gives the shares of q = [2, 1]."
    )
    fills = dict(practice.worked_fills())
    assert fills["k_B"] == fmt.vector(ex.keys[1]) and fills["q"] == fmt.vector(ex.q)
    assert fills["q_C"] == fmt.vector(WORKED_SEQUENCE.queries[2]).replace("-", fmt.MINUS)
    assert f"from q = {fills['q']} that gives" in prompts["same-shares"]
    for c in practice.challenges():
        for text in [c["prompt"], *c["hints"]]:
            assert "{" not in text and "}" not in text, text
