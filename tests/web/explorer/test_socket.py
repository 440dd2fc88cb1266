"""The drag sockets answer exactly as their POSTs do, off the event loop.

``/api/state/ws`` (the page's) takes ``POST /api/state`` bodies only, ``/api/trace/ws``
``POST /api/trace`` bodies only: each socket has one message type, so nothing is guessed.
"""

from __future__ import annotations

import http.client
import json
import random
import threading

import pytest
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect
from websockets.sync.client import connect

from attnlab.lab.explorer.sequence import STARTING
from attnlab.web.app import create_app
from attnlab.web.explorer import socket as socket_route
from attnlab.web.explorer.messages import MAX_MESSAGE_CHARS
from attnlab.web.explorer.socket import Latest, answer_text
from attnlab.web.server import serving

WORKED = {"q": [2, 1], "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]]}
WAIT_S = 60  # only a bound on a hang: nothing is timed


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def test_socket_answers_equal_post_answers(client):
    states = [WORKED, {**WORKED, "q": [3.25, -0.5]}, {**WORKED, "allowed": [True, False, True]}]
    with client.websocket_connect("/api/trace/ws") as ws:
        for state in states:
            ws.send_text(json.dumps(state))
            answer = json.loads(ws.receive_text())
            assert answer == {"status": 200, "body": client.post("/api/trace", json=state).json()}


@pytest.mark.parametrize(
    "state",
    [
        {**WORKED, "q": [2, "x"]},
        {**WORKED, "q": [2, 1, 0]},
        {**WORKED, "labels": ["A", "A", "C"]},
        {**WORKED, "q": [1e308, 1e308]},
    ],
)
def test_socket_errors_equal_post_errors(client, state):
    with client.websocket_connect("/api/trace/ws") as ws:
        ws.send_text(json.dumps(state))
        answer = json.loads(ws.receive_text())
    post = client.post("/api/trace", json=state)
    assert answer == {"status": 422, "body": post.json()}


def test_socket_refuses_bad_json_and_stays_open(client):
    with client.websocket_connect("/api/trace/ws") as ws:
        ws.send_text("{bad")
        answer = json.loads(ws.receive_text())
        assert answer["status"] == 422
        assert answer["body"]["detail"][0]["field"] == "body"
        ws.send_text(json.dumps(WORKED))
        assert json.loads(ws.receive_text())["status"] == 200


def test_the_state_socket_answers_states_as_post_api_state(client):
    held = STARTING.to_dict()
    states = [
        {"held": held},
        {"held": held, "edits": [{"kind": "query", "q": [3.25, -0.5]}]},
        {"held": held, "edits": [{"kind": "mask", "row": 2, "source": 0, "allowed": False},
                                 {"kind": "select", "row": 2, "masked": True}]},
    ]
    with client.websocket_connect("/api/state/ws") as ws:
        for state in states:
            ws.send_text(json.dumps(state))
            answer = json.loads(ws.receive_text())
            assert answer == {"status": 200, "body": client.post("/api/state", json=state).json()}
        assert answer["body"]["sequence"]["explorer"]["label"]["text"] == "Row 2 (C) · masked row"


@pytest.mark.parametrize(("path", "message"), [("/api/state/ws", WORKED), ("/api/trace/ws", {"held": {}})])
def test_each_socket_takes_its_own_message_only(client, path, message):
    """A trace state on the state socket (or the reverse) is refused like its POST, never guessed at."""
    post = "/api/state" if path == "/api/state/ws" else "/api/trace"
    with client.websocket_connect(path) as ws:
        ws.send_text(json.dumps(message))
        answer = json.loads(ws.receive_text())
    want = client.post(post, json=message).json()["detail"]
    assert answer["status"] == 422
    assert [(d["loc"], d["type"]) for d in answer["body"]["detail"]] == [(d["loc"], d["type"]) for d in want]


def test_socket_closes_on_an_oversized_message(client):
    with client.websocket_connect("/api/trace/ws") as ws:
        ws.send_text(" " * (MAX_MESSAGE_CHARS + 1))
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
    assert closed.value.code == 1009
    assert str(MAX_MESSAGE_CHARS) in closed.value.reason


def test_socket_refuses_another_origin(client):
    # The guard refuses the handshake itself (more in test_security.py).
    with pytest.raises(WebSocketDenialResponse) as refused:
        with client.websocket_connect("/api/trace/ws", headers={"origin": "http://evil.example"}):
            pass  # pragma: no cover - never accepted
    assert refused.value.status_code == 403
    with client.websocket_connect("/api/trace/ws", headers={"origin": "http://testserver"}) as ws:
        ws.send_text(json.dumps(WORKED))
        assert json.loads(ws.receive_text())["status"] == 200


def test_socket_closes_on_a_binary_message_with_a_reason(client):
    with client.websocket_connect("/api/trace/ws") as ws:
        ws.send_bytes(json.dumps(WORKED).encode())
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
    assert closed.value.code == 1003
    assert "text" in closed.value.reason


# -- back-pressure: the latest state only, answered off the event loop ----------------------------


def test_latest_keeps_only_the_newest_waiting_message(run_async):
    async def main() -> None:
        latest = Latest()
        latest.put("a")
        latest.put("b")
        assert await latest.take() == "b"
        latest.put("c")
        assert await latest.take() == "c"
        assert latest.replaced == 1

    run_async(main)


def big_state(i: int) -> dict:
    """64 sources of 64 coordinates (the most a state may have), q different for each ``i``."""
    rng = random.Random(i)
    rows = [[rng.uniform(-3, 3) for _ in range(64)] for _ in range(64)]
    return {"q": [i / 8, *([0.5] * 63)], "keys": rows, "values": rows[::-1]}


def test_a_flooding_socket_does_not_stall_another_client(monkeypatch):
    """While one socket's answer is being made, another client's request is answered.

    The flooding socket's first answer waits at a gate the test opens only after
    the other request has completed: that can only happen if the answer does not
    run on the event loop. Then it gets the latest state's answer (states that
    arrived meanwhile are replaced, never all queued). The other client is another
    computer (127.0.0.2): one address's work runs one call at a time (``web.fairness``).
    """
    entered, gate, released = threading.Event(), threading.Event(), []

    def gated(text: str, kind: str) -> str:
        entered.set()
        released.append(gate.wait(WAIT_S))
        return answer_text(text, kind)

    monkeypatch.setattr(socket_route, "answer_text", gated)
    states = [big_state(i) for i in range(32)]
    with serving(create_app()) as (_, port):
        with connect(f"ws://127.0.0.1:{port}/api/trace/ws", open_timeout=WAIT_S, max_size=None) as flood:
            for state in states:
                flood.send(json.dumps(state))
            assert entered.wait(WAIT_S)
            other = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S,
                                               source_address=("127.0.0.2", 0))  # fmt: skip
            other.request("POST", "/api/trace", json.dumps(WORKED), {"content-type": "application/json"})
            answer = other.getresponse()
            assert answer.status == 200 and json.loads(answer.read())["trace"]["q"] == WORKED["q"]
            other.close()
            assert not gate.is_set()  # the flood's messages are all still unanswered here
            gate.set()
            qs = []
            while not qs or qs[-1] != states[-1]["q"]:
                reply = json.loads(flood.recv(timeout=WAIT_S))
                assert reply["status"] == 200
                qs.append(reply["body"]["trace"]["q"])
    assert released and all(released)
    sent = [s["q"] for s in states]
    assert len(qs) <= len(sent) and qs == sorted(qs, key=sent.index)  # in order, some replaced


