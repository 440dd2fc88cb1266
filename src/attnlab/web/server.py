"""Serve the lab with uvicorn: ``serve(host, port, open_browser, allow_hosts) -> int``.

The socket is bound here, before uvicorn starts, so a taken port is noticed
at once and a free one picked (the message says so) without a race. It is a
TCP socket by protocol number (``IPPROTO_TCP``), not 0: asyncio sets
TCP_NODELAY only on connections accepted from such a socket, and without it
Nagle's algorithm and delayed ACKs hold each keep-alive answer for ~40 ms.

Connections that never finish are closed: a request's head (the request line
and headers) must arrive within ``HEADER_TIMEOUT_S`` of the connection or of
the previous answer (uvicorn's keep-alive timer, armed from the start; a
trickled head counts as none), an idle keep-alive connection closes after
``KEEP_ALIVE_S``, and one address holds at most ``PER_ADDRESS`` connections at
once, WebSockets included (more get a 503 and are closed). A body that trickles
is the guard's (``BODY_TIMEOUT_S``, ``attnlab.web.guard``).

The drag sockets send their answers uncompressed (no permessage-deflate): the
server would compress each on its event loop, where the time is no client's budget
and every other client waits (tens of ms for a 64 x 64 trace's answer). And the
server hands the GIL between its threads every ``SWITCH_INTERVAL_S`` (Python's
default is 5 ms): while a worker thread computes an answer, each system call of
the event loop waits for the GIL, and every other client's request waits with it
(``attnlab.web.fairness``; the figures are in docs/performance.md).

A host other than loopback gets a warning: the lab has no authentication.
The app answers the loopback names, the bound address and each
``allow_hosts`` name (``attnlab.web.hosts``). Ctrl-C (SIGINT) and SIGTERM
stop the server the same way: the model jobs are cancelled at once, open
requests get ``GRACEFUL_S`` to finish, "attnlab: stopped." is printed and 0
returned, all within about 2 s.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import signal
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

LOOPBACK_NAMES = {"localhost"}
GRACEFUL_S = 1.0  # what open connections get to finish when the server stops (uvicorn then cancels)
HEADER_TIMEOUT_S = 10.0  # a request's head must come within this of the connection or the last answer
KEEP_ALIVE_S = 5.0  # an idle keep-alive connection closes after this
PER_ADDRESS = 64  # connections one address may hold at once (a browser opens ~6; each laptop has its own)
SWITCH_INTERVAL_S = 0.0001  # the GIL handed between threads this often (the event loop waits less for it)
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"


def lab_protocol(*, header_timeout: float = HEADER_TIMEOUT_S, per_address: int = PER_ADDRESS) -> type:
    """uvicorn's h11 protocol with a deadline for each request's head and a cap on connections per address.

    The count of an address's connections lives with the server (one event loop: no lock); a
    connection upgraded to a WebSocket keeps its place until the WebSocket closes.
    """
    held: dict[str, int] = {}

    def release(host: str) -> None:
        held[host] -= 1
        if not held[host]:
            del held[host]

    class LabH11Protocol(H11Protocol):
        _host: str | None = None
        _head_timer = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            host = self.client[0] if self.client else "?"
            if held.get(host, 0) >= per_address:
                transport.write(_BUSY)
                transport.close()
                return
            self._host = host
            held[host] = held.get(host, 0) + 1
            self._await_head()

        def _await_head(self) -> None:
            # uvicorn's keep-alive timer stops at the first byte; this one only when a head is whole
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(header_timeout, self._head_late)

        def _head_late(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()  # no answer: the client never finished asking

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is not None and self.conn.their_state is not h11.IDLE:
                self._head_timer.cancel()  # the head is whole (h11 has moved on to the body or an upgrade)
                self._head_timer = None

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._await_head()

        def connection_lost(self, exc) -> None:
            super().connection_lost(exc)
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            if self._host is not None:
                release(self._host)
                self._host = None

        def handle_websocket_upgrade(self, event) -> None:
            host, self._host = self._host, None
            make = self.ws_protocol_class

            def counted(**kwargs):
                ws = make(**kwargs)
                lost = ws.connection_lost

                def connection_lost(exc) -> None:
                    lost(exc)
                    if host is not None:
                        release(host)

                ws.connection_lost = connection_lost
                return ws

            self.ws_protocol_class = counted
            super().handle_websocket_upgrade(event)

    return LabH11Protocol


def is_loopback(host: str) -> bool:
    """Return True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tcp_socket(family: socket.AddressFamily) -> socket.socket:
    # proto=IPPROTO_TCP, not 0: accepted sockets inherit it, and asyncio sets TCP_NODELAY only then.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # Linux also copies it to accepted sockets
    return sock


