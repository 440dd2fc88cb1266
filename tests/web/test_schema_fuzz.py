"""Property-based requests from the OpenAPI schema (schemathesis) against the real app.

Every generated request, valid or not, must get a documented answer: no 5xx,
a documented status code and content type, and a body that matches the
schema. What the schema leaves out is fuzzed with hypothesis: random static
paths (200 or 404, never 5xx, always the headers) and random socket messages
(an answer, or a close with 1003 or 1009: never 1006 or 1011). Bounded to keep
the suite quick.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.websockets import WebSocketDisconnect

from attnlab.web.app import CSP, create_app
from attnlab.web.explorer.messages import MAX_MESSAGE_CHARS

schema = schemathesis.openapi.from_asgi("/api/openapi.json", create_app())

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@schema.parametrize()
@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_answers_every_request_as_documented(case):
    case.call_and_validate(checks=CHECKS)


# -- what the schema leaves out: the static files and the drag socket -----------------------------

PIECES = st.sampled_from(
    ["..", ".", "%00", "%2e%2e", "%2f", "css", "js", "lab.css", "index.html", "a" * 300, ""]
)
NAMES = st.one_of(st.text(max_size=40), PIECES)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


@given(parts=st.lists(NAMES, max_size=6), raw=st.booleans())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_static_paths_are_never_a_server_error(client, parts, raw):
    path = "/".join(parts)
    # Percent-encode the text, or send it as it is where it is printable ASCII (%00 and %2e stay).
    url = "/static/" + (path if raw and path.isascii() and path.isprintable() else quote(path, safe="/%"))
    r = client.get(url)
    assert r.status_code < 500 and r.status_code in (200, 404), (url, r.status_code)
    assert r.headers["content-security-policy"] == CSP


STATE = st.fixed_dictionaries(
    {
        "q": st.lists(st.one_of(st.floats(), st.integers(), st.text(max_size=3)), max_size=4),
        "keys": st.lists(st.lists(st.floats(allow_nan=False, width=32), max_size=3), max_size=4),
        "values": st.lists(st.lists(st.integers(-5, 5), max_size=3), max_size=4),
    },
    optional={"allowed": st.lists(st.booleans(), max_size=4), "scale": st.one_of(st.none(), st.floats())},
)
JSONISH = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(), st.integers(), st.text(max_size=10)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
MESSAGES = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=64),
    JSONISH.map(json.dumps),
    STATE.map(json.dumps),
    st.sampled_from(
        ["[" * 5000 + "]" * 5000, '{"q": ' + "[" * 2000 + "]" * 2000 + "}", " " * (MAX_MESSAGE_CHARS + 1)]
    ),
)


@given(messages=st.lists(MESSAGES, min_size=1, max_size=3))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_socket_answers_or_closes_cleanly_whatever_it_is_sent(client, messages):
    """Each message gets a 200 or a 422 in the errors' shape, or the socket closes with 1003 or 1009."""
    with client.websocket_connect("/api/trace/ws") as ws:
        for message in messages:
            if isinstance(message, bytes):
                ws.send_bytes(message)
            else:
                ws.send_text(message)
            try:
                answer = json.loads(ws.receive_text())
            except WebSocketDisconnect as closed:
                assert closed.code in (1003, 1009) and closed.reason
                return
            assert answer["status"] in (200, 422)
            if answer["status"] == 422:
                for item in answer["body"]["detail"]:
                    assert set(item) == {"loc", "field", "msg", "type"} and item["loc"][0] == "body"
