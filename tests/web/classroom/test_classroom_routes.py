"""The class's routes: joining, what is recorded (and what is not), the teacher's actions, exports."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from fastapi import Request
from fastapi.testclient import TestClient

from attnlab.lab.classroom import names, page
from attnlab.web.app import create_app
from classroomkit import check, study


def view(teacher) -> dict:
    return teacher.get("/api/class/teacher/view").json()


def test_joining_sets_an_httponly_cookie_and_answers_in_words(app, room):
    client = TestClient(app)
    answer = client.post("/api/class/join", json={"nickname": "  Ada   Lovelace "})
    assert answer.status_code == 201
    assert answer.json()["words"]["text"] == "You are in the class “physics-7” as Ada Lovelace."
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(room.learner_cookie + "=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert [x.nickname for x in room.store.learners()] == ["Ada Lovelace"]
    assert client.get("/api/class/me").json()["in_class"]["text"] == "In class “physics-7” as Ada Lovelace"


@pytest.mark.parametrize("nickname, words", [
    ("", "Nickname is empty: type the name your class will know you by"),
    ("x" * 25, f"Nickname has 25 characters; it may have at most {names.MAX_NICKNAME}"),
    ("<script>", "Nickname may hold only letters, digits, spaces and - _ . '; character 1 is not one"),
    ("Ada\u200b", "Nickname may hold only letters, digits, spaces and - _ . '; character 4 is not one"),
    ("Learner 3", "Nickname reads like the names the teacher's screen gives learners; pick another"),
])
def test_a_nickname_is_refused_in_words(app, nickname, words):
    answer = TestClient(app).post("/api/class/join", json={"nickname": nickname})
    assert answer.status_code == 422
    assert answer.json()["detail"] == [
        {"loc": ["body", "nickname"], "field": "nickname", "msg": words, "type": "value_error"}]


def test_a_nickname_in_use_is_refused_whatever_its_case(app, join):
    join("Zoë")
    answer = TestClient(app).post("/api/class/join", json={"nickname": "ZOË"})
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["msg"] == "Nickname " + names.taken()


def test_joining_is_rate_limited_per_computer(app, room):
    client = TestClient(app)
    codes = [client.post("/api/class/join", json={"nickname": f"Kid {c}"}).status_code for c in "abcdefg"]
    assert codes[:5] == [201] * 5 and codes[5:] == [429, 429]
    refused = client.post("/api/class/join", json={"nickname": "Kid h"})
    assert refused.json()["detail"][0]["type"] == "too_many_joins"
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["detail"][0]["msg"].startswith("The class has had too many joins from this")
    assert len(room.store.learners()) == 5


def test_checks_hints_and_answers_are_recorded_from_the_servers_answers(app, room, join):
    ada = join("Ada")
    first = check(ada, "zero-q", [10, 80, 10])
    assert first.status_code == 200 and first.headers["x-attnlab-class-event"] == "1"
    after = first.json()["study"]
    hint = study(ada, {"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"}, after)
    shown = study(ada, {"kind": "help", "help": "answer", "challenge": "zero-q"}, hint.json()["study"])
    assert (hint.headers["x-attnlab-class-event"], shown.headers["x-attnlab-class-event"]) == ("2", "3")
    events = room.store.events()
    assert [(e.kind, e.part, e.challenge) for e in events] == [
        ("check", "notebook", "zero-q"), ("hint", "notebook", "zero-q"), ("answer", "notebook", "zero-q")]
    # the verdict is the server's: [10, 80, 10] is not the shares at q = [0, 0]
    assert events[0].data == {"met": False, "response": [10.0, 80.0, 10.0], "attempt": 1, "q": [2.0, 1.0]}
    assert events[1].data == {"detail": 1, "attempt": 1}
    right = check(ada, "zero-q", [33.33, 33.33, 33.34], shown.json()["study"])
    assert room.store.events(after=3)[0].data["met"] is True and right.json()["study"]
    # the latest study is kept for the learner's reload, with its history
    me = ada.get("/api/class/me").json()
    assert me["studies"]["notebook"]["study"] == right.json()["study"]
    assert me["studies"]["notebook"]["history"] == right.json()["history"]


def test_a_forged_claim_is_not_what_is_recorded(app, room, join):
    """The page's own claim of success (a study saying "met") is never read: only the new check counts."""
    ada = join("Ada")
    attempt = {"response": [0, 100, 0], "feedback": {"met": True, "words": "yes"}, "help": [],
               "checks": [{"response": [0, 100, 0], "met": True}], "answer": None}
    forged = {"version": 1, "active": None, "before": [],
              "challenges": {"zero-q": {"current": 0, "attempts": [attempt]}}}
    check(ada, "zero-q", [0, 100, 0], forged)
    assert [e.data["met"] for e in room.store.events()] == [False]


