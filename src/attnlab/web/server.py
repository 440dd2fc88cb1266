"""Serve the lab with uvicorn: ``serve(host, port, open_browser) -> int``.

The socket is bound here, before uvicorn starts, so a taken port is noticed
at once and a free one picked (the message says so) without a race. A host
other than loopback gets a warning: the lab has no authentication. Ctrl-C
stops the server cleanly (uvicorn finishes open requests) and returns 0.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
import threading
import time
import webbrowser

LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str) -> bool:
    """Return True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> tuple[socket.socket, bool]:
    """Bind ``host:port``, or a free port on ``host`` when it is taken.

    Returns the listening socket and whether the asked-for port was taken.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        taken = False
    except OSError:
        sock.close()
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, 0))
        taken = True
    sock.listen(128)
    sock.set_inheritable(True)
    return sock, taken


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(host: str = "127.0.0.1", port: int = 8000, open_browser: bool = True) -> int:
    """Serve the lab until Ctrl-C; print the URL; open a browser unless told not to."""
    started_at = time.perf_counter()
    import uvicorn

    from attnlab.web.app import MAX_BODY_BYTES, create_app

    if not is_loopback(host):
        print(
            f"attnlab: warning: serving on {host}, not loopback: anyone who can reach this "
            "machine can use the lab (it has no login).",
            file=sys.stderr,
        )
    try:
        sock, taken = bind_socket(host, port)
    except OSError as error:
        print(f"attnlab: error: cannot listen on {host}: {error}", file=sys.stderr)
        return 2
    actual = sock.getsockname()[1]
    if taken:
        print(f"attnlab: port {port} is taken; using port {actual} instead.")
    url = url_for(host, actual)

    config = uvicorn.Config(
        create_app(),
        log_level="warning",
        lifespan="off",
        access_log=False,
        ws_max_size=MAX_BODY_BYTES,  # the same cap as a POST body
    )
    server = uvicorn.Server(config)

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
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    print("attnlab: stopped.")
    return 0
