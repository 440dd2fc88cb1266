"""Benchmark the lab: server start, API round trip, pointer-to-screen, page weight, first render.

Run: ``.venv/bin/python benchmarks/bench_lab.py [--requests 2000] [--moves 200]``
(``--smoke``: one start, 20 requests, 10 moves, one load: checks that it runs)

Prints, each against its target and against a peer measured in the same run:

- ready: ``attnlab serve`` from process start to the first answered
  GET /api/example, median of 5 starts (target < 2 s); peer: ``python -c pass``
  start-up. ``--ready-only`` prints just this figure (and each start).
- HTTP: on keep-alive loopback connections, p50 and p95 over N requests of a
  static GET (target p95 <= 2x the floor) and of POST /api/trace for one drag
  update (target p95 < 5 ms). Peer: the machine's floor, a minimal ASGI app
  (``floor_app.py``) served the same way, measured interleaved in the same run.
  A figure alone once hid a 44 ms-per-request stall (Nagle's algorithm).
- pointer-to-screen in headless Chromium, printed both ways, p50/p95 over M moves:
  "frame ready": a pointer move to the engine's numbers in the DOM, ready for the
  next frame (``attnlab:pointer-to-dom``); "next frame": to the next animation
  frame after that (``attnlab:pointer-to-frame``), which also counts the wait for
  that frame. Target p95 < 16 ms. Each move is timed from its input event's
  ``timeStamp`` (match.js), so the wait before the handler runs counts: the page
  listens to ``pointerrawupdate`` because Chrome holds ``pointermove`` back to
  the next animation frame. Peer (floor): the same moves on a trivial page whose
  listener does nothing but wait for the next animation frame. That floor is the
  frame wait alone, which no page can avoid: up to one frame interval (16.7 ms
  at 60 Hz), so its p95 sits near 16 ms and the "next frame" figure can only
  meet 16 ms when the floor is lower; the "frame ready" figure is the page's own cost.
- page weight of the first load (target < 200 KB), two ways: the response
  bodies' bytes, and the transfer sizes the browser reports (Resource Timing
  ``transferSize``: headers and encoded bodies, the navigation included).
- first render: navigation start to the first frame with numbers, median of
  ``--loads`` (5) fresh loads with no response observer attached (target < 500 ms).

Without Chromium (or Playwright) the browser rows are skipped, with the reason printed.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import statistics
import subprocess
import sys
import time

from servers import ROOT, STATE, free_port, pct, start_floor, start_lab, stop
from smoke import add_flag, chromium_missing, skipped

NEEDS = ("browser",)  # what its smoke run needs beyond the test extra (tests/benchmarks)

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


def bench_ready(runs: int = 5) -> tuple[list[float], float]:
    """Seconds from process start to the first answer, per start; and the peer's median."""
    times = []
    for _ in range(runs):
        proc, ready = start_lab(free_port())
        times.append(ready)
        stop(proc)
    peers = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        peers.append(time.perf_counter() - t0)
    return times, statistics.median(peers)


def bench_api(port: int, floor_port: int, n: int, warm_up: int = 50) -> dict[str, list[float]]:
    """Milliseconds per request on keep-alive connections, the three kinds interleaved.

    ``drag``: POST /api/trace (one drag update); ``static``: GET of the lab's
    stylesheet; ``floor``: GET on the minimal ASGI app (``floor_app.py``) served
    the same way: what this machine's HTTP stack costs with no app work at all.
    """
    lab = http.client.HTTPConnection("127.0.0.1", port)
    floor = http.client.HTTPConnection("127.0.0.1", floor_port)
    headers = {"content-type": "application/json", "connection": "keep-alive"}
    times: dict[str, list[float]] = {"drag": [], "static": [], "floor": []}

    def timed(conn, method, path, body=None) -> float:
        t0 = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        assert r.status == 200, (path, r.status)
        return (time.perf_counter() - t0) * 1e3

    for i in range(n + warm_up):
        # A drag: q walks a small circle, two decimals like the page sends.
        state = {**STATE, "q": [round(2 + (i % 97) / 50, 2), round(1 - (i % 89) / 40, 2)]}
        drag = timed(lab, "POST", "/api/trace", json.dumps(state))
        static = timed(lab, "GET", "/static/css/lab.css")
        bare = timed(floor, "GET", "/")
        if i >= warm_up:
            times["drag"].append(drag)
            times["static"].append(static)
            times["floor"].append(bare)
    lab.close()
    floor.close()
    return times


