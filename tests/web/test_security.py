"""The lab answers only its own names and pages (DNS rebinding), with the security headers on every status.

Forged Host and Origin pairs go through the in-process TestClient (whose own
``testserver`` is allowed for it alone) and through a real server on a socket,
where ``testserver`` is just another foreign name.
"""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys

import pytest
from fastapi import HTTPException
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from attnlab.web.app import CSP, MAX_BODY_BYTES, create_app
from attnlab.web.guard import SECURITY_HEADERS
from attnlab.web.hosts import HostRules, host_name, host_port, normalize_name
from attnlab.web.server import serving

WORKED = {"q": [2, 1], "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]]}
GENERATE = {"prompt": "Once upon a time", "max_new_tokens": 1}
REQUESTS = [("GET", "/", None), ("POST", "/api/trace", WORKED), ("POST", "/api/models/generate", GENERATE)]
FOREIGN_HOSTS = [
    "evil.example",
    "evil.example:8000",
    "127.0.0.1.evil.example",
    "localhost.evil.example",
    "testserver.evil.example",
    "[::2]:8000",
    "0x7f.1",
    "",
    "local host",
    "localhost:http",
]
OUR_HOSTS = [
    "localhost",
    "localhost:8000",
    "LOCALHOST.",
    "127.0.0.1",
    "127.0.0.1:8000",
    "[::1]:8000",
    "lab.localhost:8000",
]
WAIT_S = 60  # only a bound on a hang: nothing is timed


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def assert_guarded(response) -> None:
    """The security headers, whatever the status."""
    for name, value in SECURITY_HEADERS:
        assert response.headers[name.decode()] == value.decode(), (response.status_code, name)


def assert_refused(response, field: str) -> None:
    assert response.status_code == 403
    assert_guarded(response)
    (item,) = response.json()["detail"]
    assert item["loc"] == ["header", field] and item["field"] == field
    assert item["msg"].startswith(f"{field}: ")
    assert item["type"] == f"{field}_refused"


# -- the rules ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "name"),
    [
        ("localhost", "localhost"),
        ("LocalHost.:8000", "localhost"),
        ("[::1]:8000", "::1"),
        ("[0:0::1]", "::1"),
        ("127.0.0.1:0", "127.0.0.1"),
        ("evil.example:80", "evil.example"),
        ("[::1", None),
        ("[::1]x", None),
        ("a:b", None),
        ("a:1:2", None),
        ("a b", None),
        ("", None),
        ("-a.example", None),
    ],
)
def test_host_name(header, name):
    assert host_name(header) == name


def test_rules_answer_loopback_the_extra_names_and_nothing_else():
    rules = HostRules.of(["Lab.Example.", "192.168.1.4"])
    for host in [*OUR_HOSTS, "lab.example:8000", "192.168.1.4:8000"]:
        assert rules.allows_host(host), host
    for host in FOREIGN_HOSTS:
        assert not rules.allows_host(host), host
    assert not rules.allows_host(None)
    assert not rules.allows_host("testserver")  # a name TestClient uses ...
    assert rules.allows_host("testserver", in_process=True)  # ... allowed for it alone
    assert rules.allows_origin("http://localhost:8000") and rules.allows_origin("https://lab.example")
    for origin in [
        "null",
        "http://evil.example",
        "ws://localhost",
        "file://",
        "http://localhost/x",
        "http://user@localhost",
        "localhost",
        "http://[::1",
    ]:
        assert not rules.allows_origin(origin), origin


@pytest.mark.parametrize("name", ["a b", "", "-x", "x" * 64 + ".example", "evil.example/x", "[::1"])
def test_normalize_name_refuses_what_no_host_header_can_hold(name):
    with pytest.raises(ValueError):
        normalize_name(name)


# -- HTTP -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_foreign_hosts_are_refused(client, method, path, body, host):
    r = client.request(method, path, json=body, headers={"host": host})
    assert_refused(r, "host")


@pytest.mark.parametrize(("method", "path", "body"), REQUESTS)
def test_rebinding_is_refused_host_and_origin_both_evil(client, method, path, body):
    headers = {"host": "evil.example:8000", "origin": "http://evil.example:8000"}
    assert_refused(client.request(method, path, json=body, headers=headers), "host")


