"""Serve the lab with a class: ``serve_class(name, ...) -> int`` (``attnlab class``, ``serve --class``).

The class is made (or, with ``resume``, reopened) in its store before the socket
is served: SQLite in the user data folder (``$ATTNLAB_DATA_DIR`` or platformdirs'
``user_data_dir("attnlab")``, then ``classes/``), or the PostgreSQL database given.
A new teacher token is issued each start (earlier ones stay valid, so a teacher's
open page reconnects after a restart). The two addresses are printed, the join
address as a QR code too when the output is a terminal, and the browser opens the
teacher's. The rest is ``attnlab serve``'s (``web/server.py``): the same socket,
server, signals and stop.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import webbrowser
from collections.abc import Iterable
from pathlib import Path

import segno

from attnlab.classroom_store import ClassExists, NoSuchClass, SchemaTooNew, open_classes
from attnlab.engine.errors import FieldError
from attnlab.lab.classroom import names, terminal
from attnlab.web.classroom.room import Room, now_ms
from attnlab.web.server import (
    SWITCH_INTERVAL_S,
    bind_socket,
    is_loopback,
    make_server,
    stop_model_jobs,
    url_for,
)

WILDCARDS = ("0.0.0.0", "::")
NEW_STATE = {"paused": False, "pace": [], "push": None, "anonymised": False, "snapshot": None}


def data_folder() -> Path:
    """Where the SQLite classes are kept: ``$ATTNLAB_DATA_DIR/classes`` or the user data folder's."""
    chosen = os.environ.get("ATTNLAB_DATA_DIR")
    if chosen:
        return Path(chosen) / "classes"
    from platformdirs import user_data_dir

    return Path(user_data_dir("attnlab", appauthor=False)) / "classes"


def default_name() -> str:
    return time.strftime("class-%Y-%m-%d-%H%M")


def _fail(message: str) -> int:
    print(f"attnlab: error: {message}", file=sys.stderr)
    return 2


def open_room(name: str, *, database: str | None, resume: bool, join_url: str):
    """The class's store opened (made, or reopened), as a ``Room``; or the error's words (a str)."""
    try:
        classes = open_classes(database, data_folder())
    except ValueError:
        return terminal.bad_database()
    try:
        if resume:
            store = classes.open(name)
            store.reopen()
        else:
            store = classes.create(name, state=dict(NEW_STATE), now=now_ms())
    except ClassExists:
        classes.close()
        return terminal.exists(name)
    except NoSuchClass:
        classes.close()
        return terminal.missing(name)
    except SchemaTooNew as error:
        classes.close()
        return terminal.too_new(error.found, error.latest)
    return Room(classes=classes, store=store, join_url=join_url)


def serve_class(
    name: str | None, *, host: str = "127.0.0.1", port: int = 8000, open_browser: bool = True,
    allow_hosts: Iterable[str] = (), database: str | None = None, resume: bool = False,
) -> int:
    started_at = time.perf_counter()
    from attnlab.web.app import create_app

    allow_hosts = list(allow_hosts)
    name = name or default_name()
    try:
        names.class_name(name)
    except FieldError as error:
        return _fail(f"the class's name {error.problem}")
    if host in WILDCARDS and not allow_hosts:
        return _fail(terminal.wildcard_needs_name())
    join_host = allow_hosts[0] if allow_hosts else host
    teacher_host = "127.0.0.1" if (is_loopback(host) or host in WILDCARDS) else host
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        sock, taken = bind_socket(host, port)
    except OSError as error:
        return _fail(f"cannot listen on {host}: {error}")
    actual = sock.getsockname()[1]
    join_url = url_for(join_host, actual) + "class/join"
    try:
        room = open_room(name, database=database, resume=resume, join_url=join_url)
    except Exception as error:  # noqa: BLE001 - the database could not be reached: one line, status 2
        sock.close()
        return _fail(f"cannot open the class's database: {error}".splitlines()[0])
    if isinstance(room, str):
        sock.close()
        return _fail(room)
    token = room.issue_token()
    teacher_url = url_for(teacher_host, actual) + f"class/teacher?token={token}"
    room.teacher_url = teacher_url
    if taken:
        print(f"attnlab: port {port} is taken; using port {actual} instead.")
    for line in terminal.started(name, teacher_url, join_url, resumed=resume, where=room.classes.where):
        print(line)
    if sys.stdout.isatty():
        segno.make(join_url, error="m").terminal(compact=True)
    url = url_for(host, actual)
    app = create_app(allowed_hosts=[host, *allow_hosts], classroom=room)
    server = make_server(app, on_stop=stop_model_jobs)

    def announce() -> None:
        while not server.started and not server.should_exit:
            time.sleep(0.01)
        if server.started:
            ready = time.perf_counter() - started_at
            print(f"attnlab: the lab is at {url} (ready in {ready:.2f} s; Ctrl-C stops it)")
            sys.stdout.flush()
            if open_browser:
                webbrowser.open(teacher_url)

    threading.Thread(target=announce, daemon=True).start()
    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # one clean path, as `attnlab serve`
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        stop_model_jobs()
        room.close()
        room.classes.close()
    print("attnlab: stopped.")
    return 0