def bench_browser(url: str, moves: int, loads: int, weighed: int = 3) -> dict:
    from playwright.sync_api import expect, sync_playwright

    out: dict = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        # Page weight: fresh contexts, nothing cached. Reading each response's body
        # (a DevTools round trip per response) slows the load it observes, so the
        # first render is timed in separate fresh loads with no observer attached.
        weights, transfers = [], []
        for _ in range(weighed):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            sizes: list[tuple[int, str]] = []
            page.on("response", lambda r, sizes=sizes: sizes.append((len(r.body()), r.url)))
            page.goto(url)
            expect(page.locator("#summary")).to_contain_text("Output o")
            page.wait_for_timeout(100)
            weights.append(sum(n for n, _ in sizes))
            transfers.append(page.evaluate(TRANSFER_JS))
            out["largest"] = sorted(sizes, reverse=True)[:5]
            context.close()
        renders = []
        for _ in range(loads):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(url)
            mark = "() => performance.getEntriesByName('attnlab:first-render')[0]?.startTime"
            renders.append(page.wait_for_function(mark).json_value())
            context.close()
        out["first_renders_ms"] = renders
        out["first_render_ms"] = statistics.median(renders)
        out["page_bytes"] = max(weights)
        out["transfer_bytes"] = max(transfers)

        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(url)
        expect(page.locator("#summary")).to_contain_text("Output o")
        page.locator("#match-plot").scroll_into_view_if_needed()  # the whole plane on screen
        box = page.locator("#match-plot").bounding_box()
        page.evaluate("() => performance.clearMeasures()")
        # Each move is one POST /api/state (held example + edit) over the socket: the
        # merged state's one request, answering the explorer and the held table together.
        sent: list[str] = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda p: sent.append(str(p)[:12])))
        figure_eight(page, box, moves)
        page.wait_for_timeout(300)
        out["state_messages"] = sum(1 for m in sent if m.startswith('{"held"'))
        for name in ("dom", "frame"):
            out[f"pointer_to_{name}"] = page.evaluate(
                f"() => performance.getEntriesByName('attnlab:pointer-to-{name}').map(e => e.duration)"
            )
        context.close()
        browser.close()
    return out


# Bytes on the wire for the first load: the document and every resource fetched so far.
TRANSFER_JS = """() => performance.getEntriesByType("navigation")
  .concat(performance.getEntriesByType("resource"))
  .reduce((sum, e) => sum + e.transferSize, 0)"""


FLOOR_POINTER_JS = """() => {
  // The browser's own floor: input event -> next animation frame, with no work at all.
  const name = "floor:pointer-to-frame";
  const on = (event) => {
    const t = event.timeStamp;
    requestAnimationFrame(() => performance.measure(name, { start: t, end: performance.now() }));
  };
  window.addEventListener("onpointerrawupdate" in window ? "pointerrawupdate" : "pointermove", on);
}"""


def figure_eight(page, box: dict, moves: int) -> None:
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    for i in range(moves):
        # A figure-eight over the middle of the plane, one move per ~16 ms frame.
        t = i / moves * 6.283
        x = cx + box["width"] * 0.3 * (1 if i % 2 else 0.9) * math.sin(t)
        y = cy + box["height"] * 0.3 * math.sin(2 * t) / 2
        page.mouse.move(x, y)
        page.wait_for_timeout(16)
    page.mouse.up()


