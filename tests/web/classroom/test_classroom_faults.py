"""A class through the real entry point: kill -9 mid-walk and --resume keep every acknowledged event;
several `attnlab serve` processes share one class in PostgreSQL, the teacher's view fed by LISTEN/NOTIFY."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
from websockets.sync.client import connect

from classroomkit import ClassServer

EXAMPLE = None


def held(base: str) -> dict:
    global EXAMPLE
    if EXAMPLE is None:
        EXAMPLE = httpx.get(base + "api/example").json()["sequence"]["example"]
    return EXAMPLE


def learner(server: ClassServer, nickname: str) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=10)
    answer = client.post("/api/class/join", json={"nickname": nickname})
    assert answer.status_code == 201, answer.text
    return client


def checked(client: httpx.Client, base: str, response) -> int | None:
    """One Check of "zero-q": the event's number when the class acknowledged it."""
    answer = client.post("/api/notebook/study", json={
        "held": held(base), "study": {"version": 1},
        "action": {"kind": "submit", "challenge": "zero-q", "response": response}})
    return int(answer.headers["x-attnlab-class-event"]) if answer.status_code == 200 else None


def test_kill_9_mid_walk_then_resume_keeps_every_acknowledged_event(tmp_path):
    server = ClassServer("crash-test", tmp_path).start()
    again = None
    learners: list[httpx.Client] = []
    try:
        base = server.url
        learners = [learner(server, f"Kid {i}") for i in range(6)]
        acknowledged: list[int] = []
        lock = threading.Lock()
        stop = threading.Event()

        def walk(client: httpx.Client, i: int) -> None:
            n = 0
            while not stop.is_set():
                try:
                    seq = checked(client, base, [i, n % 100, 100 - i - n % 100])
                except httpx.HTTPError:
                    return  # the server died mid-request: not acknowledged
                if seq is not None:
                    with lock:
                        acknowledged.append(seq)
                n += 1

        threads = [threading.Thread(target=walk, args=(c, i)) for i, c in enumerate(learners)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(acknowledged) < 60 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.kill()  # kill -9, with checks in flight
        stop.set()
        for t in threads:
            t.join(timeout=20)
        before = sorted(acknowledged)
        assert len(before) >= 60

        again = ClassServer("crash-test", tmp_path, resume=True, port=server.port).start()
        with httpx.Client(base_url=again.url, headers={"authorization": f"Bearer {again.token}"}) as teacher:
            view = teacher.get("/api/class/teacher/view").json()
            kept = {e["seq"] for e in teacher.get("/api/class/teacher/export.json").json()["events"]}
        print(f"events acknowledged before the kill: {len(before)}; in the database after: {len(kept)}")
        assert set(before) <= kept
        assert view["summary"]["claims"]["joined"] == 6
        # the learners' cookies still name them: their pages carry on without joining again
        for i, client in enumerate(learners):
            me = client.get("/api/class/me").json()
            assert me["joined"] is True and me["in_class"]["text"].endswith(f"as Kid {i}")
            assert checked(client, again.url, [30, 40, 30]) == max(kept) + 1 + i
        # the token issued before the crash still opens the teacher's view
        old = httpx.get(again.url + "api/class/teacher/view",
                        headers={"authorization": f"Bearer {server.token}"})
        assert old.status_code == 200
    finally:
        for client in learners:
            client.close()
        server.stop()
        if again is not None:
            again.stop()


def test_two_processes_share_one_class_in_postgresql(tmp_path, pg_url):
    first = ClassServer("shared", tmp_path, database=pg_url).start()
    second = ClassServer("shared", tmp_path, database=pg_url, resume=True).start()
    ada = None
    try:
        with connect(first.url.replace("http", "ws") + "api/class/teacher/ws", open_timeout=10,
                     additional_headers={"authorization": f"Bearer {first.token}"}) as ws:
            view = json.loads(ws.recv(timeout=10))["view"]
            assert view["summary"]["claims"] == {"joined": 0, "connected": 0}
            ada = learner(second, "Ada")  # joins on the other process
            sent = time.monotonic()
            seq = checked(ada, second.url, [10, 80, 10])
            assert seq is not None
            while True:
                got = json.loads(ws.recv(timeout=5))["view"]
                if got["through"] >= seq:
                    break
            delay = time.monotonic() - sent
        assert delay < 1.0, delay
        assert got["summary"]["claims"]["joined"] == 1
        zero = next(r for r in got["challenges"]["rows"] if r["challenge"] == "zero-q")
        assert zero["counts"]["attempted"] == 1
        # the teacher's action on one process reaches a learner's page on the other
        cookie = "; ".join(f"{k}={v}" for k, v in ada.cookies.items())
        with connect(second.url.replace("http", "ws") + "api/class/ws", open_timeout=10,
                     additional_headers={"cookie": cookie}) as page:
            assert json.loads(page.recv(timeout=5))["paused"] is False
            paused = httpx.post(first.url + "api/class/teacher/pause", json={"paused": True},
                                headers={"authorization": f"Bearer {first.token}"})
            assert paused.status_code == 200
            while not json.loads(page.recv(timeout=5))["paused"]:
                pass
    finally:
        if ada is not None:
            ada.close()
        second.stop()
        first.stop()


@pytest.mark.parametrize("args, words", [
    (["Bad Name"], "the class's name must be 1 to 40 of a-z"),
    (["--resume", "missing"], "no class named “missing” is kept here"),
    (["--database", "mysql://x", "c"], "--database must be a postgresql:// address"),
    (["--host", "0.0.0.0", "c"], "needs the name learners will type: add --allow-host NAME"),
])
def test_the_class_command_refuses_in_one_line(tmp_path, args, words):
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "attnlab", "class", "--no-browser", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "ATTNLAB_DATA_DIR": str(tmp_path)})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("attnlab: error: ") and words in done.stderr
    assert done.stderr.count("\n") == 1
