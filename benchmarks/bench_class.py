"""A class under load: 60 learners' challenge walks with the teacher's view open, against no class.

    python benchmarks/bench_class.py            # 60 learners, 10 rounds each
    python benchmarks/bench_class.py --smoke    # 4 learners, 2 rounds (the suite runs this)

Each simulated learner (HTTP + WebSocket, one asyncio client process; the server is its own
process) walks a practice challenge: each round, 4 drag updates of q on the drag socket
(``/api/state/ws``, as the page sends them), a Check (``POST /api/notebook/study``) and, every
other round, a hint; ``THINK_S`` between actions. The same walk runs twice against
``attnlab serve``: with no class (the peer: the lab as it was), and with a class running
(``--class``: learners joined, each holding the class's socket like the bar, the teacher's
view open on its socket). Reported: p50 and p95 of a learner's action in each run, and of the
teacher view's update delay (from a check's acknowledgement to the first view that includes
it); errors (any answer not 200, any lost socket). Targets: learner p95 <= 2x the no-class
p95, teacher p95 <= 1 s, 0 errors. The machine's floor: a GET round trip to a minimal ASGI
app served the same way (``floor_app.py``), in the same run.

Then the crash: the class's walk again, the server killed with SIGKILL mid-walk, restarted
with ``--resume`` on the same port: every event acknowledged before the kill must be in the
database, and every learner's class socket must reconnect by itself (it retries as the
page's does); the time until the last one is back is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from websockets.asyncio.client import connect

from servers import ROOT, free_port, pct, start_floor, stop

THINK_S = 0.25
TEACHER = "127.0.1.1"  # the teacher's computer, to the server's per-address limits
RETRY_S = (0.5, 1.0, 2.0, 4.0, 5.0)  # the class socket's waits between tries, as js/classroom/live.js


def start_server(port: int, data: Path, *, name: str | None = None, resume: bool = False):
    """``attnlab serve`` (with ``--class NAME`` when named); its process and the teacher's token."""
    args = [sys.executable, "-m", "attnlab", "serve", "--no-browser", "--port", str(port)]
    if name:
        args += ["--class", name] + (["--resume"] if resume else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env={**os.environ, "ATTNLAB_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"})
    token = None
    for line in proc.stdout:
        found = re.search(r"token=(\S+)", line)
        if found:
            token = found.group(1)
        if "the lab is at" in line:
            break
    else:
        raise RuntimeError("the server did not start")
    return proc, token


def address(index: int) -> str:
    """Learner ``index``'s own loopback address: each learner on a computer of their own (as in
    bench_load.py), so the server's per-address limits see a class, not one machine."""
    return f"127.0.{2 + index // 250}.{1 + index % 250}"


class Walk:
    """One run of every learner's walk: latencies, the teacher's delays, errors."""

    def __init__(self) -> None:
        self.actions: list[float] = []
        self.delays: list[float] = []
        self.acked: dict[int, float] = {}  # event number -> when its check was acknowledged
        self.errors: list[str] = []
        self.reconnect_s: list[float] = []


