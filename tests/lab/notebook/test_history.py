"""Attempts and the study history: each attempt keeps its own feedback and help."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.notebook import export, practice
from attnlab.lab.notebook import history as hist


def run(study, *actions, held=STARTING):
    for a in actions:
        study = hist.apply(study, a, held)
    return study


def helps(study, cid, n):
    return study["challenges"][cid]["attempts"][n]["help"]


def test_help_before_any_attempt_is_listed_first():
    s = run(hist.new_study(), {"kind": "help", "help": "playback"})
    assert s["before"] == [{"kind": "playback", "detail": None}]
    assert hist.history(s) == [
        {"heading": "Before any attempt", "challenge": None, "attempt": None, "checks": [],
         "help": ["Watched the guided playback"]}
    ]


def test_a_detour_counts_for_the_attempt_you_leave():
    s = run(
        hist.new_study(),
        {"kind": "open", "challenge": "zero-q"},
        {"kind": "help", "help": "stepper", "detail": 2},
        {"kind": "help", "help": "python"},
        {"kind": "submit", "challenge": "equal-ac", "response": None},
        {"kind": "help", "help": "playback"},
    )
    assert helps(s, "zero-q", 0) == [
        {"kind": "stepper", "detail": 2}, {"kind": "python", "detail": None}
    ]
    assert helps(s, "equal-ac", 0) == [{"kind": "playback", "detail": None}]
    assert s["before"] == []


def test_hints_go_to_their_challenge_and_are_recorded_once_per_attempt():
    s = run(
        hist.new_study(),
        {"kind": "open", "challenge": "zero-q"},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "near-vb"},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "near-vb"},
        {"kind": "help", "help": "hint", "detail": 2, "challenge": "near-vb"},
    )
    assert helps(s, "near-vb", 0) == [{"kind": "hint", "detail": 1}, {"kind": "hint", "detail": 2}]
    assert helps(s, "zero-q", 0) == []
    assert s["active"] == {"challenge": "near-vb", "attempt": 0}


def test_attempts_keep_their_own_feedback_and_help():
    s = run(
        hist.new_study(),
        {"kind": "submit", "challenge": "zero-q", "response": [10, 10, 80]},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"},
        {"kind": "retry", "challenge": "zero-q"},
        {"kind": "help", "help": "every-number"},
        {"kind": "submit", "challenge": "zero-q", "response": [33, 33, 34]},
    )
    first, second = s["challenges"]["zero-q"]["attempts"]
    assert first["feedback"]["met"] is False and first["response"] == [10, 10, 80]
    assert first["help"] == [{"kind": "hint", "detail": 1}]
    assert second["feedback"]["met"] is True
    assert second["help"] == [{"kind": "every-number", "detail": None}]
    # move back to attempt 1: its own response and feedback are still there
    back = run(s, {"kind": "goto", "challenge": "zero-q", "attempt": 0})
    assert back["challenges"]["zero-q"]["current"] == 0
    assert back["active"] == {"challenge": "zero-q", "attempt": 0}
    assert back["challenges"]["zero-q"]["attempts"][0] == first
    groups = hist.history(back)
    assert [(g["heading"], g["help"]) for g in groups] == [
        ("Predict the shares at q = [0, 0] · attempt 1", ["Opened hint 1 of 3"]),
        ("Predict the shares at q = [0, 0] · attempt 2",
         ["Opened “Show every number, the formula and the Python”"]),
    ]


def test_clearing_a_response_keeps_the_help_history():
    s = run(
        hist.new_study(),
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "row0-masked"},
        {"kind": "submit", "challenge": "row0-masked", "response": [2, 0]},
        {"kind": "clear", "challenge": "row0-masked"},
    )
    a = s["challenges"]["row0-masked"]["attempts"][0]
    assert a == {
        "response": None,
        "feedback": None,
        "help": [{"kind": "hint", "detail": 1}],
        "checks": [{"response": [2, 0], "met": True}],
        "answer": None,
    }


def test_every_check_is_recorded_right_or_wrong_with_its_hints_and_answer():
    s = run(
        hist.new_study(),
        {"kind": "submit", "challenge": "zero-q", "response": [10, 10, 80]},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"},
        {"kind": "submit", "challenge": "zero-q", "response": [30, 30, 40]},
        {"kind": "help", "help": "answer", "challenge": "zero-q"},
        {"kind": "submit", "challenge": "zero-q", "response": [33.3, 33.3, 33.4]},
        {"kind": "submit", "challenge": "double-q", "response": "grows"},
        {"kind": "submit", "challenge": "value-moves"},
    )
    a = s["challenges"]["zero-q"]["attempts"][0]
    assert a["checks"] == [
        {"response": [10, 10, 80], "met": False},
        {"response": [30, 30, 40], "met": False},
        {"response": [33.3, 33.3, 33.4], "met": True},
    ]
    assert a["help"] == [{"kind": "hint", "detail": 1}, {"kind": "answer", "detail": None}]
    assert a["answer"] == (
        "At q = [0, 0] every score is 0, so softmax splits evenly: A 33.4%, B 33.3%, C 33.3% (rounded to "
        "add up to 100)."
    )
    groups = {g["challenge"]: g for g in hist.history(s)}
    assert groups["zero-q"]["checks"] == [
        {"label": "Check 1 · [10, 10, 80] % · not yet", "met": False},
        {"label": "Check 2 · [30, 30, 40] % · not yet", "met": False},
        {"label": "Check 3 · [33.3, 33.3, 33.4] % · right", "met": True},
    ]
    assert groups["zero-q"]["help"] == ["Opened hint 1 of 3", "Showed the answer"]
    assert groups["double-q"]["checks"] == [{"label": "Check 1 · “grows” · right", "met": True}]
    assert groups["value-moves"]["checks"] == [
        {"label": "Check 1 · the example as it was · not yet", "met": False}
    ]
    # the study (checks, help, answers) survives validation unchanged, as an import reads it
    assert hist.study_from_dict(s) == s


def test_a_check_the_example_cannot_try_is_not_recorded():
    xyz = seq.held_from_dict({**STARTING.to_dict(), "labels": ["X", "Y", "Z"]})
    s = hist.apply(hist.new_study(), {"kind": "submit", "challenge": "equal-ac"}, xyz)
    a = s["challenges"]["equal-ac"]["attempts"][0]
    assert a["feedback"]["load"] is True and a["checks"] == []


def test_submit_checks_the_held_example_it_is_given():
    held = seq.edit_query(STARTING, [1, 1])
    s = hist.apply(hist.new_study(), {"kind": "submit", "challenge": "equal-ac"}, held)
    assert s["challenges"]["equal-ac"]["attempts"][0]["feedback"]["met"] is True
    s = hist.apply(s, {"kind": "submit", "challenge": "equal-ac"}, STARTING)
    assert s["challenges"]["equal-ac"]["attempts"][0]["feedback"]["met"] is False


def test_a_detail_is_kept_only_where_it_says_which_hint_or_step():
    s = run(
        hist.new_study(),
        {"kind": "help", "help": "python", "detail": 2},
        {"kind": "help", "help": "python", "detail": 3},
        {"kind": "help", "help": "stepper", "detail": 3},
    )
    # one "python" record, not two that differ by a number its label never shows
    assert s["before"] == [{"kind": "python", "detail": None}, {"kind": "stepper", "detail": 3}]
    assert hist.history(s)[0]["help"] == [
        "Opened “Read the same calculation in Python”", "Visited the stepper: step 3 of 4"
    ]


def test_apply_does_not_mutate_its_input():
    s = hist.new_study()
    hist.apply(s, {"kind": "open", "challenge": "zero-q"}, STARTING)
    assert s == hist.new_study()


def test_study_round_trips_through_validation():
    s = run(
        hist.new_study(),
        {"kind": "help", "help": "geometry"},
        {"kind": "submit", "challenge": "near-vb", "response": "positive"},
        {"kind": "retry", "challenge": "near-vb"},
    )
    assert hist.study_from_dict(s) == s


@pytest.mark.parametrize(
    ("action", "loc", "message"),
    [
        ({"kind": "dance"}, ("action", "kind"), "^action.kind must be one of open, submit"),
        ({"kind": "help", "help": "cheat"}, ("action", "help"),
         "^action.help must be one of hint, answer, playback"),
        ({"kind": "help", "help": "hint", "detail": 4, "challenge": "zero-q"}, ("action", "detail"),
         "^action.detail is past the last hint: challenge zero-q has 3 hints"),
        ({"kind": "help", "help": "stepper"}, ("action", "detail"), "^action.detail is needed for stepper"),
        ({"kind": "goto", "challenge": "zero-q", "attempt": 1}, ("action", "attempt"),
         "^action.attempt must be 0 to 0"),
        ({"kind": "submit", "challenge": "zero-q", "response": "x"}, ("action", "response"),
         "^action.response must be a list of 3 numbers"),
        ({"kind": "submit", "challenge": "zero-q", "response": [1, 2, None]}, ("action", "response", 2),
         r"^action.response\[2\] must be a finite number"),
        ({"kind": "open", "challenge": "zzz"}, ("action", "challenge"),
         "^action.challenge 'zzz' is not a challenge; the challenges are"),
    ],
)
def test_bad_actions_are_refused(action, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        hist.apply(hist.new_study(), action, STARTING)
    assert refused.value.loc == loc


@pytest.mark.parametrize(
    ("study", "loc", "message"),
    [
        ({"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": [
            {"checks": [{"response": [1, 2, 3], "met": "yes"}]}]}}},
         ("study", "challenges", "zero-q", "attempts", 0, "checks", 0, "met"),
         r"checks\[0\].met must be true or false"),
        ({"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": [
            {"checks": [{"response": [1, 2], "met": True}]}]}}},
         ("study", "challenges", "zero-q", "attempts", 0, "checks", 0, "response"),
         "response must be a list of 3 numbers"),
        ({"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": [{"answer": 5}]}}},
         ("study", "challenges", "zero-q", "attempts", 0, "answer"), "answer must be text"),
        ({"version": 2}, ("study",), "study must be an object with version 1"),
        ({"version": 1, "before": [{"kind": "x"}]}, ("study", "before", 0, "kind"),
         r"study.before\[0\].kind must be one of"),
        ({"version": 1, "challenges": {"zero-q": {"current": 1, "attempts": [{}]}}},
         ("study", "challenges", "zero-q", "current"), "current is 1; there are 1 attempts"),
        ({"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": []}}},
         ("study", "challenges", "zero-q", "attempts"), "attempts must be a list of 1 to 50"),
        ({"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": [{"response": [1]}]}}},
         ("study", "challenges", "zero-q", "attempts", 0, "response"),
         r"^study.challenges.zero-q.attempts\[0\].response must be a list of 3 numbers"),
        ({"version": 1, "challenges": {"zzz": {"current": 0, "attempts": [{}]}}},
         ("study", "challenges", "zzz"),
         "^study.challenges.zzz 'zzz' is not a challenge; the challenges are"),
        ({"version": 1, "active": {"challenge": "zero-q", "attempt": 0}}, ("study", "active"),
         "study.active names no challenge"),
    ],
)
def test_bad_studies_are_refused(study, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        hist.study_from_dict(study)
    assert refused.value.loc == loc


CIDS = ["zero-q", "row0-masked", "equal-ac"]
actions = st.one_of(
    st.builds(lambda c: {"kind": "open", "challenge": c}, st.sampled_from(CIDS)),
    st.builds(lambda c: {"kind": "clear", "challenge": c}, st.sampled_from(CIDS)),
    st.builds(lambda c: {"kind": "retry", "challenge": c}, st.sampled_from(CIDS)),
    st.builds(lambda c, n: {"kind": "goto", "challenge": c, "attempt": n},
              st.sampled_from(CIDS), st.integers(0, 3)),
    st.builds(lambda k, d: {"kind": "help", "help": k, "detail": d},
              st.sampled_from(["playback", "python", "precise"]), st.none()),
    st.builds(lambda d: {"kind": "help", "help": "stepper", "detail": d}, st.integers(1, 4)),
    st.builds(lambda c, d: {"kind": "help", "help": "hint", "detail": d, "challenge": c},
              st.sampled_from(CIDS), st.integers(1, 3)),
    st.just({"kind": "submit", "challenge": "zero-q", "response": [33, 33, 34]}),
)


def all_help(study):
    out = list(study["before"])
    for entry in study["challenges"].values():
        for a in entry["attempts"]:
            out += a["help"]
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(actions, max_size=25))
def test_help_is_never_lost_or_doubled(sequence):
    study = hist.new_study()
    for action in sequence:
        before = all_help(study)
        try:
            after_study = hist.apply(study, action, STARTING)
        except ValueError:
            continue  # e.g. goto an attempt that does not exist: refused, nothing changed
        after = all_help(after_study)
        # help is only ever added (clear, retry and goto keep it), one record at most,
        # and never twice in one attempt
        count = Counter((h["kind"], h["detail"]) for h in after)
        count.subtract((h["kind"], h["detail"]) for h in before)
        assert all(n >= 0 for n in count.values())
        assert len(after) - len(before) in (0, 1)
        for entry in after_study["challenges"].values():
            for a in entry["attempts"]:
                assert len({(h["kind"], h["detail"]) for h in a["help"]}) == len(a["help"])
        assert hist.study_from_dict(after_study) == after_study
        study = after_study


# --- feedback with claims; an older study's text-only feedback ---------------------

# The "study" of a JSON export made before feedback carried claims (its words are text).
OLD_STUDY = {
    "version": 1,
    "active": {"challenge": "zero-q", "attempt": 1},
    "before": [{"kind": "playback", "detail": None}],
    "challenges": {
        "zero-q": {
            "current": 1,
            "attempts": [
                {
                    "response": [10, 10, 80],
                    "feedback": {
                        "met": False,
                        "words": "Your share for A is much too low; your share for B is much too low; "
                        "your share for C is much too high. What is every score q·k when q is the "
                        "zero vector?",
                        "load": False,
                    },
                    "help": [{"kind": "hint", "detail": 1}],
                    "checks": [{"response": [10, 10, 80], "met": False}],
                    "answer": None,
                },
                {
                    "response": [33.3, 33.3, 33.4],
                    "feedback": {
                        "met": True,
                        "words": "At q = [0, 0] every score is 0, so the shares are A 33.3%, B 33.3%, "
                        "C 33.3%.",
                        "load": False,
                    },
                    "help": [],
                    "checks": [{"response": [33.3, 33.3, 33.4], "met": True}],
                    "answer": None,
                },
            ],
        }
    },
}


def test_an_older_study_with_text_only_feedback_still_imports():
    doc = export.to_json(STARTING, hist.new_study())
    doc["study"] = OLD_STUDY
    held, study = export.read(json.dumps(doc))
    assert held == STARTING
    first, second = study["challenges"]["zero-q"]["attempts"]
    assert first["feedback"] == {
        "met": False,
        "verdict": {"text": "Not yet.", "claims": {"met": False}},
        "words": {"text": OLD_STUDY["challenges"]["zero-q"]["attempts"][0]["feedback"]["words"],
                  "claims": {}},
        "load": False,
    }
    assert second["feedback"]["verdict"]["text"] == "✓ Goal met."
    assert first["checks"] == [{"response": [10, 10, 80], "met": False}]
    assert hist.study_from_dict(study) == study  # the new shape reads back as itself
    # the page can go on with it: a new check stores the new shape beside the old
    more = hist.apply(study, {"kind": "submit", "challenge": "zero-q", "response": [20, 30, 50]}, STARTING)
    words = more["challenges"]["zero-q"]["attempts"][1]["feedback"]["words"]
    assert words["claims"]["met"] is False and words["claims"]["directions"]["A"] == "much too low"


def test_a_check_stores_its_sentence_with_claims_and_the_verdict():
    s = run(hist.new_study(), {"kind": "submit", "challenge": "equal-ac"})
    fb = s["challenges"]["equal-ac"]["attempts"][0]["feedback"]
    assert fb == practice.check("equal-ac", STARTING)
    assert fb["verdict"] == {"text": "Not yet.", "claims": {"met": False}}
    assert fb["words"]["claims"]["ahead"] == "C"
    assert hist.study_from_dict(s) == s


@pytest.mark.parametrize(
    "words",
    [
        None,
        7,
        {"text": "Fine."},
        {"text": "Fine.", "claims": [], },
        {"text": "x" * 2001, "claims": {}},
        {"text": "Fine.", "claims": {"share": float("nan")}},
        {"text": "Fine.", "claims": {"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}}},
        {"text": "Fine.", "claims": {}, "more": 1},
    ],
)
def test_a_malformed_feedback_sentence_is_refused_at_its_field(words):
    study = {"version": 1, "challenges": {"equal-ac": {"current": 0, "attempts": [
        {"feedback": {"met": True, "words": words}}]}}}
    with pytest.raises(FieldError) as err:
        hist.study_from_dict(study)
    assert err.value.loc == ("study", "challenges", "equal-ac", "attempts", 0, "feedback", "words")


def test_each_attempts_group_carries_its_panels_words():
    s = run(
        hist.new_study(),
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"},
        {"kind": "help", "help": "hint", "detail": 2, "challenge": "zero-q"},
        {"kind": "retry", "challenge": "zero-q"},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"},
        {"kind": "help", "help": "hint", "detail": 2, "challenge": "zero-q"},
        {"kind": "help", "help": "hint", "detail": 3, "challenge": "zero-q"},
    )
    first, second = [g for g in hist.history(s) if g["challenge"] == "zero-q"]
    assert first["panel"] == {
        "attempt": {"text": "Attempt 1 of 2", "claims": {"attempt": 1, "attempts": 2}},
        "hint": {"text": "Show hint 3 of 3", "claims": {"hint": 3, "hints": 3}},
    }
    assert second["panel"]["attempt"]["text"] == "Attempt 2 of 2"
    assert second["panel"]["hint"] is None  # every hint is shown
    fresh = next(c for c in practice.challenges() if c["id"] == "zero-q")["panel"]
    assert fresh["attempt"]["text"] == "Attempt 1 of 1" and fresh["hint"]["text"] == "Show hint 1 of 3"
