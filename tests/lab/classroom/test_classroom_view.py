"""The teacher's view: its counts and sentences hold to the records (claims checked), names hidden on ask."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab.classroom import export, snapshot, view

NOW = 1_000_000


def learner(i: int, *, online: bool = True, seen: int = NOW) -> dict:
    return {"id": i, "number": i, "nickname": f"Kid{i}", "online": online,
            "place": {"page": "/", "section": "practice"}, "seen_at": seen, "joined_at": 0}


checks = st.lists(st.tuples(
    st.integers(1, 5), st.sampled_from(["zero-q", "double-q", "equal-ac"]),
    st.sampled_from(["check", "hint", "answer"]), st.booleans(),
), max_size=40)


def events_of(drawn) -> list[dict]:
    out = []
    for seq, (who, cid, kind, met) in enumerate(drawn, start=1):
        response = {"zero-q": [10.0, 80.0, 10.0], "double-q": "grows", "equal-ac": None}[cid]
        data = {"met": met, "response": response, "attempt": 1, "q": [2.0, 1.0]} if kind == "check" else {}
        out.append({"seq": seq, "learner_id": who, "at": NOW, "kind": kind, "part": "notebook",
                    "challenge": cid, "data": data})
    return out


@settings(max_examples=60, deadline=None)
@given(checks)
def test_every_count_and_its_sentence_hold_to_the_events(drawn):
    learners = [learner(i, online=i % 2 == 0) for i in range(1, 6)]
    events = events_of(drawn)
    v = view.teacher_view({"name": "c", "state": {}, "ended": False}, learners, events, now=NOW)
    assert v["summary"]["claims"] == {"joined": 5, "connected": 2}
    assert v["through"] == (events[-1]["seq"] if events else 0)
    for row in v["challenges"]["rows"]:
        mine = [e for e in events if e["challenge"] == row["challenge"]]
        attempted = {e["learner_id"] for e in mine if e["kind"] == "check"}
        solved = {e["learner_id"] for e in mine if e["kind"] == "check" and e["data"]["met"]}
        assert row["counts"]["attempted"] == len(attempted) and row["counts"]["solved"] == len(solved)
        assert row["counts"]["hints"] == len({e["learner_id"] for e in mine if e["kind"] == "hint"})
        claims = row["words"]["claims"]
        assert (claims["solved"], claims["attempted"], claims["joined"]) == (len(solved), len(attempted), 5)
        assert f"{len(solved)} of 5 learners solved it, {len(attempted)} tried it." in row["words"]["text"]
    for row in v["learners"]["rows"]:
        mine = [e for e in events if e["learner_id"] == row["id"] and e["kind"] == "check"]
        assert row["sort"]["checks"] == len(mine) and row["cells"]["checks"] == str(len(mine))
    for p in v["predictions"]:
        for g in p["groups"]:
            assert sum(b["count"] for b in g["bars"]) == p["words"]["claims"]["learners"]


def test_a_prediction_counts_each_learners_first_answer_only():
    events = events_of([(1, "zero-q", "check", False), (1, "zero-q", "check", True),
                        (2, "double-q", "check", True), (3, "double-q", "check", False)])
    events[1]["data"]["response"] = [33.0, 33.0, 34.0]
    events[3]["data"]["response"] = "same"
    got = {p["key"]: p for p in view.predictions(events)}
    b = got["notebook:zero-q"]["groups"][1]
    assert b["label"] == "B %" and [x["count"] for x in b["bars"]] == [0, 0, 0, 0, 0, 0, 0, 0, 1, 0]
    choice = got["notebook:double-q"]["groups"][0]["bars"]
    assert [x["count"] for x in choice] == [1, 1, 0] and choice[0]["fraction"] == 0.5


def test_a_stale_page_is_not_counted_connected():
    rows = view.teacher_view({"name": "c", "state": {}, "ended": False},
                             [learner(1, seen=NOW - view.STALE_MS - 1), learner(2)], [], now=NOW)
    assert [r["online"] for r in rows["learners"]["rows"]] == [False, True]


def test_anonymised_the_view_holds_no_nickname():
    events = events_of([(1, "zero-q", "check", False)])
    v = view.teacher_view({"name": "c", "state": {"anonymised": True}, "ended": False}, [learner(1)], events,
                          now=NOW)
    assert "Kid1" not in json.dumps(v) and v["learners"]["rows"][0]["cells"]["name"] == "Learner 1"
    assert "Kid1" not in json.dumps(view.learner_detail(learner(1), events, anonymised=True))


def test_a_learners_record_lists_their_steps():
    events = events_of([(1, "zero-q", "check", False), (1, "zero-q", "hint", False),
                        (1, "double-q", "check", True)])
    events[1]["data"] = {"detail": 1}
    detail = view.learner_detail(learner(1), events, anonymised=False)
    assert [line["text"] for line in detail["lines"]] == [
        "Check · Predict the shares at q = [0, 0] · [10, 80, 10] % · not yet",
        "Hint 1 · Predict the shares at q = [0, 0]",
        "Check · Doubling q sharpens the shares · “grows: doubling q doubles every score, so the differences "
        "between scores double.” · goal met",
    ]
    assert [line["pick"] is not None for line in detail["lines"]] == [True, False, True]
    assert detail["words"]["claims"] == {"steps": 3}


def test_a_snapshot_is_numbered_in_the_order_picked_without_names():
    events = events_of([(1, "zero-q", "check", False), (2, "equal-ac", "check", True)])
    shown = snapshot.snapshot([events[1], events[0]])
    assert shown["cards"] == [
        {"label": "Answer 1", "title": "Make A and C share equally", "answer": "q = [2, 1]"},
        {"label": "Answer 2", "title": "Predict the shares at q = [0, 0]", "answer": "[10, 80, 10] %"},
    ]
    assert shown["words"]["claims"] == {"answers": 2}


def test_csv_cells_that_a_spreadsheet_would_run_are_escaped():
    assert [export.safe(x) for x in ("=1+1", "+x", "-x", "@x", "Ada", None, 3)] == [
        "'=1+1", "'+x", "'-x", "'@x", "Ada", "", "3"]