@pytest.mark.parametrize("host", OUR_HOSTS)
def test_our_own_names_are_answered(client, host):
    assert client.get("/", headers={"host": host}).status_code == 200
    r = client.post("/api/trace", json=WORKED, headers={"host": host, "origin": f"http://{host}"})
    assert r.status_code == 200


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1.evil.example:8000"])
@pytest.mark.parametrize(("method", "path", "body"), REQUESTS[1:])
def test_changes_from_another_sites_page_are_refused(client, method, path, body, origin):
    r = client.request(method, path, json=body, headers={"host": "127.0.0.1:8000", "origin": origin})
    assert_refused(r, "origin")


@pytest.mark.parametrize(
    "origin", ["https://127.0.0.1:9999", "https://127.0.0.1:8000", "http://127.0.0.1:9999", "http://127.0.0.1"]
)
@pytest.mark.parametrize(("method", "path", "body"), REQUESTS[1:])
def test_a_page_of_another_scheme_or_port_is_another_site(client, method, path, body, origin):
    # Before: the Origin check ignored scheme and port: https://127.0.0.1:9999 (another server on this
    # machine) could start model jobs on the lab at http://127.0.0.1:8000.
    r = client.request(method, path, json=body, headers={"host": "127.0.0.1:8000", "origin": origin})
    assert_refused(r, "origin")


def test_the_origin_must_have_the_requests_own_scheme_and_port():
    rules = HostRules.of()
    assert rules.allows_origin("http://localhost:8000", scheme="http", port=8000)  # another of our names
    assert rules.allows_origin("http://127.0.0.1", scheme="http", port=80)  # the default port, unsaid
    assert not rules.allows_origin("https://127.0.0.1:8000", scheme="http", port=8000)
    assert not rules.allows_origin("http://127.0.0.1:8001", scheme="http", port=8000)
    assert not rules.allows_origin("http://127.0.0.1:99999", scheme="http", port=8000)  # no such port
    assert (host_port("127.0.0.1:8000", "http"), host_port("[::1]", "https"), host_port("x:y", "http")) == (
        8000, 443, None,
    )  # fmt: skip


def test_reading_is_left_to_the_same_origin_policy(client):
    # A GET changes nothing; the browser keeps another site's page from reading the answer.
    assert client.get("/", headers={"origin": "http://evil.example"}).status_code == 200


def test_allowed_hosts_add_names():
    with TestClient(create_app(allowed_hosts=["lab.example"]), base_url="http://lab.example:8000") as c:
        r = c.post("/api/trace", json=WORKED, headers={"origin": "http://lab.example:8000"})
        assert r.status_code == 200
        assert_refused(c.get("/", headers={"host": "evil.example"}), "host")


# -- WebSocket ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"host": "evil.example:8000"},
        {"host": "evil.example:8000", "origin": "http://evil.example:8000"},  # rebinding
        {"host": "127.0.0.1:8000", "origin": "http://evil.example:8000"},
        {"host": "127.0.0.1:8000", "origin": "null"},
        {"origin": "http://testserver.evil.example"},
    ],
)
def test_the_socket_refuses_other_sites(client, headers):
    with pytest.raises(WebSocketDenialResponse) as refused:
        with client.websocket_connect("/api/trace/ws", headers=headers):
            pass  # pragma: no cover - never accepted
    response = refused.value
    assert response.status_code == 403
    assert_guarded(response)
    assert response.json()["detail"][0]["type"].endswith("_refused")


def test_the_socket_closes_1008_where_the_server_cannot_answer_403(run_async):
    """A server without the ``websocket.http.response`` extension gets a close before the handshake."""
    sent: list[dict] = []

    async def main() -> None:
        async def receive() -> dict:
            return {"type": "websocket.connect"}

        async def send(message: dict) -> None:
            sent.append(message)

        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "scheme": "ws",
            "path": "/api/trace/ws",
            "raw_path": b"/api/trace/ws",
            "query_string": b"",
            "root_path": "",
            "subprotocols": [],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "headers": [(b"host", b"evil.example:8000"), (b"origin", b"http://evil.example:8000")],
        }
        await create_app()(scope, receive, send)

    run_async(main)
    assert sent == [{"type": "websocket.close", "code": 1008, "reason": "host_refused"}]


@pytest.mark.parametrize(
    "headers",
    [{}, {"origin": "http://testserver"}, {"host": "localhost:8000", "origin": "http://localhost:8000"}],
)
def test_the_socket_answers_its_own_page_and_clients_without_an_origin(client, headers):
    with client.websocket_connect("/api/trace/ws", headers=headers) as ws:
        ws.send_text(json.dumps(WORKED))
        assert json.loads(ws.receive_text())["status"] == 200