async def learner(base: str, i: int, rounds: int, walk: Walk, held: dict, *, in_class: bool,
                  stop_event: asyncio.Event | None = None, prefix: str = "Learner") -> None:
    rng = random.Random(i)
    here = address(i)
    # idle connections are let go before the server's 5 s keep-alive closes them (as a browser
    # would retry one that the server closed just as a request left on it)
    transport = httpx.AsyncHTTPTransport(local_address=here, limits=httpx.Limits(keepalive_expiry=4.0))
    async with httpx.AsyncClient(base_url=base, timeout=30, transport=transport) as client:
        class_task = None
        if in_class:
            joined = await client.post("/api/class/join", json={"nickname": f"{prefix}-{i:02d}"})
            if joined.status_code == 201:
                cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
                class_task = asyncio.create_task(class_socket(base, cookie, walk, stop_event, here))
            else:
                walk.errors.append(f"join {joined.status_code}")
        await asyncio.sleep(rng.random() * THINK_S)
        try:
            async with connect(base.replace("http", "ws") + "api/state/ws", max_size=None,
                               local_addr=(here, 0)) as ws:
                study = {"version": 1}
                for r in range(rounds):
                    for _ in range(4):
                        q = [rng.uniform(-3, 3), rng.uniform(-3, 3)]
                        t0 = time.perf_counter()
                        await ws.send(json.dumps({"held": held, "edits": [{"kind": "query", "q": q}]}))
                        answer = await ws.recv()
                        walk.actions.append(time.perf_counter() - t0)
                        if not answer.startswith('{"status": 200,'):  # the answer itself is not read
                            walk.errors.append(f"drag {answer[:14]}")
                        await asyncio.sleep(THINK_S)
                    actions = [{"kind": "submit", "challenge": "zero-q", "response": [r * 10 % 100, 50, 50]}]
                    if r % 2 == 0:
                        actions.append({"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"})
                    for action in actions:
                        t0 = time.perf_counter()
                        answer = await client.post("/api/notebook/study",
                                                   json={"held": held, "study": study, "action": action})
                        walk.actions.append(time.perf_counter() - t0)
                        if answer.status_code != 200:
                            walk.errors.append(f"study {answer.status_code}")
                            continue
                        study = answer.json()["study"]
                        seq = answer.headers.get("x-attnlab-class-event")
                        if seq is not None:
                            walk.acked[int(seq)] = time.time()
                        await asyncio.sleep(THINK_S)
        except (OSError, httpx.HTTPError, Exception) as error:  # noqa: BLE001 - counted, not raised
            if stop_event is None or not stop_event.is_set():
                walk.errors.append(f"walk {type(error).__name__}")
        if class_task is not None and stop_event is None:
            class_task.cancel()
        elif class_task is not None:
            await class_task


async def class_socket(base: str, cookie: str, walk: Walk, stop_event: asyncio.Event | None,
                       here: str) -> None:
    """The class's socket, held like the bar holds it; after a drop, it retries as the page does."""
    url = base.replace("http", "ws") + "api/class/ws"
    lost_at = None
    tries = 0
    while True:
        try:
            async with connect(url, additional_headers={"cookie": cookie}, local_addr=(here, 0)) as ws:
                if lost_at is not None:
                    walk.reconnect_s.append(time.perf_counter() - lost_at)
                    return  # back: this learner's page reconnected by itself
                tries = 0
                async for _ in ws:
                    pass
        except asyncio.CancelledError:
            return
        except Exception:  # noqa: BLE001 - the server is away: wait and try again
            pass
        if stop_event is None:
            return
        if lost_at is None:
            lost_at = time.perf_counter()
        await asyncio.sleep(RETRY_S[min(tries, len(RETRY_S) - 1)])
        tries += 1


async def teacher(base: str, token: str, walk: Walk, done: asyncio.Event) -> None:
    url = base.replace("http", "ws") + "api/class/teacher/ws"
    bearer = {"authorization": f"Bearer {token}"}
    async with connect(url, additional_headers=bearer, max_size=None, local_addr=(TEACHER, 0)) as ws:
        seen = 0
        while not done.is_set():
            try:
                message = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
            except asyncio.TimeoutError:
                continue
            now = time.time()
            through = message["view"]["through"]
            for seq in range(seen + 1, through + 1):
                if seq in walk.acked:
                    walk.delays.append(now - walk.acked[seq])
            seen = max(seen, through)


async def run_walk(base: str, n: int, rounds: int, *, token: str | None) -> Walk:
    walk = Walk()
    async with httpx.AsyncClient(base_url=base) as client:
        held = (await client.get("/api/example")).json()["sequence"]["example"]
    done = asyncio.Event()
    watcher = asyncio.create_task(teacher(base, token, walk, done)) if token else None
    await asyncio.sleep(0.3)
    in_class = token is not None
    await asyncio.gather(*(learner(base, i, rounds, walk, held, in_class=in_class) for i in range(n)))
    await asyncio.sleep(1.5)  # the last views
    done.set()
    if watcher:
        await watcher
    return walk


async def floor_rtt(port: int, n: int = 200) -> float:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            await client.get("/")
            times.append(time.perf_counter() - t0)
    return pct(times, 50)


