"""Browser test helpers: the real lab server, headless Chromium and the page.

The fixtures built on them live in ``conftest.py`` (next to this file).
Import the helpers with ``from labkit import ...`` (``conftest.py`` puts this
folder on ``sys.path``).

Reusable by every browser test (part 2, real models). What they give:

- ``live_server`` (session): ``attnlab serve --no-browser`` running in a
  subprocess on a free 127.0.0.1 port, through the real entry point.
  ``live_server.url`` ends with ``/``. ``LiveServer`` can also be started on
  its own (``with LiveServer() as server:``) for tests that stop it.
- ``browser`` (session): Debian's Chromium (``/usr/bin/chromium``), headless,
  with the project's flags.
- ``lab`` (function): a fresh context and page on the lab at 1280x800, already
  drawn, as a :class:`Lab`. ``lab.page`` is the Playwright page;
  ``lab.recorder`` records every request URL and every console error and page
  error. At teardown the fixture asserts that every request went to the live
  server (its ws:// socket, blob: and data: URLs are local too) and that there were no console
  errors; a test that expects some calls ``lab.recorder.allow(pattern)``.
- ``open_lab(browser, url, **context_options)``: the same by hand, e.g. for a
  phone (``viewport={"width": 390, "height": 844}, has_touch=True``); close
  it with ``lab.close()`` (which runs the same checks).
- ``ARTIFACTS``: the git-ignored ``test-artifacts/`` folder for screenshots.

Waiting: the page's CSP forbids eval, so ``page.wait_for_function`` with a
string fails; use ``expect(locator)`` or ``lab.wait_for_query``.
"""

from __future__ import annotations

import collections
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

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
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
DESKTOP = {"width": 1280, "height": 800}

# plot.js draws each plane in a SIZE x SIZE viewBox with PAD user units of margin.
PLOT_SIZE = 320
PLOT_PAD = 22


def animations_ended(page, bound_s: float = 30.0) -> None:
    """Read the page as still, for axe: motion reduced from here on (a part that fades in, such as
    the block's play stage when its answer lands, shows at once), then wait until no timed CSS
    animation runs, so nothing is read half-way whatever the machine's load; scroll-driven and
    endless ones do not count. Polled from here: the page's CSP refuses the string evaluation
    ``wait_for_function`` makes. ``bound_s`` only bounds a hang."""
    page.emulate_media(reduced_motion="reduce")
    running = """() => document.getAnimations().some(a => a.playState === 'running'
        && a.timeline === document.timeline && a.effect.getComputedTiming().endTime !== Infinity)"""
    deadline = time.monotonic() + bound_s
    while page.evaluate(running):
        assert time.monotonic() < deadline, "an animation still runs"
        page.wait_for_timeout(50)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def plane_point(plot, x: float, y: float) -> tuple[float, float]:
    """The viewport coordinates of data point (x, y) in the plane ``plot`` (a locator) drawn by plot.js."""
    view = json.loads(plot.get_attribute("data-view"))
    box = plot.bounding_box()
    unit = (PLOT_SIZE - 2 * PLOT_PAD) / (view["xmax"] - view["xmin"])
    u = PLOT_PAD + (x - view["xmin"]) * unit
    v = PLOT_SIZE - PLOT_PAD - (y - view["ymin"]) * unit
    scale = box["width"] / PLOT_SIZE
    return box["x"] + u * scale, box["y"] + v * scale