# -- the sockets' words: as the POST routes say them ---------------------------------------------


LONG = "9" * 5_000  # over Python's 4,300 digits: its JSON reader refuses the integer itself
HALF = "holds half of a character (a lone surrogate): paste the text again"
TOO_LONG = "is a number too long to read (5,000 digits)"
TRACE = '{"q": [2, 1], "keys": [[1, 0]], "values": [[0, 1]], "labels": ["LABEL"]}'


def held_text(edit_q: str = "[0, 1]") -> str:
    return json.dumps({"held": STARTING.to_dict(), "edits": [{"kind": "query", "q": [0, 1]}]}).replace(
        "[0, 1]", edit_q
    )


@pytest.mark.parametrize(
    ("path", "text", "loc", "type_", "msg"),
    [
        ("/api/trace/ws", TRACE.replace("LABEL", "a\\ud800"), ["body", "labels", 0], "string_unicode",
         f"Source 1 · name {HALF}"),
        ("/api/trace/ws", TRACE.replace("[2, 1]", f"[{LONG}, 1]"), ["body", "q", 0], "number_too_long",
         f"Query q · x {TOO_LONG}"),
        ("/api/state/ws", held_text().replace('"A"', '"\\udc00"', 1), ["body", "held", "labels", 0],
         "string_unicode", f"Source 1 · name {HALF}"),
        ("/api/state/ws", held_text(f"[{LONG}, 1]"), ["body", "edits", 0, "q", 0], "number_too_long",
         f"Query q · x {TOO_LONG}"),
    ],
)
def test_a_lone_surrogate_or_a_long_integer_is_answered_as_its_post(client, path, text, loc, type_, msg):
    # Before: both sockets said json_invalid, "The request is not valid JSON".
    with client.websocket_connect(path) as ws:
        ws.send_text(text)
        answer = json.loads(ws.receive_text())
    post = client.post(path.removesuffix("/ws"), content=text.encode(),
                       headers={"content-type": "application/json"})  # fmt: skip
    assert answer == {"status": 422, "body": post.json()}
    (item,) = answer["body"]["detail"]
    assert (item["loc"], item["type"], item["msg"]) == (loc, type_, msg)
