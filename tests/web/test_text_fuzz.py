"""Any text at all, to every route that takes text: a 2xx or a 4xx naming the field, never a 5xx.

Texts are any Unicode, lone surrogates included: they travel as JSON's ``\\udXXX`` escapes
in raw request bytes, as a client can send them (Python's json reads them into a str that
no tokenizer takes). Model jobs run on toy models (``models.toy``) with the real
tokenizers counting first, so the text checks are the real ones and nothing heavy runs.
"""

from __future__ import annotations

import http.client
import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.models import toy
from attnlab.models.jobs import Jobs
from attnlab.web.app import create_app
from attnlab.web.realmodel import kept
from attnlab.web.server import serving

# every code point, surrogates (category Cs) included
ANY_CHAR = st.characters(codec=None, categories=None, exclude_categories=())
TEXTS = st.one_of(
    st.text(ANY_CHAR, max_size=40),
    st.sampled_from(["a \ud800 b", "\udc00", "\ud800\ud800", "x\n\ty", "\x00\r", "<|im_start|>assistant\n"]),
)
SLOW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def client():
    jobs = Jobs(loader=toy.load, process=False, count_first=True)
    saved = kept.JOBS
    kept.JOBS = jobs
    try:
        with TestClient(create_app()) as c:
            yield c
    finally:
        kept.JOBS = saved
        jobs.shutdown()


def raw(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=True).encode("ascii")  # lone surrogates as \\udXXX escapes


def posts(text: str) -> list[tuple[str, dict, str]]:
    """(path, body, the field the text is in) for every route that takes a learner's text."""
    return [
        ("/api/models/jobs", {"model": "minilm", "text": text}, "text"),
        ("/api/models/jobs", {"model": "smollm2", "text": text}, "text"),
        ("/api/models/generate", {"prompt": text, "max_new_tokens": 1}, "prompt"),
        ("/api/models/minilm/tokens", {"text": text}, "text"),
        ("/api/models/smollm2/tokens", {"text": text}, "text"),
        ("/api/notebook/import", {"text": text}, "text"),
        ("/api/trace", {"q": [2, 1], "keys": [[1, 0]], "values": [[0, 1]], "labels": [text]}, "labels"),
    ]


@SLOW
@given(text=TEXTS)
def test_any_text_gets_an_answer_or_a_4xx_naming_its_field(client, text):
    for path, body, field in posts(text):
        r = client.post(path, content=raw(body), headers={"content-type": "application/json"})
        assert r.status_code < 500, (path, text, r.text)
        if 400 <= r.status_code < 500 and r.status_code != 429:
            detail = r.json()["detail"]
            assert any(field in d["loc"] for d in detail) or r.status_code == 413, (path, text, detail)
            assert all(d["msg"] for d in detail)


@pytest.mark.parametrize("text", ["a \ud800 b", "\udc00", "\ud800\ud800"])
@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_a_lone_surrogate_is_a_422_at_text(client, text, model):
    # Before: 500 (TypeError: TextInputSequence must be str, from the tokenizer via check_tokens).
    r = client.post("/api/models/jobs", content=raw({"model": model, "text": text}),
                    headers={"content-type": "application/json"})  # fmt: skip
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["loc"] == ["body", "text"] and "surrogate" in item["msg"]


def test_the_connection_survives_a_refused_text():
    # Before: the keep-alive connection was dropped after the 500 (no Connection: close), so the
    # client's next request failed.
    with serving(create_app()) as (_, port):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        body = raw({"model": "minilm", "text": "a \ud800 b"})
        conn.request("POST", "/api/models/jobs", body, {"content-type": "application/json"})
        first = conn.getresponse()
        first.read()
        assert first.status == 422
        conn.request("GET", "/api/limits")  # the same connection
        again = conn.getresponse()
        assert again.status == 200 and json.loads(again.read())["max_tokens"] > 0
        conn.close()


@SLOW
@given(text=TEXTS)
def test_the_drag_socket_answers_any_label_with_a_message_never_a_drop(client, text):
    with client.websocket_connect("/api/trace/ws") as ws:
        state = {"q": [2, 1], "keys": [[1, 0]], "values": [[0, 1]], "labels": [text]}
        ws.send_text(json.dumps(state, ensure_ascii=True))
        answer = json.loads(ws.receive_text())
        assert isinstance(answer, dict) and answer  # an answer or an error, on an open socket
        ws.send_text(json.dumps({"q": [2, 1], "keys": [[1, 0]], "values": [[0, 1]]}))
        assert json.loads(ws.receive_text())  # and the socket still works
