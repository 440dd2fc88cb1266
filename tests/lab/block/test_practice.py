"""The block's challenges: each met by a real solution, not met by the given block, words without answers."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.block import history as hist
from attnlab.lab.block import practice
from attnlab.lab.block.data import given_weights, given_x
from attnlab.lab.block.page import block_page


def state(**kw):
    return {"x": None, "weights": None, "norm": "pre", "positions": "none", "heads_on": (True, True)} | kw


def test_at_least_five_challenges_with_three_tiered_hints_and_an_answer():
    cs = practice.challenges()
    assert len(cs) >= 5
    for c in cs:
        assert len(c["hints"]) == 3 and "answer" not in c
        assert practice.answer(c["id"])


def test_head2_previous():
    """Met when head 2 is a previous-token head by the real models' definition (lab.realmodel.kinds)."""
    fb = practice.check("head2-previous", state())
    assert not fb["met"] and fb["words"]["claims"]["kind"] == "self"
    assert fb["words"]["text"].startswith(
        "Head 2 is a self head: on average 11% of B's and C's attention goes to the token just before, "
        "and a previous-token head needs 50% or more."
    )
    w = given_weights()
    w["heads"][1]["w_q"] = w["heads"][0]["w_q"]
    w["heads"][1]["w_k"] = w["heads"][0]["w_k"]
    fb = practice.check("head2-previous", state(weights=w))
    assert fb["met"], fb["words"]["text"]
    assert "B gives A 94%" in fb["words"]["text"]
    assert fb["words"]["claims"]["kind"] == "previous-token" and fb["words"]["claims"]["previous"] >= 0.5
    # the page's head card names head 2 the same way
    assert block_page(weights=w)["heads"][1]["kind"] == "previous-token"


def test_silent_head_needs_the_weights_not_the_switch():
    fb = practice.check("silent-head", state(), "head-1")
    assert not fb["met"] and "0.762" in fb["words"]["text"]
    assert not practice.check("silent-head", state(heads_on=(False, True)), "head-1")["met"]
    w = given_weights()
    w["w_o"][2] = [0.0] * 4
    w["w_o"][3] = [0.0] * 4
    assert practice.check("silent-head", state(weights=w), "head-2")["met"]
    assert not practice.check("silent-head", state(weights=w), "head-1")["met"]


def test_ln_stats_gives_the_direction_not_the_answer():
    fb = practice.check("ln-stats", state(), [0.0, 2.0])
    assert (
        not fb["met"]
        and "variance is too high" in fb["words"]["text"]
        and "mean" not in fb["words"]["text"][:20]
    )
    assert "too low" in practice.check("ln-stats", state(), [-1.0, 1.0])["words"]["text"]
    assert practice.check("ln-stats", state(), [0.0, 1.0])["met"]


def test_scale_x10_is_decided_by_the_numbers():
    assert practice.check("scale-x10", state(), "pre")["met"]
    for wrong in ("post", "both", "neither"):
        fb = practice.check("scale-x10", state(), wrong)
        assert not fb["met"] and "pre-norm" not in fb["words"]["text"]
    with pytest.raises(FieldError) as err:
        practice.check("scale-x10", state(x=[[500.0, 0, 0, 0]] * 3), "pre")
    assert err.value.loc == ("block", "x")


def test_residual_dominates():
    fb = practice.check("residual-dominates", state())
    assert not fb["met"] and "token" in fb["words"]["text"]
    w = given_weights()
    w["w_o"] = [[v * 0.1 for v in row] for row in w["w_o"]]
    assert practice.check("residual-dominates", state(weights=w))["met"]
    big = [[20.0 * v for v in row] for row in given_x()]
    assert practice.check("residual-dominates", state(x=big))["met"]  # pre-norm: LN undoes the size


