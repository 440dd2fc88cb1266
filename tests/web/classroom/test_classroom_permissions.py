"""The teacher/learner boundary: every teacher route refused without the token; a learner reads only
their own record."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from classroomkit import check

TEACHER_BODIES = {
    "/api/class/teacher/pause": {"paused": True},
    "/api/class/teacher/anonymise": {"anonymised": True},
    "/api/class/teacher/pace": {"places": ["practice"]},
    "/api/class/teacher/push": {"link": "/"},
    "/api/class/teacher/snapshot": {"events": []},
    "/api/class/teacher/end": {},
    "/api/class/teacher/delete": {"confirm": "physics-7"},
}


def teacher_routes(app) -> list[tuple[str, str]]:
    """The class's teacher routes, read from its routers (the ones the app includes)."""
    from attnlab.web.classroom import routes, socket

    found = []
    for route in [*routes.router.routes, *socket.router.routes]:
        path = getattr(route, "path", "")
        if path.startswith(("/api/class/teacher", "/class/teacher")):
            for method in sorted(getattr(route, "methods", None) or {"WS"}):
                found.append((method, path))
    return found


def test_the_list_of_teacher_routes_is_the_one_tested(app):
    found = {(m, p) for m, p in teacher_routes(app) if m != "HEAD"}
    assert found == {
        ("GET", "/class/teacher"), ("GET", "/api/class/teacher/view"),
        ("GET", "/api/class/teacher/learners/{learner_id}"), ("GET", "/api/class/teacher/export.csv"),
        ("GET", "/api/class/teacher/export.json"), ("WS", "/api/class/teacher/ws"),
        *(("POST", p) for p in TEACHER_BODIES),
    }


@pytest.mark.parametrize("who", ["nobody", "wrong token", "a learner"])
def test_every_teacher_route_is_refused_without_the_token(app, room, join, who):
    ada = join("Ada")
    if who == "nobody":
        client = TestClient(app)
    elif who == "wrong token":
        client = TestClient(app, headers={"authorization": "Bearer " + room.token[:-2] + "xx"},
                            cookies={room.teacher_cookie: room.token + "x"})
    else:
        client = ada
    learner_id = next(iter(room.store.learners())).id
    for method, path in teacher_routes(app):
        if method == "HEAD":
            continue
        url = path.replace("{learner_id}", str(learner_id))
        if method == "WS":
            with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(url) as ws:
                ws.send_text(json.dumps({"token": "not-it"}))
                ws.receive_text()
            assert closed.value.code == 4403, url
            continue
        answer = client.request(method, url, json=TEACHER_BODIES.get(path))
        assert answer.status_code == 403, (method, url, answer.status_code)
        if path.startswith("/api/"):
            assert answer.json()["detail"][0]["type"] == "not_teacher"
            assert room.token not in answer.text
    # nothing changed: the class runs, unpaused, undeleted
    assert room.store.info().state["paused"] is False and room.store.info().ended_at is None
    assert not room.deleted


def test_the_teacher_address_sets_a_cookie_and_leaves_the_address_bar(app, room):
    client = TestClient(app)
    moved = client.get(f"/class/teacher?token={room.token}", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"] == "/class/teacher"
    cookie = moved.headers["set-cookie"]
    assert cookie.startswith(f"{room.teacher_cookie}=")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = client.get("/class/teacher")
    assert page.status_code == 200 and "physics-7" in page.text
    assert room.token not in page.text  # the token is in no page
    assert client.get("/api/class/teacher/view").status_code == 200
    refused = TestClient(app).get("/class/teacher?token=nope")
    assert refused.status_code == 403 and "set-cookie" not in refused.headers


def test_the_token_never_reaches_a_learner(app, room, join):
    ada = join("Ada")
    for url in ("/class/join", "/", "/api/class/me", "/real-model"):
        text = ada.get(url).text
        assert room.token not in text, url
    with ada.websocket_connect("/api/class/ws") as ws:
        assert room.token not in ws.receive_text()


def test_a_learner_reads_only_their_own_record(app, room, join):
    ada, alan = join("Ada"), join("Alan")
    check(ada, "zero-q", [10, 80, 10])
    mine = ada.get("/api/class/me").json()
    theirs = alan.get("/api/class/me").json()
    assert mine["in_class"]["text"].endswith("as Ada") and theirs["in_class"]["text"].endswith("as Alan")
    assert "notebook" in mine["studies"] and theirs["studies"] == {}
    assert "Ada" not in json.dumps(theirs)
    ada_id = next(x.id for x in room.store.learners() if x.nickname == "Ada")
    assert alan.get(f"/api/class/teacher/learners/{ada_id}").status_code == 403
    assert TestClient(app).get("/api/class/me").json() == {"joined": False}
    # a forged cookie names nobody
    forged = TestClient(app, cookies={room.learner_cookie: "x" * 43})
    assert forged.get("/api/class/me").json() == {"joined": False}
