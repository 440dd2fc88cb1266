"""The drag socket /api/trace/ws answers exactly as POST /api/trace does."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from attnlab.web.api import MAX_MESSAGE_CHARS
from attnlab.web.app import create_app

WORKED = {"q": [2, 1], "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]]}


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


def test_socket_closes_on_an_oversized_message(client):
    with client.websocket_connect("/api/trace/ws") as ws:
        ws.send_text(" " * (MAX_MESSAGE_CHARS + 1))
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
    assert closed.value.code == 1009


def test_socket_refuses_another_origin(client):
    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect("/api/trace/ws", headers={"origin": "http://evil.example"}) as ws:
            ws.receive_text()
    assert refused.value.code == 1008
    with client.websocket_connect("/api/trace/ws", headers={"origin": "http://testserver"}) as ws:
        ws.send_text(json.dumps(WORKED))
        assert json.loads(ws.receive_text())["status"] == 200