def bench_browser_floor(floor_url: str, moves: int, loads: int = 5) -> dict:
    """The same two figures on a trivial page (the floor app's text): Chromium's own floor.

    ``first_paint_ms``: first contentful paint, median of 5 fresh loads;
    ``pointer_to_frame``: an input event to the next animation frame, with a
    listener that does nothing else, over the same figure-eight of moves.
    """
    from playwright.sync_api import sync_playwright

    out: dict = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        paints = []
        for _ in range(loads):
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(floor_url)
            page.wait_for_timeout(100)
            paints.append(
                page.evaluate(
                    "() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN"
                )
            )
            context.close()
        out["first_paints_ms"] = paints
        out["first_paint_ms"] = statistics.median(paints)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(floor_url)
        page.evaluate(FLOOR_POINTER_JS)
        figure_eight(page, {"x": 340, "y": 200, "width": 600, "height": 400}, moves)
        page.wait_for_timeout(300)
        out["pointer_to_frame"] = page.evaluate(
            "() => performance.getEntriesByName('floor:pointer-to-frame').map(e => e.duration)"
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
    parser.add_argument("--loads", type=int, default=5, help="fresh loads timed for the first render")
    parser.add_argument("--ready-only", action="store_true", help="measure only the start-up time")
    add_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.requests, args.moves, args.loads = 20, 10, 1
    os.chdir(ROOT)

    starts, peer_start = bench_ready(1 if args.smoke else 5)
    ready = statistics.median(starts)
    if args.ready_only:
        print("starts: " + ", ".join(f"{t * 1e3:.0f} ms" for t in starts))
        row("ready (process start -> first answer)", f"{ready * 1e3:.0f} ms", "< 2000 ms")
        row("peer: python -c pass", f"{peer_start * 1e3:.0f} ms", "", "", f"{ready / peer_start:.1f}x")
        return 0
    port, floor_port = free_port(), free_port()
    proc, _ = start_lab(port)
    floor = start_floor(floor_port)
    browser = floor_browser = None
    try:
        api = bench_api(port, floor_port, args.requests, 5 if args.smoke else 50)
        if reason := chromium_missing():
            skipped("the browser rows (pointer to screen, page weight, first render)", reason)
        else:
            few = 1 if args.smoke else None  # page weight over 3 loads, the floor's paint over 5
            browser = bench_browser(f"http://127.0.0.1:{port}/", args.moves, args.loads, few or 3)
            floor_browser = bench_browser_floor(f"http://127.0.0.1:{floor_port}/", args.moves, few or 5)
    finally:
        stop(proc)
        stop(floor)

    print(f"attnlab lab benchmark ({args.requests} API requests, {args.moves} pointer moves)")
    print("peer for HTTP rows: the machine's floor, a minimal ASGI app served the same way, same run")
    row("measure", "value", "target", "peer", "ratio")
    row(
        "ready (process start -> first answer)",
        f"{ready * 1e3:.0f} ms",
        "< 2000 ms",
        f"{peer_start * 1e3:.0f} ms",
        f"{ready / peer_start:.1f}x",
    )
    floor_ms = api["floor"]
    for name, label, target in (
        ("static", "static GET (lab.css)", {95: "<= 2x floor"}),
        ("drag", "POST /api/trace (drag update)", {95: "< 5 ms"}),
    ):
        for p in (50, 95):
            ours, peer = pct(api[name], p), pct(floor_ms, p)
            row(f"{label} p{p}", f"{ours:.2f} ms", target.get(p, ""), f"{peer:.2f} ms", f"{ours / peer:.1f}x")
    if browser is not None:
        print_browser_rows(args, browser, floor_browser)
    return 0


def print_browser_rows(args, browser: dict, floor_browser: dict) -> None:
    fl = floor_browser["pointer_to_frame"]
    for name, what in (("dom", "frame ready"), ("frame", "next frame")):
        xs = browser[f"pointer_to_{name}"]
        for p, target in ((50, ""), (95, "< 16 ms")):
            peer = f"{pct(fl, p):.2f} ms" if name == "frame" else ""
            ratio = f"{pct(xs, p) / pct(fl, p):.1f}x" if name == "frame" and pct(fl, p) else ""
            label = f"pointer -> {what} p{p}" + (f" [n={len(xs)}]" if p == 50 else "")
            row(label, f"{pct(xs, p):.2f} ms", target, peer, ratio)
    print(f"  peer for pointer -> next frame: the same moves on a trivial page (floor, n={len(fl)}):")
    print("  the wait for the next frame alone, up to one frame interval;")
    print("  frame ready = the numbers in the DOM, before that wait")
    if pct(fl, 95) >= 16:
        print(f"  the floor's own p95 is {pct(fl, 95):.1f} ms >= 16 ms: on this machine no page can meet")
        print("  'next frame p95 <= 16 ms'; 'frame ready' is the figure the page controls")
    print(f"  state messages sent during the drag: {browser['state_messages']}")
    row("page weight (first load, response bodies)", f"{browser['page_bytes'] / 1024:.1f} KB", "< 200 KB")
    row("page weight (first load, transfer sizes)", f"{browser['transfer_bytes'] / 1024:.1f} KB", "< 200 KB")
    fp = floor_browser["first_paint_ms"]
    row(f"first render (median of {args.loads})", f"{browser['first_render_ms']:.0f} ms", "< 500 ms",
        f"{fp:.0f} ms", f"{browser['first_render_ms'] / fp:.1f}x")
    print("  each load: " + ", ".join(f"{t:.0f}" for t in browser["first_renders_ms"]) + " ms")
    paints = len(floor_browser["first_paints_ms"])
    print("  peer for first render: first contentful paint of a trivial page (floor app), "
          f"median of {paints}")
    print("largest responses of the first load:")
    for n, url in browser["largest"]:
        print(f"  {n / 1024:7.1f} KB  {url.split('/', 3)[-1]}")


if __name__ == "__main__":
    raise SystemExit(main())