def test_drags_other_help_and_visitors_are_not_recorded(app, room, join):
    ada = join("Ada")
    held = ada.get("/api/example").json()["sequence"]["example"]
    dragged = ada.post("/api/state", json={"held": held, "edits": [{"kind": "query", "q": [1, 1]}]})
    assert dragged.status_code == 200
    assert study(ada, {"kind": "help", "help": "playback"}).status_code == 200
    assert study(ada, {"kind": "open", "challenge": "zero-q"}).status_code == 200
    visitor = TestClient(app)
    answer = check(visitor, "zero-q", [10, 80, 10])
    assert answer.status_code == 200 and "x-attnlab-class-event" not in answer.headers
    assert room.store.events() == []


def test_a_paused_room_refuses_practice_in_words_and_keeps_the_learners_work(app, room, teacher, join):
    ada = join("Ada")
    assert teacher.post("/api/class/teacher/pause", json={"paused": True}).json()["state"]["paused"] is True
    refused = check(ada, "zero-q", [10, 80, 10])
    assert refused.status_code == 409
    assert refused.json()["detail"] == [{"loc": ["class"], "field": "class", "msg": page.refusal(page.PAUSED),
                                         "type": "class_paused"}]
    teacher.post("/api/class/teacher/pause", json={"paused": False})
    assert check(ada, "zero-q", [10, 80, 10]).status_code == 200
    assert [e.kind for e in room.store.events()] == ["pause", "resume", "check"]


def test_pacing_keeps_practice_to_the_chosen_places(app, room, teacher, join):
    ada = join("Ada")
    answer = teacher.post("/api/class/teacher/pace", json={"places": ["block"]})
    assert answer.json()["state"]["pace"] == ["block"]
    refused = check(ada, "zero-q", [10, 80, 10])
    assert refused.status_code == 409 and refused.json()["detail"][0]["type"] == "class_paced"
    assert "The transformer block" in refused.json()["detail"][0]["msg"]
    teacher.post("/api/class/teacher/pace", json={"places": ["practice"]})
    assert check(ada, "zero-q", [10, 80, 10]).status_code == 200
    bad = teacher.post("/api/class/teacher/pace", json={"places": ["practice", "nowhere"]})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "places", 1]


def test_a_push_opens_a_lab_link_or_a_challenge_and_refuses_another_site(app, room, teacher, join):
    ada = join("Ada")
    with ada.websocket_connect("/api/class/ws") as ws:
        assert json.loads(ws.receive_text())["push"] is None
        answer = teacher.post("/api/class/teacher/push",
                              json={"link": "http://127.0.0.1:8000/connections/flash?n=64#x"})
        push = answer.json()["state"]["push"]
        assert push["href"] == "/connections/flash?n=64#x" and push["place"] == "lab:flash"
        state = json.loads(ws.receive_text())
        assert state["push"] == push and state["pushed"]["text"] == "Your teacher pushed: FlashAttention"
        teacher.post("/api/class/teacher/push", json={"challenge": "zero-q"})
        state = json.loads(ws.receive_text())
        assert state["pushed"]["text"] == "Your teacher pushed: Predict the shares at q = [0, 0]"
        assert state["push"]["challenge"] == "zero-q" and state["push"]["id"] > push["id"]
    for link, why in [("https://evil.example/", "is another site's address"),
                      ("javascript:alert(1)", "must be"), ("/admin", "is not a page of this lab")]:
        refused = teacher.post("/api/class/teacher/push", json={"link": link})
        assert refused.status_code == 422 and why in refused.json()["detail"][0]["msg"], link
    assert teacher.post("/api/class/teacher/push", json={"challenge": "nope"}).status_code == 422
    assert teacher.post("/api/class/teacher/push", json={}).json()["state"]["push"] is None


