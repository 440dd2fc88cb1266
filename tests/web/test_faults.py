"""Bad input is a 4xx with the security headers, never a 5xx; stalled clients and stops end cleanly.

Nothing here is timed: the timeouts are bounds on a hang, and the body-read
timeout is shortened only so that it fires at all within a test.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import urllib.request

import anyio
import pytest
from fastapi.testclient import TestClient

from attnlab.cli import main
from attnlab.web.app import CSP, create_app
from attnlab.web.server import serving

WORKED = {"q": [2, 1], "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]]}
WAIT_S = 60  # only a bound on a hang: nothing is timed
DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def assert_body_error(response, status: int = 422) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-security-policy"] == CSP
    (item,) = response.json()["detail"]
    assert item["loc"] == ["body"] and item["field"] == "body"
    return item


# -- deeply nested JSON ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/api/trace",
        "/api/notebook/import",
        "/api/state",
        "/api/models/generate",
        "/api/models/jobs",
    ],
)
@pytest.mark.parametrize("body", [DEEP, '{"q": ' + DEEP + "}", '{"text": ' + DEEP + "}"])
def test_json_nested_thousands_deep_is_a_422(client, path, body):
    r = client.post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.headers["content-security-policy"] == CSP


def test_the_body_nesting_too_deep_for_the_parser_is_named(client):
    r = client.post("/api/trace", content=DEEP, headers={"content-type": "application/json"})
    item = assert_body_error(r)
    assert item["type"] == "json_too_deep" and "nests too deeply" in item["msg"]


def test_a_recursion_error_from_a_routes_own_parsing_is_a_422():
    app = create_app()

    @app.post("/test-only/parse")
    def parse(body: dict) -> dict:
        return {"parsed": json.loads(body["text"])}

    with TestClient(app) as c:
        r = c.post("/test-only/parse", json={"text": "[" * 100_000 + "]" * 100_000})
    assert assert_body_error(r)["type"] == "json_too_deep"


def test_a_notebook_import_of_deep_json_text_is_a_422(client):
    r = client.post("/api/notebook/import", json={"text": "[" * 20_000 + "]" * 20_000})
    assert r.status_code == 422 and r.headers["content-security-policy"] == CSP


# -- static paths the file system refuses ---------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/static/%00",
        "/static/a%00b.js",
        "/static/" + "a" * 300,
        "/static/" + "a" * 300 + "/b.js",
        "/static/" + "a/" * 3000,
        "/static/..%2f..%2fpyproject.toml",
        "/static/%2e%2e/app.py",
        "/static/js",
    ],
)
def test_static_paths_the_file_system_refuses_are_404(client, path):
    r = client.get(path)
    assert r.status_code == 404
    assert r.headers["content-security-policy"] == CSP


# -- the socket -----------------------------------------------------------------------------------


def test_binary_frames_close_with_1003_on_a_real_server():
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with serving(create_app()) as (_, port):
        with connect(f"ws://127.0.0.1:{port}/api/trace/ws", open_timeout=WAIT_S) as ws:
            ws.send(b"\x00\xff")
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=WAIT_S)
    assert closed.value.rcvd.code == 1003 and closed.value.rcvd.reason


# -- stalled bodies -------------------------------------------------------------------------------


def test_a_body_that_never_arrives_is_answered_408_and_the_connection_closed(run_async):
    """At the ASGI level: the body's first chunk comes, the rest never does."""
    app = create_app(body_timeout=0.01)
    sent: list[dict] = []

    async def main_() -> None:
        chunks = [{"type": "http.request", "body": b'{"q": [2', "more_body": True}]

        async def receive() -> dict:
            if chunks:
                return chunks.pop()
            await anyio.sleep_forever()

        async def send(message: dict) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/api/trace",
            "raw_path": b"/api/trace",
            "query_string": b"",
            "root_path": "",
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
            "headers": [
                (b"host", b"127.0.0.1:8000"),
                (b"content-length", b"100"),
                (b"content-type", b"application/json"),
            ],
        }
        with anyio.fail_after(WAIT_S):
            await app(scope, receive, send)

    run_async(main_)
    start, body = sent[0], sent[1]
    headers = dict(start["headers"])
    assert start["status"] == 408
    assert headers[b"connection"] == b"close" and headers[b"content-security-policy"] == CSP.encode()
    assert json.loads(body["body"])["detail"][0]["type"] == "body_timeout"


