"""A class served in-process: its room on a SQLite file in a temporary folder, the app, clients."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from attnlab.classroom_store import SqliteClasses
from attnlab.web.app import create_app
from attnlab.web.classroom.room import Room
from attnlab.web.classroom.serving import NEW_STATE
from classroomkit import pg_cluster, pg_url  # noqa: F401 - fixtures


@pytest.fixture
def room(tmp_path):
    classes = SqliteClasses(tmp_path / "classes")
    store = classes.create("physics-7", state=dict(NEW_STATE), now=1)
    made = Room(classes=classes, store=store, join_url="http://127.0.0.1:8000/class/join")
    made.token = made.issue_token()
    yield made
    made.close()


@pytest.fixture
def app(room):
    return create_app(classroom=room)


@pytest.fixture
def teacher(app, room):
    with TestClient(app, headers={"authorization": f"Bearer {room.token}"}) as client:
        yield client


@pytest.fixture
def join(app):
    """Join the class as ``nickname``: a client holding that learner's cookie."""
    clients = []

    def joined(nickname: str) -> TestClient:
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        answer = client.post("/api/class/join", json={"nickname": nickname})
        assert answer.status_code == 201, answer.text
        return client

    yield joined
    for client in clients:
        client.__exit__(None, None, None)