async def crash(port: int, data: Path, name: str, n: int, rounds: int) -> tuple[int, int, bool, float]:
    """Walk, SIGKILL mid-walk, --resume; returns (acknowledged, kept, all kept?, last reconnect s)."""
    base = f"http://127.0.0.1:{port}/"
    proc, _ = start_server(port, data, name=name, resume=True)
    walk = Walk()
    stop_event = asyncio.Event()
    async with httpx.AsyncClient(base_url=base) as client:
        held = (await client.get("/api/example")).json()["sequence"]["example"]
    tasks = [asyncio.create_task(learner(base, i, rounds, walk, held, in_class=True, stop_event=stop_event,
                                         prefix="Crash"))
             for i in range(n)]
    while len(walk.acked) < max(5, n) and not all(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    stop_event.set()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    acked = set(walk.acked)
    again, new_token = start_server(port, data, name=name, resume=True)
    try:
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=60)
        bearer = {"authorization": f"Bearer {new_token}"}
        async with httpx.AsyncClient(base_url=base, headers=bearer) as client:
            kept = {e["seq"] for e in (await client.get("/api/class/teacher/export.json")).json()["events"]}
    finally:
        stop(again)
        again.stdout.close()
    back = len(walk.reconnect_s) == n
    last = max(walk.reconnect_s) if walk.reconnect_s else float("nan")
    return len(acked), len(kept), acked <= kept and back, last


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="4 learners, 2 rounds")
    parser.add_argument("--learners", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    n, rounds = (4, 2) if args.smoke else (args.learners, args.rounds)
    data = Path(tempfile.mkdtemp(prefix="attnlab-bench-class-"))  # the class database and logs: removed below
    try:
        floor_port = free_port()
        floor = start_floor(floor_port)
        try:
            floor = (floor, asyncio.run(floor_rtt(floor_port)))
        finally:
            stop(floor if isinstance(floor, subprocess.Popen) else floor[0])
        port = free_port()
        plain, _ = start_server(port, data)
        try:
            bare = asyncio.run(run_walk(f"http://127.0.0.1:{port}/", n, rounds, token=None))
        finally:
            stop(plain)
            plain.stdout.close()
        port = free_port()
        served, token = start_server(port, data, name="bench")
        try:
            cls = asyncio.run(run_walk(f"http://127.0.0.1:{port}/", n, rounds, token=token))
        finally:
            stop(served)
            served.stdout.close()
        acked, kept, whole, reconnect = asyncio.run(crash(port, data, "bench", n, rounds))
    finally:
        shutil.rmtree(data, ignore_errors=True)

    b50, b95 = pct(bare.actions, 50), pct(bare.actions, 95)
    c50, c95 = pct(cls.actions, 50), pct(cls.actions, 95)
    t50, t95 = (pct(cls.delays, 50), pct(cls.delays, 95)) if cls.delays else (float("nan"),) * 2
    errors = len(bare.errors) + len(cls.errors)
    print(f"A class under load: {n} learners x {rounds} rounds (4 drags, a check, a hint every other round)")
    print(f"{'':44}{'p50':>12}{'p95':>12}")
    print(f"{'learner action, no class (the peer)':44}{ms(b50):>12}{ms(b95):>12}")
    print(f"{'learner action, class running':44}{ms(c50):>12}{ms(c95):>12}")
    print(f"{'  ratio (class / no class)':44}{c50 / b50:>11.2f}x{c95 / b95:>11.2f}x")
    print(f"{'teacher view update delay':44}{ms(t50):>12}{ms(t95):>12}")
    print(f"{'machine floor: GET round trip (floor_app.py)':44}{ms(floor[1]):>12}")
    print(f"actions timed: {len(bare.actions)} without a class, {len(cls.actions)} with; "
          f"checks and hints acknowledged: {len(cls.acked)}; teacher delays measured: {len(cls.delays)}")
    print(f"errors: {errors} (without a class {len(bare.errors)}, with {len(cls.errors)}) "
          f"{sorted(set(bare.errors + cls.errors))[:5]}")
    print(f"crash: {acked} events acknowledged before kill -9; {kept} in the database after --resume; "
          f"all kept and every class socket back: {'yes' if whole else 'NO'} "
          f"(the last within {reconnect:.2f} s of the restart)")
    met = c95 <= 2 * b95 and t95 <= 1.0 and errors == 0 and whole
    verdict = "met" if met else "NOT met"
    print(f"targets (learner p95 <= 2x, teacher p95 <= 1 s, 0 errors, nothing lost): {verdict}")
    return 0 if (met or args.smoke) and whole and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