# -- a real server on a socket --------------------------------------------------------------------


def raw_request(port: int, host: str, extra: str = "") -> tuple[int, dict]:
    """Send one GET with the given Host header; return the status and headers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        conn.putrequest("GET", "/api/example", skip_host=True)
        conn.putheader("Host", host)
        for line in filter(None, extra.split("\n")):
            name, value = line.split(": ", 1)
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


def test_a_real_server_refuses_forged_hosts_testserver_included():
    with serving(create_app()) as (_, port):
        assert raw_request(port, f"127.0.0.1:{port}")[0] == 200
        assert raw_request(port, f"localhost:{port}")[0] == 200
        for host in ["evil.example", "testserver", f"testserver:{port}"]:
            status, headers = raw_request(port, host)
            assert status == 403 and headers["content-security-policy"] == CSP, host
        # No proxy header can make a socket client pass for the in-process test client.
        assert raw_request(port, "testserver", "X-Forwarded-For: testclient")[0] == 403


def test_a_real_servers_socket_refuses_rebinding_and_other_pages():
    handshake = (
        "GET /api/trace/ws HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
    )
    with serving(create_app()) as (_, port):
        for host, origin in [
            ("evil.example:8000", "http://evil.example:8000"),
            (f"127.0.0.1:{port}", "http://evil.example:8000"),
        ]:
            with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw:
                raw.sendall(handshake.format(host=host, origin=origin).encode())
                assert raw.recv(64).startswith(b"HTTP/1.1 403"), (host, origin)
        with pytest.raises(InvalidStatus) as refused:
            connect(f"ws://127.0.0.1:{port}/api/trace/ws", origin="http://evil.example", open_timeout=WAIT_S)
        assert refused.value.response.status_code == 403
        with connect(
            f"ws://127.0.0.1:{port}/api/trace/ws", origin=f"http://localhost:{port}", open_timeout=WAIT_S
        ) as ws:
            ws.send(json.dumps(WORKED))
            assert json.loads(ws.recv(timeout=WAIT_S))["status"] == 200


def test_serve_allow_host_adds_a_name():
    command = ["serve", "--no-browser", "--port", "0", "--allow-host", "Lab.Example."]
    lab = subprocess.Popen(
        [sys.executable, "-m", "attnlab", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = lab.stdout.readline()
        assert "the lab is at" in line, lab.stderr.read()
        port = int(line.split("the lab is at ")[1].split()[0].rstrip("/").rsplit(":", 1)[1])
        assert raw_request(port, f"lab.example:{port}")[0] == 200
        assert raw_request(port, f"127.0.0.1:{port}")[0] == 200
        assert raw_request(port, "evil.example")[0] == 403
    finally:
        lab.send_signal(signal.SIGINT)
        lab.communicate(timeout=WAIT_S)
    assert lab.returncode == 0


# -- the headers on every status ------------------------------------------------------------------


@pytest.fixture(scope="module")
def odd_client():
    app = create_app()

    @app.get("/test-only/boom")
    def boom() -> dict:
        raise RuntimeError("a bug")

    @app.get("/test-only/busy")
    def busy() -> dict:
        raise HTTPException(status_code=429, detail="busy", headers={"Retry-After": "5"})

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_every_status_carries_the_headers(odd_client):
    c = odd_client
    ok = c.get("/static/css/lab.css")
    answers = {
        200: ok,
        304: c.get("/static/css/lab.css", headers={"if-none-match": ok.headers["etag"]}),
        403: c.get("/", headers={"host": "evil.example"}),
        404: c.get("/static/missing.js"),
        405: c.get("/api/trace"),
        413: c.post("/api/trace", content=b"[" * (MAX_BODY_BYTES + 1)),
        422: c.post("/api/trace", json={**WORKED, "q": [2, "x"]}),
        429: c.get("/test-only/busy"),
        500: c.get("/test-only/boom"),
    }
    for status, response in answers.items():
        assert response.status_code == status
        assert_guarded(response)


def test_a_500_is_clean_json_in_the_errors_shape(odd_client):
    r = odd_client.get("/test-only/boom")
    assert r.status_code == 500
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {
        "detail": [
            {
                "loc": ["body"],
                "field": "body",
                "msg": "the server failed on this request",
                "type": "server_error",
            }
        ]
    }
    assert "a bug" not in r.text and "Traceback" not in r.text
