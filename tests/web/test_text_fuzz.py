"""Any text at all, to every route that takes text: a 2xx or a 4xx naming the field, never a 5xx.

Texts are any Unicode, lone surrogates included: they travel as JSON's ``\\udXXX`` escapes
in raw request bytes, as a client can send them (Python's json reads them into a str that
no tokenizer takes). Model jobs run on toy models (``models.toy``) with the real
tokenizers counting first, so the text checks are the real ones and nothing heavy runs.
Every route whose body takes a string is here (``test_every_text_taking_route_is_fuzzed``
checks that against the app's own OpenAPI document), the drag sockets too, and part of it
runs over one real keep-alive connection, which must stay usable after every answer. Jobs a
valid text starts (traces, generations, circuits) run on the toy models, or wait their turn.
"""

from __future__ import annotations

import copy
import http.client
import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.classroom_store import SqliteClasses
from attnlab.lab.classroom import places as class_places
from attnlab.lab.fields import half_character
from attnlab.models import toy
from attnlab.models.jobs.line import Jobs
from attnlab.web.app import create_app
from attnlab.web.classroom.room import Room
from attnlab.web.classroom.serving import NEW_STATE
from attnlab.web.realmodel import line
from attnlab.web.server import serving

# every code point, surrogates (category Cs) included
ANY_CHAR = st.characters(codec=None, categories=None, exclude_categories=())
TEXTS = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.sampled_from(["a \ud800 b", "\udc00", "\ud800\ud800", "x\n\ty", "\x00\r", "<|im_start|>assistant\n"]),
)
SLOW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
WORKED = {"q": [2, 1], "keys": [[1, 0]], "values": [[0, 1]]}
WAIT_S = 60  # only a bound on a hang


@pytest.fixture(scope="module")
def toy_jobs():
    jobs = Jobs(loader=toy.load, process=False, count_first=True)
    saved = line.JOBS
    line.JOBS = jobs
    try:
        yield jobs
    finally:
        line.JOBS = saved
        jobs.shutdown()


@pytest.fixture(scope="module")
def client(toy_jobs):
    with TestClient(create_app()) as c:
        yield c


def raw(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=True).encode("ascii")  # lone surrogates as \\udXXX escapes


def put(body: dict, path: tuple, text: str) -> dict:
    """``body`` with ``text`` at ``path`` (objects on the way made where the body has none)."""
    body = copy.deepcopy(body)
    node = body
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    node[path[-1]] = text
    return body


def choice(practice: dict) -> dict:
    """The first challenge answered by picking an option: its id and a response it takes."""
    first = next(c for c in practice["challenges"] if (c["response"] or {}).get("type") == "choice")
    return {"challenge": first["id"], "response": first["response"]["options"][0]["id"]}


