"""A trace the server dropped to make room is traced again, whichever view asked for it (js/realmodel/job.js).

The server here keeps one finished trace (no room in memory or on disk beyond the newest),
so tracing another text through the API drops the page's: the next view the page asks
of it answers 410 trace_dropped, and the page traces the same text again, says so with
the server's note, and draws the fresh trace.
"""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest
from labkit import LiveServer
from playwright.sync_api import expect
from realkit import TRACE_TIMEOUT_MS, job_id, real_model_view, trace

from attnlab.lab.fields import trace_dropped_note
from attnlab.models import files

pytestmark = [pytest.mark.browser, pytest.mark.models]

try:
    files.locate(files.SMOLLM2)
except files.ModelNotInstalled as error:  # pragma: no cover - depends on the machine
    pytest.skip(str(error), allow_module_level=True)

TEXT = "The cat sat on the mat."
OTHER = "A dog ran in the park."

# `attnlab serve` with a job line that keeps only the newest finished trace
SERVE_KEEPING_ONE = """
import sys
from attnlab.models.jobs import line as jobs
from attnlab.web.realmodel import line
from attnlab.web.server import serve
jobs.JOBS = line.JOBS = jobs.Jobs(memory_cap=1, spill_cap=0)
sys.exit(serve(port=int(sys.argv[1]), open_browser=False))
"""


class KeepingOne(LiveServer):
    """The lab on a free port, keeping one finished trace (its own process, as ``LiveServer``)."""

    def start(self) -> KeepingOne:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE_KEEPING_ONE, str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        while "the lab is at" not in (line := self.proc.stdout.readline()):
            if not line:
                raise RuntimeError("the lab server exited before it was ready")
        return self


@pytest.fixture(scope="module")
def keeping_one():
    with KeepingOne() as server:
        yield server


def drop(server) -> None:
    """Trace another text through the API, to its end: the page's trace is dropped to make room."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        job = client.post("api/models/jobs", json={"model": "smollm2", "text": OTHER}).json()
        for _ in range(1200):
            job = client.get(f"api/models/jobs/{job['id']}").json()
            if job["status"] == "done":
                return
            assert job["status"] not in ("error", "cancelled"), job["message"]
            time.sleep(0.1)
    raise AssertionError("the other trace did not finish")


def answer_with(body: dict):
    """A route handler that answers with ``body`` (as the server did before the drop)."""
    return lambda route: route.fulfill(json=body)


def _next(page) -> None:
    page.locator("#rm-next-temperature").fill("0.5")
    page.locator("#rm-next-temperature").dispatch_event("change")


def _neuron(page) -> None:
    page.locator("#rm-neuron-key").select_option("1")


def _bridge(page) -> None:
    page.locator("#rm-bridge-open").click()


def _head(page) -> None:
    page.locator("#rm-layer").select_option("3")


def _row(page) -> None:
    page.locator('#rm-tokens [data-index="2"]').focus()


VIEWS = {"row": _row, "head": _head, "next": _next, "neuron": _neuron, "bridge": _bridge}


@pytest.mark.parametrize("view", [*VIEWS, "journey"])
def test_a_dropped_trace_is_traced_again_with_the_note(browser, keeping_one, view):
    with real_model_view(browser, keeping_one, 1280, 900) as (page, recorder):
        recorder.allow(r"status of 410")  # the dropped trace's answer, which the page handles
        trace(page, TEXT, model="smollm2")
        page.locator('#rm-tokens [data-index="1"]').focus()  # the row, neuron and journey panels open
        expect(page.locator("#rm-row")).to_have_attribute("data-drawn", "0/0/1", timeout=TRACE_TIMEOUT_MS)
        expect(page.locator("#rm-neuron-out h3")).to_be_visible()
        expect(page.locator("#rm-journey-out h3")).to_be_visible()
        first = job_id(page, "/rows/")
        if view == "journey":
            # the row and the neuron view answer from before the drop: only the journey asks the server
            at = f"{keeping_one.url}api/models/jobs/{first}"
            kept = {"rows": httpx.get(f"{at}/rows/0/0/3").json(),
                    "neuron": httpx.get(f"{at}/neuron/0/0/3/0").json()}  # fmt: skip
            for part, body in kept.items():
                page.route(f"**/{part}/**", answer_with(body))
        drop(keeping_one)
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        if view == "journey":
            page.locator('#rm-tokens [data-index="3"]').focus()
        else:
            VIEWS[view](page)
        status = page.locator("#rm-status")
        expect(status).to_contain_text(trace_dropped_note(), timeout=TRACE_TIMEOUT_MS)
        expect(status).to_contain_text("Done: 7 tokens through 30 layers.")
        # the fresh trace is drawn: its own job's head, under a new id
        drawn = "3/0" if view == "head" else "0/0"
        expect(page.locator("#rm-heatmap")).to_have_attribute("data-drawn", drawn)
        fresh = job_id(page, "/heads/")
        assert fresh != first
        dropped = [u for u in asked if f"/jobs/{first}/" in u]
        assert dropped, asked  # the view did ask the dropped trace, and got 410
        assert sum(u.endswith("/api/models/jobs") for u in asked) == 1  # one re-trace, not one per view
        expect(page.locator("#rm-error")).to_be_hidden()