class LiveServer:
    """``python -m attnlab serve --no-browser`` on 127.0.0.1, in a subprocess."""

    def __init__(self, *, port: int | None = None) -> None:
        self.port = port or free_port()
        self.proc: subprocess.Popen | None = None
        self.output: collections.deque[str] = collections.deque(maxlen=400)  # its last lines printed

    def tail(self) -> str:
        """What the server printed last (a traceback behind a 500, say)."""
        return "".join(self.output)

    def _drain(self) -> None:
        # read on, so that a full pipe never blocks the server's writes, and keep the last lines
        for line in self.proc.stdout:
            self.output.append(line)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> LiveServer:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "attnlab", "serve", "--no-browser", "--port", str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the lab server exited before it was ready")
            if "the lab is at" in line:
                # Where it serves: the port asked for, or the free one it moved to when another
                # process of the run (an xdist worker) took that port between free_port() and the bind.
                self.port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", line).group(1))
                threading.Thread(target=self._drain, daemon=True).start()
                return self

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@dataclass
class Recorder:
    """Every request URL and every console error or page error of one page."""

    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    allowed: list[re.Pattern] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        """Accept console errors matching ``pattern`` (a regex) in this test."""
        self.allowed.append(re.compile(pattern))

    def attach(self, page: Page) -> None:
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("websocket", lambda ws: self.requests.append(ws.url))
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console_errors.append(f"pageerror: {e}"))

    def check(self, base_url: str, server: LiveServer | None = None) -> None:
        foreign = [
            u
            for u in self.requests
            if not (
                u.startswith(base_url)
                or u.startswith("ws" + base_url[4:])
                or u.startswith("blob:" + base_url.rstrip("/"))
                or u.startswith("data:")
            )
        ]
        assert foreign == [], f"requests left the lab server: {foreign}"
        errors = [e for e in self.console_errors if not any(p.search(e) for p in self.allowed)]
        said = f"\n--- the server printed last ---\n{server.tail()[-6000:]}" if server is not None else ""
        assert errors == [], f"console errors: {errors}{said}"


@dataclass
class Lab:
    """One page on the lab, with helpers for the explorer."""

    page: Page
    recorder: Recorder
    base_url: str

    def close(self) -> None:
        context = self.page.context
        context.close()
        self.recorder.check(self.base_url)

    def wait_drawn(self) -> None:
        expect(self.page.locator("#summary")).to_contain_text("Output o = [")

    def wait_for_query(self, shown: str) -> None:
        """Wait until the caption shows q as the server rounded it, e.g. ``[2.1, 1]``."""
        expect(self.page.locator("#query-caption")).to_have_text(
            f"q = {shown} · Compare the query with each key."
        )

    def open_all(self) -> None:
        """Open every disclosure on the page."""
        for details in self.page.locator("details").all():
            if not details.evaluate("d => d.open"):
                details.locator("summary").first.click()

    def open(self, details_id: str) -> None:
        details = self.page.locator(f"#{details_id}")
        if not details.evaluate("d => d.open"):
            details.locator("summary").first.click()

    def plane_point(self, x: float, y: float, svg: str = "#match-plot") -> tuple[float, float]:
        """Return the viewport coordinates of data point (x, y) in a plane (scroll it in first)."""
        return plane_point(self.page.locator(svg), x, y)

    def drag_to(self, x: float, y: float, *, steps: int = 8) -> None:
        """Press on q, drag to data point (x, y), release, and wait for the new q's numbers.

        The numbers may still be on their way for intermediate moves; read the final
        q with ``precise_q`` (which opens "Inspect precise numbers").
        """
        page = self.page
        caption = page.locator("#query-caption")
        before = caption.inner_text()
        page.locator("#match-plot").scroll_into_view_if_needed()
        q = page.locator("#match-plot .handle").bounding_box()
        page.mouse.move(q["x"] + q["width"] / 2, q["y"] + q["height"] / 2)
        page.mouse.down()
        page.mouse.move(*self.plane_point(x, y), steps=steps)
        page.mouse.up()
        expect(caption).not_to_have_text(before)  # the server's answers are arriving
        self.wait_settled()

    def wait_settled(self) -> None:
        """Wait until no explorer answer is outstanding (state.js marks <html>)."""
        expect(self.page.locator("html")).to_have_attribute("data-attnlab-pending", "0")

    def precise_q(self) -> list[float]:
        """q as the server holds it, read from "Inspect precise numbers"."""
        self.open("precise")
        text = self.page.locator("#precise-list li").first.inner_text()
        assert text.startswith("q = [")
        return [float(x) for x in text[5:-1].split(", ")]


def open_lab(browser: Browser, url: str, **context_options) -> Lab:
    """Open the lab in a new context (default 1280x800) and wait until it is drawn."""
    options = {"viewport": DESKTOP, **context_options}
    context = browser.new_context(**options)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))
    page = context.new_page()
    recorder = Recorder()
    recorder.attach(page)
    lab = Lab(page=page, recorder=recorder, base_url=url)
    page.goto(url)
    lab.wait_drawn()
    return lab
