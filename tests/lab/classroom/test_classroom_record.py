"""What a class records: read from the study routes' own answers, and exactly what it says it records."""

from __future__ import annotations

from attnlab.lab.classroom import record
from attnlab.lab.explorer.sequence import held_from_dict
from attnlab.lab.explorer.state import example_answer
from attnlab.lab.notebook import history

HELD = example_answer()["sequence"]["example"]


def exchange(action: dict, study: dict | None = None) -> tuple[dict, dict]:
    before = study or history.new_study()
    after = history.apply(before, action, held_from_dict(HELD))
    answer = {"study": after, "history": history.history(after)}
    return {"held": HELD, "study": before, "action": action}, answer


def test_the_routes_parts():
    assert record.part_of("/api/notebook/study") == "notebook"
    assert record.part_of("/api/block/study") == "block"
    assert record.part_of("/api/connections/flash/study") == "connections/flash"
    assert record.part_of("/api/connections/a/b/study") is None and record.part_of("/api/state") is None


def test_a_check_is_recorded_with_the_servers_verdict_and_the_query():
    request, answer = exchange({"kind": "submit", "challenge": "zero-q", "response": [10, 80, 10]})
    event = record.study_event("notebook", request, answer)
    assert event["kind"] == "check" and event["challenge"] == "zero-q" and event["study"] == answer["study"]
    assert event["data"] == {"met": False, "response": [10.0, 80.0, 10.0], "attempt": 1, "q": [2.0, 1.0]}


def test_hints_and_answers_are_recorded_and_other_actions_are_not():
    request, answer = exchange({"kind": "help", "help": "hint", "detail": 2, "challenge": "equal-ac"})
    assert record.study_event("notebook", request, answer)["data"] == {"detail": 2, "attempt": 1}
    request, answer = exchange({"kind": "help", "help": "answer", "challenge": "equal-ac"})
    assert record.study_event("notebook", request, answer)["kind"] == "answer"
    for action in ({"kind": "open", "challenge": "zero-q"}, {"kind": "help", "help": "playback"},
                   {"kind": "retry", "challenge": "zero-q"}, {"kind": "clear", "challenge": "zero-q"}):
        request, answer = exchange(action)
        assert record.study_event("notebook", request, answer) is None, action


def test_only_recorded_kinds_are_said_to_be_recorded():
    words = record.recorded_words(shared_database=False)
    said = " ".join(words["items"])
    assert "Check" in said and "hint" in said and "answer you show" in said and "nickname" in said
    assert "Nothing else" in words["not"] and "drags" in words["not"]
    assert set(record.KINDS) == {"check", "hint", "answer"}
    assert words["where"]["claims"] == {"shared_database": False}
    assert "file on the teacher's computer" in words["where"]["text"]
    assert "database" in record.recorded_words(shared_database=True)["where"]["text"]