def test_bad_responses_name_the_field():
    with pytest.raises(FieldError) as err:
        practice.check("silent-head", state(), "head-3")
    assert err.value.loc == ("response",)
    with pytest.raises(FieldError) as err:
        practice.check("ln-stats", state(), [0.0, float("nan")])
    assert err.value.loc == ("response", 1)
    with pytest.raises(FieldError) as err:
        practice.check("ln-stats", state(norm="sideways"), [0.0, 1.0])
    assert err.value.loc == ("block", "norm")


def test_study_records_hints_answers_and_attempts_in_historys_shape():
    s = hist.new_study()
    s, _ = hist.apply(s, {"kind": "help", "help": "stepper", "detail": 3}, state())
    assert s["before"] == [{"kind": "stepper", "detail": 3}]
    s, _ = hist.apply(s, {"kind": "submit", "challenge": "ln-stats", "response": [0.5, 1.0]}, state())
    s, ans = hist.apply(s, {"kind": "help", "help": "answer", "challenge": "ln-stats"}, state())
    assert ans == practice.answer("ln-stats")
    s, _ = hist.apply(s, {"kind": "retry", "challenge": "ln-stats"}, state())
    s, _ = hist.apply(s, {"kind": "submit", "challenge": "ln-stats", "response": [0.0, 1.0]}, state())
    attempts = s["challenges"]["ln-stats"]["attempts"]
    assert attempts[0]["help"] == [{"kind": "answer", "detail": None}] and not attempts[0]["feedback"]["met"]
    assert attempts[1]["help"] == [] and attempts[1]["feedback"]["met"]
    assert hist.study_from_dict(s) == s  # round-trips through validation
    groups = hist.history(s)
    assert groups[0]["help"] == ["Visited the block stepper: step 3 of 8"]
    assert [g["help"] for g in groups[1:]] == [["Showed the answer"], ["No help used"]]


def test_study_validation_names_the_field():
    with pytest.raises(FieldError) as err:
        hist.study_from_dict({"version": 1, "challenges": {"nope": {}}})
    assert err.value.loc == ("study", "challenges", "nope")
    with pytest.raises(FieldError) as err:
        hist.apply(
            hist.new_study(), {"kind": "help", "help": "hint", "detail": 4, "challenge": "ln-stats"}, state()
        )
    assert err.value.loc == ("action", "detail")


def test_block_attempts_keep_no_checks_and_the_block_field_errors_stay_the_blocks():
    submit = {"kind": "submit", "challenge": "ln-stats", "response": [0.0, 1.0]}
    s, _ = hist.apply(hist.new_study(), submit, state())
    attempt = s["challenges"]["ln-stats"]["attempts"][0]
    assert set(attempt) == {"response", "feedback", "help"}
    assert attempt["feedback"] == practice.check("ln-stats", state(), [0.0, 1.0])
    assert attempt["feedback"]["met"]
    assert all("checks" not in g for g in hist.history(s))
    with pytest.raises(FieldError, match=r"^block.norm") as err:
        hist.apply(s, submit, state(norm="x"))
    assert err.value.loc == ("block", "norm")
    with pytest.raises(FieldError, match=r"^action.response\[1\] must be a finite number") as err:
        hist.apply(s, {"kind": "submit", "challenge": "ln-stats", "response": [0.0, None]}, state())
    assert err.value.loc == ("action", "response", 1)


@pytest.mark.parametrize(
    ("study", "loc", "message"),
    [
        ({"version": 1, "challenges": {"ln-stats": {"current": 1, "attempts": [{}]}}},
         ("study", "challenges", "ln-stats", "current"), "^study.challenges.ln-stats.current is 1; there"),
        ({"version": 1, "challenges": {"ln-stats": {"current": 0, "attempts": []}}},
         ("study", "challenges", "ln-stats", "attempts"), "attempts must be a list of 1 to 50 attempts"),
        ({"version": 1, "challenges": {"ln-stats": {"current": 0, "attempts": [{"response": [1.0]}]}}},
         ("study", "challenges", "ln-stats", "attempts", 0, "response"), "response must be a list of 2 "),
        ({"version": 1, "before": [{"kind": "stepper", "detail": 9}]}, ("study", "before", 0, "detail"),
         r"^study.before\[0\].detail is 9; it must be 1 to 8"),
        ({"version": 1, "before": [{"kind": "geometry"}]}, ("study", "before", 0, "kind"),
         r"^study.before\[0\].kind must be one of hint, answer, stepper, playback, python, explorer"),
    ],
)
def test_bad_block_studies_name_the_field(study, loc, message):
    with pytest.raises(FieldError, match=message) as err:
        hist.study_from_dict(study)
    assert err.value.loc == loc


