"""`attnlab` / `attnlab serve` through the real entry point, as a person runs it."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from attnlab.web.app import create_app
from attnlab.web.server import bind_socket, is_loopback, serving, url_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Running:
    """A served lab in a subprocess; reads its output line by line."""

    def __init__(self, *args: str, env: dict | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "attnlab", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self.lines: list[str] = []

    def wait_for_url(self) -> str:
        while True:
            line = self.proc.stdout.readline()
            assert line, f"server exited: {self.proc.stderr.read()}"
            self.lines.append(line)
            if "the lab is at" in line:
                return line.split("the lab is at ")[1].split()[0]

    def interrupt(self) -> tuple[int, str, str]:
        self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=20)
        return self.proc.returncode, "".join(self.lines) + out, err


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.4", False),
        ("example.org", False),
    ],
)
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_bind_socket_picks_a_free_port_when_taken():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        sock, was_taken = bind_socket("127.0.0.1", port)
        with sock:
            assert was_taken is True
            assert sock.getsockname()[1] != port
        sock, was_taken = bind_socket("127.0.0.1", free_port())
        with sock:
            assert was_taken is False


def test_bind_socket_makes_a_tcp_socket():
    # asyncio sets TCP_NODELAY only on connections accepted from a socket made with IPPROTO_TCP.
    sock, _ = bind_socket("127.0.0.1", 0)
    with sock:
        assert sock.proto == socket.IPPROTO_TCP


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", pytest.param("::1", marks=pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6"))],
)
def test_every_accepted_connection_has_tcp_nodelay(host):
    """Without it a keep-alive answer waits ~40 ms (Nagle's algorithm meets the client's delayed ACK)."""
    # A keep-alive timeout no test can outlast: the connections stay open to be looked at.
    with serving(create_app(), host=host, timeout_keep_alive=600) as (server, port):
        clients = [http.client.HTTPConnection(host, port, timeout=60) for _ in range(2)]
        try:
            for client in clients:
                client.request("GET", "/static/css/lab.css")
                assert client.getresponse().read()
            with connect(f"ws://{url_for(host, port)[7:]}api/trace/ws", open_timeout=60) as ws:
                ws.send("{}")
                assert ws.recv(timeout=60)
                # The server's own end of each open connection: two keep-alive, one WebSocket.
                accepted = [c.transport.get_extra_info("socket") for c in server.server_state.connections]
                assert len(accepted) == 3
                for sock in accepted:
                    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        finally:
            for client in clients:
                client.close()


def test_url_for_brackets_ipv6():
    assert url_for("::1", 8000) == "http://[::1]:8000/"
    assert url_for("127.0.0.1", 8000) == "http://127.0.0.1:8000/"


def test_plain_attnlab_serves_the_lab_and_stops_cleanly_on_ctrl_c():
    port = free_port()
    lab = Running("--no-browser", "--port", str(port))
    url = lab.wait_for_url()
    assert url == f"http://127.0.0.1:{port}/"
    with urllib.request.urlopen(url + "api/example", timeout=10) as r:
        assert r.status == 200
    with urllib.request.urlopen(url, timeout=10) as r:
        assert b"Follow one query through attention" in r.read()
    code, out, err = lab.interrupt()
    assert code == 0, err
    assert "stopped" in out
    assert "Traceback" not in err


def test_a_start_removes_the_spill_folders_of_servers_that_are_gone(tmp_path):
    # Before: a server killed with kill -9 left its spill folder in /tmp for good.
    left = tmp_path / "attnlab-traces-4194999-1-abc123"  # a process id no process has
    (left / "x").mkdir(parents=True)
    (left / "x" / "job.1.bin").write_bytes(b"\0" * 4096)
    lab = Running("serve", "--no-browser", "--port", str(free_port()), env={"TMPDIR": str(tmp_path)})
    lab.wait_for_url()
    assert not left.exists()
    code, _, err = lab.interrupt()
    assert code == 0, err


def test_taken_port_is_replaced_and_said(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        lab = Running("serve", "--no-browser", "--port", str(port))
        url = lab.wait_for_url()
        code, out, _ = lab.interrupt()
    assert f"port {port} is taken; using port" in out
    assert url != f"http://127.0.0.1:{port}/"
    assert code == 0


def test_non_loopback_host_warns():
    lab = Running("serve", "--no-browser", "--host", "0.0.0.0", "--port", str(free_port()))
    lab.wait_for_url()
    code, _, err = lab.interrupt()
    assert "warning: serving on 0.0.0.0, not loopback" in err
    assert code == 0


def test_opens_the_browser_unless_told_not_to(tmp_path: Path):
    record = tmp_path / "opened.txt"
    opener = tmp_path / "opener.py"
    opener.write_text(f"import sys, pathlib; pathlib.Path({str(record)!r}).write_text(sys.argv[1])\n")
    lab = Running("serve", "--port", str(free_port()), env={"BROWSER": f"{sys.executable} {opener} %s"})
    url = lab.wait_for_url()
    for _ in range(200):
        if record.exists() and record.read_text():
            break
        time.sleep(0.05)
    code, _, _ = lab.interrupt()
    assert record.read_text() == url
    assert code == 0


def test_the_server_starts_without_loading_libraries_only_some_requests_need():
    """Start-up stays fast: nbformat, latex2mathml, torch and transformers load on first use."""
    heavy = ["nbformat", "jsonschema", "latex2mathml", "torch", "transformers", "sentence_transformers"]
    probe = (
        "import sys, json\n"
        "from attnlab.web.app import create_app\n"
        "create_app()\n"
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
