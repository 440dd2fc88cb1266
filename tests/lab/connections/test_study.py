"""Practice in a lab: the study record kept by lab.study's rules, checked on the learner's input."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.connections.controls import ControlError
from attnlab.lab.connections.study import HELP_KINDS, apply, history

NEW = {"version": 1}


def test_a_submit_is_checked_on_the_inputs_and_recorded():
    out = apply("flash", {"n": 16, "window": 4}, NEW, {"kind": "submit", "challenge": "window-four"})
    attempt = out["study"]["challenges"]["window-four"]["attempts"][0]
    assert attempt["feedback"]["met"] is True and out["answer"] is None
    (group,) = out["history"]
    assert group["heading"] == "A window that spares four rows · attempt 1"
    assert group["checked"] == {"text": "✓ Checked: goal met", "claims": {"met": True}}
    again = apply(
        "flash", {"n": 16, "window": 5}, out["study"], {"kind": "submit", "challenge": "window-four"}
    )
    assert again["study"]["challenges"]["window-four"]["attempts"][0]["feedback"]["met"] is False


def test_help_the_answer_and_detours():
    out = apply("ssm", {}, NEW, {"kind": "help", "help": "numbers"})
    assert out["history"][0] == {
        "heading": "Before any attempt",
        "challenge": None,
        "attempt": None,
        "checks": [],
        "help": [HELP_KINDS["numbers"]],
    }
    out = apply("ssm", {}, out["study"], {"kind": "help", "help": "answer", "challenge": "state-size"})
    assert out["answer"].startswith("20:")
    assert history("ssm", out["study"])[1]["help"] == ["Showed the answer"]


def test_errors_are_located_in_the_request():
    with pytest.raises(ControlError) as err:
        apply("flash", {"n": 2}, NEW, {"kind": "open", "challenge": "tile-sizes"})
    assert err.value.loc == ("inputs", "n")
    with pytest.raises(FieldError) as err:
        apply("flash", {}, NEW, {"kind": "submit", "challenge": "tile-sizes", "response": "maybe"})
    assert err.value.loc == ("action", "response")
    with pytest.raises(FieldError) as err:
        apply("flash", {}, {"version": 2}, {"kind": "open", "challenge": "tile-sizes"})
    assert err.value.loc == ("study",)


def test_the_two_wrong_tries_before_a_right_one_are_kept():
    """A teacher reading the history sees the struggle: every check of the attempt, right or not yet."""
    study = NEW
    for response in ("keys", "grows", "rounding"):
        action = {"kind": "submit", "challenge": "tile-sizes", "response": response}
        study = apply("flash", {"n": 16, "tile": 4}, study, action)["study"]
    attempt = study["challenges"]["tile-sizes"]["attempts"][0]
    assert attempt["checks"] == [
        {"response": "keys", "met": False},
        {"response": "grows", "met": False},
        {"response": "rounding", "met": True},
    ]
    (group,) = history("flash", study)
    assert [c["label"] for c in group["checks"]] == [
        "Check 1 · “keys” · not yet",
        "Check 2 · “grows” · not yet",
        "Check 3 · “rounding” · right",
    ]
    assert group["checked"] == {"text": "✓ Checked: goal met", "claims": {"met": True}}
    assert apply("flash", {}, study, {"kind": "open", "challenge": "tile-sizes"})["study"] == study