def test_the_teacher_view_counts_and_anonymises(app, room, teacher, join):
    ada, alan = join("Ada"), join("Alan")
    check(ada, "zero-q", [10, 80, 10])
    check(alan, "zero-q", [33.33, 33.33, 33.34])
    check(ada, "double-q", "grows")
    v = view(teacher)
    assert v["summary"]["claims"] == {"joined": 2, "connected": 0}
    rows = {r["cells"]["name"]: r for r in v["learners"]["rows"]}
    assert rows["Ada"]["sort"]["checks"] == 2 and rows["Alan"]["sort"]["solved"] == 1
    zero = next(r for r in v["challenges"]["rows"] if r["challenge"] == "zero-q")
    assert zero["counts"] == {"attempted": 2, "solved": 1, "hints": 0, "answers": 0}
    prediction = next(p for p in v["predictions"] if p["key"] == "notebook:zero-q")
    b = next(g for g in prediction["groups"] if g["label"] == "B %")
    assert [bar["count"] for bar in b["bars"]] == [0, 0, 0, 1, 0, 0, 0, 0, 1, 0]
    teacher.post("/api/class/teacher/anonymise", json={"anonymised": True})
    hidden = teacher.get("/api/class/teacher/view").text
    assert "Ada" not in hidden and "Alan" not in hidden and "Learner 1" in hidden and "Learner 2" in hidden
    ada_id = next(x.id for x in room.store.learners() if x.nickname == "Ada")
    detail = teacher.get(f"/api/class/teacher/learners/{ada_id}").json()
    assert detail["name"] == "Learner 1" and "Ada" not in json.dumps(detail)


def test_a_snapshot_shows_picked_answers_without_names(app, room, teacher, join):
    ada, alan = join("Ada"), join("Alan")
    check(ada, "zero-q", [10, 80, 10])
    check(alan, "double-q", "grows")
    answer = teacher.post("/api/class/teacher/snapshot", json={"events": [2, 1]}).json()["snapshot"]
    assert [c["label"] for c in answer["cards"]] == ["Answer 1", "Answer 2"]
    assert answer["cards"][1]["answer"] == "[10, 80, 10] %"
    assert "Ada" not in json.dumps(answer) and "Alan" not in json.dumps(answer)
    assert view(teacher)["snapshot"] == answer
    assert teacher.post("/api/class/teacher/snapshot", json={"events": [99]}).status_code == 422
    assert teacher.post("/api/class/teacher/snapshot", json={"events": []}).json()["snapshot"] is None


def test_ending_the_class_stops_new_events_and_joins(app, room, teacher, join):
    ada = join("Ada")
    check(ada, "zero-q", [10, 80, 10])
    assert teacher.post("/api/class/teacher/end").json() == {"ended": True}
    after = check(ada, "zero-q", [10, 80, 10])
    assert after.status_code == 200 and "x-attnlab-class-event" not in after.headers  # a visitor now
    late = TestClient(app).post("/api/class/join", json={"nickname": "Late"})
    assert late.status_code == 410 and late.json()["detail"][0]["type"] == "class_ended"
    assert teacher.post("/api/class/teacher/pause", json={"paused": True}).status_code == 410
    assert [e.kind for e in room.store.events()] == ["check", "end"]
    assert teacher.get("/api/class/teacher/export.csv").status_code == 200  # the results stay