@pytest.fixture(scope="module")
def bodies(client) -> dict[str, tuple[dict, list[tuple]]]:
    """Each text-taking route: a valid body (from the app's own examples) and where texts go in it."""
    held = client.get("/api/example").json()["sequence"]["example"]
    block_example = client.get("/api/block/example").json()
    block = {k: block_example[k] for k in ("x", "weights", "norm", "positions", "heads_on")}
    challenge = choice(client.get("/api/notebook/practice").json())
    block_challenge = choice(client.get("/api/block/practice").json())
    lab = client.get("/api/connections").json()[0]["name"]
    lab_challenge = client.get(f"/api/connections/{lab}").json()["practice"]["challenges"][0]["id"]
    exported = client.post("/api/notebook/export/json", json={"held": held}).text  # a file import takes
    labels, name = ("held", "labels", 0), ("held", "id")
    return {
        "/api/trace": ({**WORKED, "labels": ["A"]}, [("labels", 0)]),
        "/api/state": ({"held": held}, [labels, name]),
        "/api/notebook/study": (
            {"held": held, "study": {"version": 1}, "action": {"kind": "submit", **challenge}},
            [("action", "response"), labels],
        ),
        "/api/notebook/export/json": ({"held": held}, [labels, name]),
        "/api/notebook/export/markdown": ({"held": held}, [labels, name]),
        "/api/notebook/export/ipynb": ({"held": held}, [labels, name]),
        "/api/notebook/import": ({"text": exported}, [("text",)]),
        "/api/block": (block, [("norm",), ("positions",)]),
        "/api/block/study": (
            {"block": block, "action": {"kind": "submit", **block_challenge}},
            [("action", "response"), ("action", "challenge"), ("block", "norm")],
        ),
        "/api/block/export/ipynb": (block, [("norm",)]),
        "/api/block/export/markdown": (block, [("positions",)]),
        "/api/models/jobs": ({"model": "minilm", "text": "a"}, [("text",), ("model",)]),
        "/api/models/generate": ({"prompt": "a", "max_new_tokens": 1}, [("prompt",)]),
        "/api/models/minilm/tokens": ({"text": "a"}, [("text",)]),
        "/api/models/smollm2/tokens": ({"text": "a"}, [("text",)]),
        f"/api/connections/{lab}/study": ({"action": {"kind": "open", "challenge": lab_challenge}},
                                          [("action", "challenge"), ("action", "kind")]),
        f"/api/connections/{lab}/export/json": ({}, [("inputs", "n")]),
        f"/api/connections/{lab}/export/markdown": ({"inputs": {}}, [("inputs", "tile")]),
        "/api/circuits/smollm2/tokens": ({"text": "a"}, [("text",)]),
        "/api/models/program": (
            {"model": "smollm2", "ids": [1, 2], "tokens": ["a", "b"], "kind": "weight", "layer": 0, "head": 0,
             "query": 1, "key": 0},
            [("tokens", 0), ("kind",), ("model",)],
        ),
        "/api/circuits/ablation": (
            {"model": "minilm", "text": "a b", "heads": "L0H1"}, [("text",), ("heads",)]
        ),
        "/api/circuits/attribution": ({"model": "smollm2", "text": "a b"}, [("text",)]),
        "/api/circuits/lens": ({"model": "smollm2", "text": "a b"}, [("text",)]),
        "/api/circuits/head": ({"model": "smollm2", "text": "a b", "layer": 0, "head": 0}, [("text",)]),
        "/api/circuits/patching": (
            {"model": "smollm2", "clean": "a b", "corrupt": "a c", "right": " b", "other": " c"},
            [("clean",), ("corrupt",), ("right",)],
        ),
    }


# a field whose text a refusal may name another field for: the two prompts of a patching are
# compared with each other (their token lengths); a circuits view's position is checked against
# its text's tokens (but see test_a_text_of_no_tokens_is_refused_at_the_text)
PAIRED = {"clean": {"clean", "corrupt"}, "corrupt": {"clean", "corrupt"}, "text": {"text", "position"}}


def posts(bodies, text: str):
    """(path, body, the fields a refusal may name) for every text of every route."""
    for path, (good, places) in bodies.items():
        for place in places:
            field = next(p for p in reversed(place) if isinstance(p, str))
            yield path, put(good, place, text), PAIRED.get(field, {field})


def check(path: str, text: str, status: int, answer: bytes, fields: set[str]) -> None:
    assert status < 500, (path, text, answer[:300])
    if 400 <= status < 500 and status not in (413, 429):
        detail = json.loads(answer)["detail"]
        assert any(fields & set(map(str, d["loc"])) for d in detail), (path, text, detail)
        assert all(d["msg"] for d in detail)