def bind_socket(host: str, port: int) -> tuple[socket.socket, bool]:
    """Bind ``host:port``, or a free port on ``host`` when it is taken.

    Returns the listening socket and whether the asked-for port was taken.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = _tcp_socket(family)
    try:
        sock.bind((host, port))
        taken = False
    except OSError:
        sock.close()
        sock = _tcp_socket(family)
        sock.bind((host, 0))
        taken = True
    sock.listen(128)
    sock.set_inheritable(True)
    return sock, taken


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def stop_model_jobs() -> None:
    """Cancel queued model jobs and stop the model's work without waiting (idempotent)."""
    from attnlab.models.jobs.line import JOBS

    shutdown = getattr(JOBS, "shutdown", None)  # absent in older jobs modules
    if shutdown is not None:
        shutdown()


class _StopNoise(logging.Filter):
    """Drop the traceback of a request that the stop itself cancelled (a body that never came, say)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, asyncio.CancelledError)


_STOP_NOISE = _StopNoise()  # one instance: adding it again is a no-op


class LabServer(uvicorn.Server):
    """uvicorn's server; ``on_stop`` (``serve``: stop the model jobs) runs before it waits for requests."""

    def __init__(self, config: uvicorn.Config, *, on_stop: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # A request waiting on a model job would otherwise hold the graceful wait to its end.
        if self.on_stop is not None:
            self.on_stop()
        # uvicorn still says how many requests it cut off after GRACEFUL_S; their tracebacks say nothing more.
        logging.getLogger("uvicorn.error").addFilter(_STOP_NOISE)
        await super().shutdown(sockets=sockets)


def make_server(app, *, on_stop: Callable[[], None] | None = None, **options) -> LabServer:
    """Return the server for ``app``; ``options`` go to ``uvicorn.Config`` (over the lab's own)."""
    from attnlab.web.app import MAX_BODY_BYTES

    settings = {
        "log_level": "warning",
        "lifespan": "off",
        "access_log": False,
        "ws_max_size": MAX_BODY_BYTES,  # the same cap as a POST body
        "ws_per_message_deflate": False,  # compressing an answer would hold the event loop (see the module)
        # No proxy sits in front of the lab: X-Forwarded-For must not rewrite the client.
        "proxy_headers": False,
        "timeout_graceful_shutdown": GRACEFUL_S,
        "timeout_keep_alive": KEEP_ALIVE_S,
        "http": lab_protocol(),
        # h11 reads at most this much of a request's head (uvicorn's default is 16 KiB as well)
        "h11_max_incomplete_event_size": 16 * 1024,
        **options,
    }
    return LabServer(uvicorn.Config(app, **settings), on_stop=on_stop)


@contextmanager
def serving(app, host: str = "127.0.0.1", **options) -> Iterator[tuple[LabServer, int]]:
    """Serve ``app`` on a free port of ``host`` in a thread until the block ends; yield server and port.

    For tests and benchmarks: the same socket and server as ``serve``, without signals, and
    the process's model jobs are left running (they are not this server's alone).
    """
    sock, _ = bind_socket(host, 0)
    server = make_server(app, **options)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the server thread stopped before it started")
            time.sleep(0.01)
        yield server, sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def serve(
    host: str = "127.0.0.1", port: int = 8000, open_browser: bool = True, allow_hosts: Iterable[str] = ()
) -> int:
    """Serve the lab until Ctrl-C or SIGTERM; print the URL; open a browser unless told not to.

    First the spill folders of servers that are gone (killed with ``kill -9``, say) are removed
    (``models/jobs/kept.remove_leftovers``): each server removes its own at exit, if it can.
    """
    started_at = time.perf_counter()
    from attnlab.models.jobs.kept import remove_leftovers
    from attnlab.web.app import create_app

    remove_leftovers()

    sys.setswitchinterval(SWITCH_INTERVAL_S)  # this process is the server's: see the module

    try:
        sock, taken = bind_socket(host, port)
    except OSError as error:  # one line: a host that cannot be bound gets no warning about serving on it
        print(f"attnlab: error: cannot listen on {host}: {error}", file=sys.stderr)
        return 2
    if not is_loopback(host):
        print(
            f"attnlab: warning: serving on {host}, not loopback: anyone who can reach this "
            "machine can use the lab (it has no login). Other machines must use a name it "
            "answers to: this address, or one given with --allow-host NAME.",
            file=sys.stderr,
        )
    actual = sock.getsockname()[1]
    if taken:
        print(f"attnlab: port {port} is taken; using port {actual} instead.")
    url = url_for(host, actual)
    server = make_server(create_app(allowed_hosts=[host, *allow_hosts]), on_stop=stop_model_jobs)

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.01)
        if server.started:
            ready = time.perf_counter() - started_at
            print(f"attnlab: the lab is at {url} (ready in {ready:.2f} s; Ctrl-C stops it)")
            sys.stdout.flush()
            if open_browser:
                webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    previous = signal.getsignal(signal.SIGTERM)
    try:
        # uvicorn handles SIGINT and SIGTERM while it runs, then raises the signal again for the
        # handler it found: Python's own raises KeyboardInterrupt, SIGTERM's default would kill the
        # process (status -15, nothing printed). So SIGTERM gets SIGINT's handler: one clean path.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        stop_model_jobs()  # when it stopped before it started, too
    print("attnlab: stopped.")
    return 0
