"""Benchmark the lab: server start, API round trip, pointer-to-screen, page weight, first render.

Run: ``.venv/bin/python benchmarks/bench_lab.py [--requests 2000] [--moves 200]``

Prints, each against its target and against a peer measured in the same run:

- ready: ``attnlab serve`` from process start to the first answered
  GET /api/example, median of 5 starts (target < 2 s); peer: ``python -c pass``
  start-up. ``--ready-only`` prints just this figure (and each start).
- API: POST /api/trace for one drag update on loopback with keep-alive, p50 and
  p95 over N requests (target p95 < 5 ms); peer: GET of a small static file on
  the same connection (the cost of the HTTP stack alone).
- pointer-to-screen in headless Chromium: a pointer move to the engine's numbers
  in the DOM (``attnlab:pointer-to-dom``) and to the next animation frame
  (``attnlab:pointer-to-frame``), p50/p95 over M moves (target p95 < 16 ms).
  Each move is timed from its input event's ``timeStamp`` (match.js), so the
  wait before the handler runs counts: the page listens to ``pointerrawupdate``
  because Chrome holds ``pointermove`` back to the next animation frame.
- page weight: bytes of every response of the first load (target < 200 KB).
- first render: navigation start to the first frame with numbers, median of
  5 fresh loads (target < 500 ms).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
STATE = {
    "q": [2.0, 1.0],
    "keys": [[-1.0, 2.0], [1.0, 0.0], [0.0, 1.0]],
    "values": [[2.0, 0.0], [0.0, 2.0], [-1.0, -1.0]],
    "labels": ["A", "B", "C"],
    "allowed": [True, True, True],
    "scale": None,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def start_server(port: int) -> tuple[subprocess.Popen, float]:
    """Start the lab; return it and the seconds until it answered a request."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "attnlab", "serve", "--no-browser", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    while True:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/api/example")
            conn.getresponse().read()
            conn.close()
            return proc, time.perf_counter() - t0
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("the server exited") from None
            time.sleep(0.005)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=20)


def bench_ready(runs: int = 5) -> tuple[list[float], float]:
    """Seconds from process start to the first answer, per start; and the peer's median."""
    times = []
    for _ in range(runs):
        proc, ready = start_server(free_port())
        times.append(ready)
        stop(proc)
    peers = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        peers.append(time.perf_counter() - t0)
    return times, statistics.median(peers)