def test_every_text_taking_route_is_fuzzed(client, bodies):
    doc = client.get("/api/openapi.json").json()
    schemas = doc["components"]["schemas"]

    def takes_text(schema, seen=()) -> bool:
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            return name not in seen and takes_text(schemas[name], (*seen, name))
        if not schema or schema.get("type") == "string":
            return True  # a string, or any value at all
        if schema.get("type") == "object" and "properties" not in schema:
            return True  # an object of any keys and values
        inner = [*schema.get("anyOf", []), *schema.get("oneOf", []), *schema.get("allOf", []),
                 *schema.get("properties", {}).values()]  # fmt: skip
        inner += [s for s in (schema.get("items"), schema.get("additionalProperties")) if isinstance(s, dict)]
        return any(takes_text(s, seen) for s in inner)

    text_routes = {
        path
        for path, ops in doc["paths"].items()
        for op in ops.values()
        if "requestBody" in op and takes_text(op["requestBody"]["content"]["application/json"]["schema"])
    }
    fuzzed = {p.replace("/minilm/", "/{model}/").replace("/smollm2/", "/{model}/") for p in bodies}
    lab = next(p for p in bodies if p.startswith("/api/connections/")).split("/")[3]
    fuzzed = {p.replace(f"/{lab}/", "/{name}/") for p in fuzzed}
    assert text_routes == fuzzed | set(CLASS_BODIES)  # the class's: test_any_text_to_a_class_route


# The class's routes that take text, on an app serving a class (a room on a SQLite file), asked
# with the teacher's token: a valid body and where texts go in it.
CLASS_BODIES = {
    "/api/class/join": ({"nickname": "Ada"}, [("nickname",)]),
    "/api/class/teacher/push": ({"link": "/real-model"}, [("link",)]),
    "/api/class/teacher/pace": ({"places": [class_places.places()[0]["id"]]}, [("places", 0)]),
    "/api/class/teacher/delete": ({"confirm": "fuzz-class"}, [("confirm",)]),
}


@pytest.fixture(scope="module")
def class_client(tmp_path_factory):
    classes = SqliteClasses(tmp_path_factory.mktemp("classes"))
    room = Room(classes=classes, store=classes.create("fuzz-class", state=dict(NEW_STATE), now=1),
                join_url="http://127.0.0.1:8000/class/join")  # fmt: skip
    room.token = room.issue_token()
    try:
        with TestClient(create_app(classroom=room), headers={"authorization": f"Bearer {room.token}"}) as c:
            yield c
    finally:
        room.close()


def test_each_class_routes_body_is_answered_as_it_is(class_client):
    for path, (good, _) in CLASS_BODIES.items():
        if path.endswith("/delete"):  # a valid body would delete the class the fuzz asks
            continue
        r = class_client.post(path, content=raw(good), headers={"content-type": "application/json"})
        assert r.status_code in (200, 201), (path, r.text[:300])
    push = put(CLASS_BODIES["/api/class/teacher/push"][0], ("challenge",), "x")  # a link and a challenge
    r = class_client.post("/api/class/teacher/push", content=raw(push),
                          headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "challenge"]


@SLOW
@given(text=TEXTS)
def test_any_text_to_a_class_route_gets_an_answer_or_a_4xx_naming_its_field(class_client, text):
    for path, body, fields in posts(CLASS_BODIES, text):
        if path.endswith("/delete") and text == "fuzz-class":
            continue
        r = class_client.post(path, content=raw(body), headers={"content-type": "application/json"})
        check(path, text, r.status_code, r.content, fields)


def test_each_routes_body_is_answered_as_it_is(client, bodies):
    for path, (good, _) in bodies.items():  # so the texts below are tried where a valid one would pass
        r = client.post(path, content=raw(good), headers={"content-type": "application/json"})
        assert r.status_code in (200, 202), (path, r.text[:300])


@SLOW
@given(text=TEXTS)
def test_any_text_gets_an_answer_or_a_4xx_naming_its_field(client, bodies, text):
    for path, body, fields in posts(bodies, text):
        r = client.post(path, content=raw(body), headers={"content-type": "application/json"})
        check(path, text, r.status_code, r.content, fields)