def test_a_real_server_closes_a_connection_whose_body_stalls():
    with serving(create_app(body_timeout=0.2)) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as raw:
            raw.sendall(
                b"POST /api/trace HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b'Content-Length: 100\r\n\r\n{"q": [2'
            )
            answer = b""
            while chunk := raw.recv(4096):  # to the end: the server closes the connection
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 408")
    assert b"body_timeout" in answer


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv", [["serve", "--port", "99999"], ["--port", "-1"], ["serve", "--port", "http"]]
)
def test_a_port_out_of_range_is_one_line_and_status_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("attnlab: error: argument --port: ")


def test_a_port_out_of_range_through_the_real_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "attnlab", "serve", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert out.returncode == 2
    assert out.stderr == "attnlab: error: argument --port: 99999 is not a port number (0 to 65535)\n"


# -- stopping -------------------------------------------------------------------------------------

# The lab with model jobs whose model takes a minute a layer (attnlab.models.toy): queued and
# running jobs when the signal comes.
SLOW_LAB = textwrap.dedent(
    """
    import sys
    from attnlab.models import toy
    from attnlab.models.jobs import line as jobs
    from attnlab.web.realmodel import line

    jobs.JOBS = line.JOBS = jobs.Jobs(loader=toy.load_slow)
    from attnlab.cli import main

    sys.exit(main(sys.argv[1:]))
    """
)


class Lab:
    """``attnlab serve`` in a subprocess (or ``SLOW_LAB`` when ``slow``), on a port it picks."""

    def __init__(self, *, slow: bool = False) -> None:
        start = ["-c", SLOW_LAB] if slow else ["-m", "attnlab"]
        self.proc = subprocess.Popen(
            [sys.executable, *start, "serve", "--no-browser", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ},
        )
        line = self.proc.stdout.readline()
        assert "the lab is at" in line, self.proc.stderr.read()
        self.port = int(line.split("the lab is at ")[1].split()[0].rstrip("/").rsplit(":", 1)[1])
        self.url = f"http://127.0.0.1:{self.port}"

    def post(self, path: str, body: dict) -> int:
        request = urllib.request.Request(
            self.url + path, json.dumps(body).encode(), {"content-type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=WAIT_S) as r:
            return r.status

    def stop(self, sig: signal.Signals) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=10)  # the note says 2 s; this only bounds a hang
        return self.proc.returncode, out, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_lab_cleanly_with_connections_open(sig):
    from websockets.sync.client import connect

    lab = Lab()
    keep_alive = http.client.HTTPConnection("127.0.0.1", lab.port, timeout=WAIT_S)
    keep_alive.request("GET", "/static/css/lab.css")
    assert keep_alive.getresponse().read()
    stalled = socket.create_connection(("127.0.0.1", lab.port), timeout=WAIT_S)  # a body that never comes
    stalled.sendall(b"POST /api/trace HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
    with connect(f"ws://127.0.0.1:{lab.port}/api/trace/ws", open_timeout=WAIT_S) as ws:
        ws.send(json.dumps(WORKED))
        assert json.loads(ws.recv(timeout=WAIT_S))["status"] == 200
        code, out, err = lab.stop(sig)
    keep_alive.close()
    stalled.close()
    assert code == 0, err
    assert out.rstrip().endswith("attnlab: stopped.")
    assert "Traceback" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_lab_with_model_jobs_running_and_queued(sig):
    lab = Lab(slow=True)
    for text in ("one two", "three four", "five six"):
        assert lab.post("/api/models/jobs", {"model": "minilm", "text": text}) == 202
    code, out, err = lab.stop(sig)
    assert code == 0, err
    assert out.rstrip().endswith("attnlab: stopped.")
    assert "Traceback" not in err
