"""POST /api/state: the held example and its edits in, everything both views draw out, in one answer."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.stepper import stepper
from attnlab.lab.explorer.view import sequence_view
from attnlab.web.app import create_app
from attnlab.web.explorer.messages import answer_state

HELD = seq.STARTING.to_dict()


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app())


def test_one_answer_carries_the_explorer_and_the_held_sequence(client):
    r = client.post("/api/state", json={"held": HELD, "edits": [{"kind": "query", "q": [3, 1]}]})
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"sequence", "explorer", "stepper"}
    held = seq.edit_query(seq.STARTING, [3.0, 1.0])
    assert body["sequence"] == json.loads(json.dumps(sequence_view(held)))
    assert body["explorer"] == json.loads(json.dumps(explorer_answer(held.explorer_trace())))
    # the stepper draws from the same answer: its tables are the new row's numbers
    assert body["stepper"] == json.loads(json.dumps(stepper(held.explorer_trace())))
    assert body["stepper"]["steps"][0]["table"]["rows"][0][2] == "[3, 1]"
    assert body["explorer"]["display"]["q"] == "[3, 1]"
    assert body["sequence"]["rows"][0]["query"] == [3, 1]


def test_the_example_carries_the_starting_held_view_and_its_stepper(client):
    """The page starts from GET /api/example alone: both views and the stepper."""
    example = client.get("/api/example").json()
    start = client.post("/api/state", json={"held": HELD}).json()
    assert example == start  # the worked example's state answer, nothing else


def test_edits_apply_in_order_and_no_edit_is_the_held_state(client):
    edits = [
        {"kind": "values", "values": [[2, 0], [0, 2], [1, -1]]},
        {"kind": "select", "row": 2, "masked": True},
    ]
    body = client.post("/api/state", json={"held": HELD, "edits": edits}).json()
    held = seq.select_row(seq.set_values(seq.STARTING, [[2, 0], [0, 2], [1, -1]]), 2)
    assert body["sequence"]["explorer"]["label"]["text"] == "Row 2 (C) · masked row"
    assert body["explorer"]["trace"]["output"] == list(held.explorer_trace().output)
    plain = client.post("/api/state", json={"held": HELD}).json()
    assert plain["explorer"]["trace"]["q"] == [2, 1]


def test_the_socket_answers_a_state_message_exactly_as_the_post(client):
    body = {"held": HELD, "edits": [{"kind": "query", "q": [1, -0.0]}]}
    text = json.dumps(body)
    post = client.post("/api/state", content=text, headers={"content-type": "application/json"})
    with client.websocket_connect("/api/state/ws") as ws:
        ws.send_text(text)
        answer = json.loads(ws.receive_text())
    assert answer == {"status": 200, "body": post.json()} == answer_state(text)
    assert answer["body"]["explorer"]["display"]["q_coords"] == ["1", "-0"]
    assert answer["body"]["explorer"]["display"]["q"] == "[1, 0]"  # never -0 rounded


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ('{"held": HELD, "edits": [{"kind": "query", "q": [NaN, 1]}]}', "edits[0].q[0]",
         "Query q · x must be a finite number, not NaN or infinity"),
        ('{"held": HELD, "edits": [{"kind": "query", "q": [Infinity, 1]}]}', "edits[0].q[0]",
         "must be a finite number"),
        ('{"held": HELD, "edits": [{"kind": "query", "q": [1, 2, 3]}]}', "edits[0].q",
         "Query q has too many entries; it may have at most 2"),
        ('{"held": HELD, "edits": [{"kind": "values", "values": [[1, 2]]}]}', "edits[0].values",
         "Values list has 1 row; the held example has 3"),
        ('{"held": HELD, "edits": [{"kind": "value", "source": 0, "coord": 0, "x": 2e6}]}', "edits[0].x",
         "Source A · value x must be at most 1,000,000"),
        ('{"held": HELD, "edits": [{"kind": "select", "row": 0}, {"kind": "select", "row": 1},'
         ' {"kind": "select", "row": 2}, {"kind": "select", "row": 0}, {"kind": "reset"}]}',
         "edits", "Edits list has too many entries; it may have at most 4"),
        ('{"held": HELD, "edits": [{"kind": "mask", "row": 0, "source": 0, "allowed": false}]}',
         "edits[0].allowed", "Blocking A would leave row 0 (A) with no allowed source"),
        ('{"held": {"labels": ["A", "B", "C"]}}', "held.queries",
         "Queries list is missing; the lab needs it"),
        ('{"held": HELD', "body", "The request is not valid JSON"),
    ],
)
def test_bad_states_are_422_naming_the_field_in_the_labs_words(client, text, field, words):
    text = text.replace("HELD", json.dumps(HELD))
    r = client.post("/api/state", content=text, headers={"content-type": "application/json"})
    assert r.status_code == 422
    item = r.json()["detail"][0]
    assert item["field"] == field
    assert words in item["msg"]
    for raw in ("Input should", "Expecting value", "Field required", "line 1 column"):
        assert raw not in item["msg"]


def test_too_many_sources_for_the_explorer_are_refused_in_the_labs_words(client):
    state = {"q": [1, 0], "keys": [[1, 0]] * 65, "values": [[0, 1]] * 65}
    item = client.post("/api/trace", json=state).json()["detail"][0]
    assert item["field"] == "keys"
    assert item["msg"] == "Keys list has too many entries; it may have at most 64"
