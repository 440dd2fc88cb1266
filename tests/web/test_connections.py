"""Connections that never finish are closed, and one address cannot hold them all (web/server.py).

Real sockets against a real uvicorn server on a free loopback port. The deadlines are
shortened for the tests (``lab_protocol(header_timeout=...)``); the bounds asserted are
generous upper limits on behaviour (a connection is closed at all), never timings.
"""

from __future__ import annotations

import http.client
import json
import socket
import time

from websockets.sync.client import connect

from attnlab.web.app import create_app
from attnlab.web.server import HEADER_TIMEOUT_S, KEEP_ALIVE_S, PER_ADDRESS, lab_protocol, make_server, serving

WAIT_S = 20.0
HEAD = b"GET /api/example HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def closed_within(raw: socket.socket, seconds: float) -> bytes:
    """Read until the server closes ``raw``; fail if it is still open after ``seconds``."""
    raw.settimeout(seconds)
    got = b""
    while chunk := raw.recv(4096):
        got += chunk
    return got


def test_the_defaults_are_set_on_the_real_server():
    config = make_server(create_app()).config
    assert config.timeout_keep_alive == KEEP_ALIVE_S
    assert config.http.__name__ == "LabH11Protocol"
    assert 0 < HEADER_TIMEOUT_S <= 30 and 0 < KEEP_ALIVE_S <= HEADER_TIMEOUT_S and PER_ADDRESS >= 16


def test_a_connection_that_sends_nothing_is_closed():
    # Before: 200 idle connections held for 45 s were never closed.
    with serving(create_app(), http=lab_protocol(header_timeout=0.5)) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw:
            assert closed_within(raw, WAIT_S) == b""  # closed, with no answer


def test_a_head_trickled_a_byte_at_a_time_gets_no_answer():
    # Before: headers trickled at 1 byte/s for 55 s got a 200.
    with serving(create_app(), http=lab_protocol(header_timeout=0.5)) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw:
            sent, start = 0, time.monotonic()
            try:
                while sent < len(HEAD) - 1 and time.monotonic() - start < WAIT_S:
                    raw.sendall(HEAD[sent : sent + 1])
                    sent += 1
                    time.sleep(0.05)
            except OSError:
                pass  # the server closed it under us: what we want
            assert sent < len(HEAD) - 1  # it did not wait for the whole trickle
            assert not closed_within(raw, WAIT_S).startswith(b"HTTP/1.1 200")


def test_keep_alive_requests_are_answered_and_the_idle_connection_is_closed_after():
    with serving(create_app(), http=lab_protocol(header_timeout=0.5), timeout_keep_alive=0.5) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw:
            for _ in range(2):  # two requests on one connection
                raw.sendall(HEAD)
                answer = b""
                while b"\r\n\r\n" not in answer:
                    answer += raw.recv(4096)
                assert answer.startswith(b"HTTP/1.1 200")
                length = int(answer.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
                body = answer.split(b"\r\n\r\n", 1)[1]
                while len(body) < length:
                    body += raw.recv(4096)
            assert closed_within(raw, WAIT_S) == b""  # then idle: closed


def test_one_address_holds_at_most_its_share_of_connections_websockets_included():
    protocol = lab_protocol(header_timeout=WAIT_S, per_address=3)
    with serving(create_app(), http=protocol) as (_, port):
        url = f"ws://127.0.0.1:{port}/api/trace/ws"
        with connect(url, open_timeout=WAIT_S) as ws, connect(url, open_timeout=WAIT_S):
            held = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
            time.sleep(0.2)  # let the server count it
            with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as fourth:
                assert closed_within(fourth, WAIT_S).startswith(b"HTTP/1.1 503")
            held.close()
            ws.close()
            time.sleep(0.2)
            # two places free again: a request goes through
            for _ in range(2):
                other = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
                other.request("GET", "/api/example")
                assert other.getresponse().status == 200
                other.close()


def test_a_500_says_connection_close_and_the_connection_is_closed():
    # Before: the guard's clean 500 JSON went out without "Connection: close", and the server
    # then closed the keep-alive connection under the client's next request.
    app = create_app()

    def boom() -> dict:
        raise RuntimeError("a bug, injected by the test")

    app.add_api_route("/test-only/boom", boom, methods=["GET"])
    with serving(app) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw:
            raw.sendall(b"GET /test-only/boom HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = closed_within(raw, WAIT_S)  # the server closes it after the answer
    head, body = answer.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 500 Internal Server Error"
    assert "connection: close" in [line.lower() for line in lines[1:]]
    assert json.loads(body) == {
        "detail": [{"loc": ["body"], "field": "body", "msg": "the server failed on this request",
                    "type": "server_error"}]
    }  # fmt: skip