@pytest.mark.parametrize("text", ["a \ud800 b", "\udc00", "\ud800\ud800"])
@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_a_lone_surrogate_is_a_422_at_text(client, text, model):
    # Before: 500 (TypeError: TextInputSequence must be str, from the tokenizer via check_tokens).
    r = client.post("/api/models/jobs", content=raw({"model": model, "text": text}),
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["loc"] == ["body", "text"] and "surrogate" in item["msg"]


@pytest.mark.parametrize(
    ("path", "body", "loc", "name"),
    [
        ("/api/trace", {**WORKED, "labels": ["\ud800"]}, ["body", "labels", 0], "Source 1 · name"),
        ("/api/notebook/import", {"text": "\ud800"}, ["body", "text"], "The file"),
        ("/api/models/minilm/tokens", {"text": "\ud800"}, ["body", "text"], "Text"),
        ("/api/models/jobs", {"model": "smollm2", "text": "a\udc00"}, ["body", "text"], "Text"),
        ("/api/models/generate", {"prompt": "a\udc00"}, ["body", "prompt"], "Text to continue"),
    ],
)
def test_every_route_says_a_lone_surrogate_in_the_same_words(client, path, body, loc, name):
    # Before: the model routes said "lone surrogate", the others "is not in a form the lab can use".
    r = client.post(path, content=raw(body), headers={"content-type": "application/json"})
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert (item["loc"], item["msg"]) == (loc, f"{name} {half_character()}")


@pytest.mark.parametrize("path", ["/api/circuits/attribution", "/api/circuits/lens", "/api/circuits/head"])
def test_a_text_of_no_tokens_is_refused_at_the_text(client, bodies, path):
    r = client.post(path, content=raw(put(bodies[path][0], ("text",), "\x16")),
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422 and [d["loc"] for d in r.json()["detail"]] == [["body", "text"]]


def test_the_connection_survives_a_refused_text(toy_jobs):
    # Before: the keep-alive connection was dropped after the 500 (no Connection: close), so the
    # client's next request failed.
    with serving(create_app()) as (_, port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        body = raw({"model": "minilm", "text": "a \ud800 b"})
        conn.request("POST", "/api/models/jobs", body, {"content-type": "application/json"})
        first = conn.getresponse()
        first.read()
        assert first.status == 422
        conn.request("GET", "/api/limits")  # the same connection
        again = conn.getresponse()
        assert again.status == 200 and json.loads(again.read())["max_tokens"] > 0
        conn.close()


@pytest.fixture(scope="module")
def keep_alive(toy_jobs):
    """One real keep-alive connection to a real server, for the whole module."""
    with serving(create_app()) as (_, port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
        yield conn
        conn.close()


KEEP_ALIVE_ROUTES = ("/api/state", "/api/notebook/import", "/api/models/jobs", "/api/models/smollm2/tokens",
                     "/api/block/study", "/api/notebook/export/ipynb")  # fmt: skip


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS)
def test_any_text_over_one_keep_alive_connection_never_drops_it(keep_alive, bodies, text):
    for path, body, fields in posts(bodies, text):
        if path not in KEEP_ALIVE_ROUTES:
            continue
        keep_alive.request("POST", path, raw(body), {"content-type": "application/json"})
        answer = keep_alive.getresponse()  # on the same connection as every request before it
        data = answer.read()
        check(path, text, answer.status, data, fields)
        assert answer.getheader("connection") != "close", (path, text)


@SLOW
@given(text=TEXTS)
def test_the_drag_sockets_answer_any_text_with_a_message_never_a_drop(client, bodies, text):
    (held, _), post = bodies["/api/state"], "/api/state"
    cases = [
        ("/api/trace/ws", "/api/trace", {**WORKED, "labels": [text]}),
        ("/api/state/ws", post, put(held, ("held", "labels", 0), text)),
        ("/api/state/ws", post, put(held, ("held", "id"), text)),
    ]
    for socket_path, post_path, body in cases:
        with client.websocket_connect(socket_path) as ws:
            ws.send_text(json.dumps(body, ensure_ascii=True))
            answer = json.loads(ws.receive_text())  # an answer or an error, on an open socket
            same = client.post(post_path, content=raw(body), headers={"content-type": "application/json"})
            assert answer == {"status": same.status_code, "body": same.json()}  # as its POST answers
            ws.send_text(json.dumps({**WORKED} if socket_path == "/api/trace/ws" else held))
            assert json.loads(ws.receive_text())["status"] == 200  # and the socket still works