def bench_api(port: int, n: int) -> tuple[list[float], list[float]]:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"content-type": "application/json", "connection": "keep-alive"}
    drags, peers = [], []
    for i in range(n + 50):
        # A drag: q walks a small circle, two decimals like the page sends.
        state = {**STATE, "q": [round(2 + (i % 97) / 50, 2), round(1 - (i % 89) / 40, 2)]}
        body = json.dumps(state)
        t0 = time.perf_counter()
        conn.request("POST", "/api/trace", body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        t1 = time.perf_counter()
        assert r.status == 200, r.status
        conn.request("GET", "/static/js/words.js", headers=headers)
        r = conn.getresponse()
        r.read()
        t2 = time.perf_counter()
        if i >= 50:  # warm-up
            drags.append((t1 - t0) * 1e3)
            peers.append((t2 - t1) * 1e3)
    conn.close()
    return drags, peers


def bench_browser(url: str, moves: int) -> dict:
    from playwright.sync_api import expect, sync_playwright

    out: dict = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        # First render and page weight: fresh contexts, nothing cached.
        renders, weights = [], []
        for _ in range(5):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            sizes: list[tuple[int, str]] = []
            page.on("response", lambda r, sizes=sizes: sizes.append((len(r.body()), r.url)))
            page.goto(url)
            expect(page.locator("#summary")).to_contain_text("Output o")
            page.wait_for_timeout(100)
            renders.append(
                page.evaluate("() => performance.getEntriesByName('attnlab:first-render')[0].startTime")
            )
            weights.append(sum(n for n, _ in sizes))
            out["largest"] = sorted(sizes, reverse=True)[:5]
            context.close()
        out["first_render_ms"] = statistics.median(renders)
        out["page_bytes"] = max(weights)

        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(url)
        expect(page.locator("#summary")).to_contain_text("Output o")
        page.locator("#match-plot").scroll_into_view_if_needed()  # the whole plane on screen
        box = page.locator("#match-plot").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(cx, cy)
        page.mouse.down()
        page.evaluate("() => performance.clearMeasures()")
        for i in range(moves):
            # A figure-eight over the middle of the plane, one move per ~16 ms frame.
            t = i / moves * 6.283
            x = cx + box["width"] * 0.3 * (1 if i % 2 else 0.9) * math.sin(t)
            y = cy + box["height"] * 0.3 * math.sin(2 * t) / 2
            page.mouse.move(x, y)
            page.wait_for_timeout(16)
        page.mouse.up()
        page.wait_for_timeout(300)
        for name in ("dom", "frame"):
            out[f"pointer_to_{name}"] = page.evaluate(
                f"() => performance.getEntriesByName('attnlab:pointer-to-{name}').map(e => e.duration)"
            )
        context.close()
        browser.close()
    return out


def row(name: str, value: str, target: str, peer: str = "", ratio: str = "") -> None:
    print(f"{name:<42} {value:>12} {target:>12} {peer:>14} {ratio:>8}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--ready-only", action="store_true", help="measure only the start-up time")
    args = parser.parse_args()
    os.chdir(ROOT)

    starts, peer_start = bench_ready()
    ready = statistics.median(starts)
    if args.ready_only:
        print("starts: " + ", ".join(f"{t * 1e3:.0f} ms" for t in starts))
        row("ready (process start -> first answer)", f"{ready * 1e3:.0f} ms", "< 2000 ms")
        row("peer: python -c pass", f"{peer_start * 1e3:.0f} ms", "", "", f"{ready / peer_start:.1f}x")
        return 0
    port = free_port()
    proc, _ = start_server(port)
    try:
        drags, peers = bench_api(port, args.requests)
        browser = bench_browser(f"http://127.0.0.1:{port}/", args.moves)
    finally:
        stop(proc)

    print(f"attnlab lab benchmark ({args.requests} API requests, {args.moves} pointer moves)")
    row("measure", "value", "target", "peer", "ratio")
    row(
        "ready (process start -> first answer)",
        f"{ready * 1e3:.0f} ms",
        "< 2000 ms",
        f"{peer_start * 1e3:.0f} ms",
        f"{ready / peer_start:.1f}x",
    )
    p50, p95 = pct(drags, 50), pct(drags, 95)
    row(
        "API drag update p50", f"{p50:.2f} ms", "", f"{pct(peers, 50):.2f} ms", f"{p50 / pct(peers, 50):.1f}x"
    )
    row(
        "API drag update p95",
        f"{p95:.2f} ms",
        "< 5 ms",
        f"{pct(peers, 95):.2f} ms",
        f"{p95 / pct(peers, 95):.1f}x",
    )
    for name in ("dom", "frame"):
        xs = browser[f"pointer_to_{name}"]
        row(f"pointer -> numbers ({name}) p50 [n={len(xs)}]", f"{pct(xs, 50):.2f} ms", "")
        row(f"pointer -> numbers ({name}) p95", f"{pct(xs, 95):.2f} ms", "< 16 ms")
    row("page weight (first load, all responses)", f"{browser['page_bytes'] / 1024:.1f} KB", "< 200 KB")
    row("first render (median of 5)", f"{browser['first_render_ms']:.0f} ms", "< 500 ms")
    print("largest responses of the first load:")
    for n, url in browser["largest"]:
        print(f"  {n / 1024:7.1f} KB  {url.split('/', 3)[-1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