def test_exports_a_csv_row_per_learner_and_challenge_and_the_json(app, room, teacher, join):
    join("-cmd")  # a nickname a spreadsheet would read as a formula, if it were not escaped
    ada = join("Ada")
    check(ada, "zero-q", [10, 80, 10])
    text = teacher.get("/api/class/teacher/export.csv").text
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:4] == ["class", "learner", "alias", "part"]
    assert len(rows) == 1 + 2 * 10  # two learners x the ten practice challenges
    assert {r[1] for r in rows[1:]} == {"'-cmd", "Ada"}
    zero = next(r for r in rows if r[1] == "Ada" and r[4] == "zero-q")
    assert zero[6:12] == ["1", "no", "[10, 80, 10] %", "[10, 80, 10] %", "0", "no"]
    data = teacher.get("/api/class/teacher/export.json").json()
    assert data["format"] == "attnlab-class" and [x["nickname"] for x in data["learners"]] == ["-cmd", "Ada"]
    assert data["learners"][1]["studies"]["notebook"]["challenges"]["zero-q"]["attempts"][0]["checks"] == [
        {"response": [10.0, 80.0, 10.0], "met": False}]
    assert [e["kind"] for e in data["events"]] == ["check"]


def test_deleting_the_class_removes_it_and_ends_the_routes(app, room, teacher, join, tmp_path):
    join("Ada")
    assert teacher.post("/api/class/teacher/delete", json={"confirm": "wrong"}).status_code == 422
    deleted = teacher.post("/api/class/teacher/delete", json={"confirm": "physics-7"})
    assert deleted.json() == {"deleted": True}
    assert list((tmp_path / "classes").iterdir()) == []
    assert TestClient(app).get("/class/join").status_code == 404
    assert teacher.get("/api/class/teacher/view").json()["detail"][0]["type"] == "no_class"


def test_a_learners_lab_pages_carry_the_class_bar_and_nobody_elses_do(app, room, join):
    ada = join("Ada")
    page_ = ada.get("/")
    assert re.search(r'<script type="module" src="/static/v/[0-9a-f]{16}/js/classroom/bar.js">', page_.text)
    assert page_.headers["etag"].endswith('-c"')
    again = ada.get("/", headers={"if-none-match": page_.headers["etag"]})
    assert again.status_code == 304
    plain = TestClient(app).get("/")
    assert "classroom/bar.js" not in plain.text
    for route in ("/real-model", "/circuits", "/connections/flash"):
        assert "classroom/bar.js" in ada.get(route).text, route


def test_the_join_page_says_what_is_recorded_and_where_it_is_kept(app, room):
    text = TestClient(app).get("/class/join").text
    served = page.join_page("physics-7", shared_database=False)["fills"]
    for key in ("title", "recorded_2", "recorded_not", "recorded_where"):
        assert served[key].replace("'", "&#x27;") in text or served[key] in text, key
    assert "in a file on the teacher&#x27;s computer" in text or "in a file on the teacher's computer" in text
    assert "<!-- fill:" not in text


def test_the_qr_code_is_the_join_address(app, room):
    svg = TestClient(app).get("/class/qr.svg")
    assert svg.status_code == 200 and svg.headers["content-type"] == "image/svg+xml"
    assert svg.text.startswith("<svg")


def test_without_a_class_the_pages_say_so(tmp_path):
    client = TestClient(create_app())
    assert client.get("/class/join").status_code == 404
    assert client.get("/class/teacher").status_code == 404
    assert client.get("/api/class/me").json()["detail"][0]["type"] == "no_class"
    assert client.post("/api/class/join", json={"nickname": "Ada"}).status_code == 404


def test_no_class_page_file_holds_a_word():
    import importlib.util
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("assets_check", tests / "test_assets.py")
    assets_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(assets_check)  # the lab's own check of its pages' words
    shown_texts = assets_check.shown_texts
    static = tests.parents[1] / "src" / "attnlab" / "web" / "static"
    for name in ("classroom-join.html", "classroom-teacher.html", "classroom-notice.html"):
        raw = (static / name).read_text(encoding="utf-8")
        shown = shown_texts(re.sub(r"<!-- fill:[a-z0-9_]+ -->", "", raw))
        assert [t for t in shown if any(c.isalpha() for c in t)] == [], name


def probe(request: Request) -> dict:
    return {"who": getattr(request.state, "class_learner", None)}


def test_every_request_of_a_learner_says_which_learner_asks(app, room, join):
    app.add_api_route("/api/probe-learner", probe, methods=["GET"])
    ada = join("Ada")
    assert ada.get("/api/probe-learner").json() == {"who": f"class:{room.store.public_id}:1"}
    assert TestClient(app).get("/api/probe-learner").json() == {"who": None}