def test_goto_names_the_attempts_there_are():
    with pytest.raises(FieldError, match="^action.attempt must be 0 to 0 for challenge silent-head") as err:
        hist.apply(hist.new_study(), {"kind": "goto", "challenge": "silent-head", "attempt": 2}, state())
    assert err.value.loc == ("action", "attempt")


def test_no_feedback_doubles_the_verdict():
    # the verdict ("✓ Goal met." / "Not yet.") is its own sentence; the words do not repeat it
    w = given_weights()
    w["w_o"] = [[v * 0.1 for v in row] for row in w["w_o"]]
    cases = [
        ("head2-previous", state(), None),
        ("silent-head", state(), "head-1"),
        ("ln-stats", state(), [0.0, 2.0]),
        ("ln-stats", state(), [0.0, 1.0]),
        ("scale-x10", state(), "pre"),
        ("scale-x10", state(), "post"),
        ("residual-dominates", state(), None),
        ("residual-dominates", state(weights=w), None),
    ]
    for cid, s, response in cases:
        fb = practice.check(cid, s, response)
        verdict = "✓ Goal met." if fb["met"] else "Not yet."
        assert fb["verdict"] == {"text": verdict, "claims": {"met": fb["met"]}}
        assert not fb["words"]["text"].startswith(("Not yet", "Right", "Done", "Goal met")), (cid, fb)
        assert fb["words"]["claims"]["met"] is fb["met"]


# A block study kept before feedback carried claims: its words are text.
OLD_BLOCK_STUDY = {
    "version": 1,
    "active": {"challenge": "ln-stats", "attempt": 0},
    "before": [],
    "challenges": {
        "ln-stats": {
            "current": 0,
            "attempts": [
                {
                    "response": [0.0, 2.0],
                    "feedback": {
                        "met": False,
                        "words": "Not yet: your variance is too high. Think about what each step of "
                        "LayerNorm leaves.",
                    },
                    "help": [{"kind": "hint", "detail": 1}],
                }
            ],
        }
    },
}


def test_an_older_block_study_with_text_only_feedback_still_reads():
    study = hist.study_from_dict(OLD_BLOCK_STUDY)
    fb = study["challenges"]["ln-stats"]["attempts"][0]["feedback"]
    assert fb == {
        "met": False,
        "verdict": {"text": "Not yet.", "claims": {"met": False}},
        "words": {"text": OLD_BLOCK_STUDY["challenges"]["ln-stats"]["attempts"][0]["feedback"]["words"],
                  "claims": {}},
    }
    assert hist.study_from_dict(study) == study


def test_the_block_history_says_each_attempts_last_check_and_its_panel():
    s, _ = hist.apply(hist.new_study(), {"kind": "open", "challenge": "ln-stats"}, state())
    assert hist.history(s)[0]["checked"] is None  # no check yet
    s, _ = hist.apply(s, {"kind": "submit", "challenge": "ln-stats", "response": [0.0, 2.0]}, state())
    s, _ = hist.apply(s, {"kind": "retry", "challenge": "ln-stats"}, state())
    s, _ = hist.apply(s, {"kind": "submit", "challenge": "ln-stats", "response": [0.0, 1.0]}, state())
    first, second = hist.history(s)
    assert first["checked"] == {"text": "Checked: not yet", "claims": {"met": False}}
    assert second["checked"] == {"text": "✓ Checked: goal met", "claims": {"met": True}}
    assert first["panel"]["attempt"]["text"] == "Attempt 1 of 2"
    assert second["panel"]["hint"]["text"] == "Show hint 1 of 3"
