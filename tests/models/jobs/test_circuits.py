"""Circuits jobs in the model worker: progress, Cancel (the partial sweep kept), sharing, both worker modes.

The thread-mode tests gate MiniLM's blocks with a semaphore the test opens a known number of
times, so "a sweep stopped between its first and second patch" is a fact, not a race. The process
test asks to cancel before the worker reaches the sweep: it stops at its first check, whatever the timing.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time

import numpy as np
import pytest

from attnlab.models.circuitviews import asks
from attnlab.models.jobs.circuits import FUNCTIONS
from attnlab.models.jobs.line import Jobs

pytestmark = pytest.mark.models

WAIT_S = 120  # a bound on a hang only: nothing is timed
CLEAN, CORRUPT = "The cat sat on the mat.", "The dog sat on the rug."
PAIR_BLOCKS = 2 * 6  # the clean and corrupted runs: MiniLM's 6 blocks each


class GatedLayers(list):
    """MiniLM's blocks, each taken only once the gate lets it."""

    def __init__(self, layers, gate: threading.Semaphore) -> None:
        super().__init__(layers)
        self.gate = gate

    def __getitem__(self, i):
        assert self.gate.acquire(timeout=WAIT_S)
        return super().__getitem__(i)


def gated(minilm, gate: threading.Semaphore, name: str):
    """MiniLM under another name (its runs are kept apart from the real one's), its blocks gated."""
    model = copy.copy(minilm)
    model.name = name
    model.weights = dataclasses.replace(minilm.weights, blocks=GatedLayers(minilm.weights.blocks, gate))
    return model


def heads_sweep(jobs: Jobs, clean: str = CLEAN, corrupt: str = CORRUPT):
    return asks.start(jobs, "patching", model="minilm", clean=clean, corrupt=corrupt, right=None, other=None,
                      position=-1, sweep="heads", site="pre", first_layer=None, last_layer=None)  # fmt: skip


def until(check) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.005)


@pytest.fixture
def line(minilm):
    made = []

    def make(name: str, permits: int = 0):
        gate = threading.Semaphore(permits)
        model = gated(minilm, gate, name)
        jobs = Jobs(loader=lambda _: model, process=False)
        made.append((jobs, gate))
        return jobs, gate

    yield make
    for jobs, gate in made:
        gate.release(10_000)
        jobs.shutdown()


def test_a_sweep_reports_each_patch_and_a_cancel_keeps_what_it_did(line):
    jobs, gate = line("minilm-cancel")
    job = heads_sweep(jobs)
    gate.release(PAIR_BLOCKS + 6)  # both runs, then the first patch (layer 0: blocks 0..5 again)
    until(lambda: job.done_count == 1)
    assert (job.status, job.total) == ("running", 6 * 12)
    assert asks.answer(jobs, job)["stage_display"] == "Patching: 1 of 72 patches done…"
    assert jobs.cancel(job.id) is job and job.cancel_asked  # the worker is inside patch 2 now
    assert asks.answer(jobs, job)["stage_display"] == (
        "Cancelling: stopping after the patch under way (1 of 72 done)…"
    )
    gate.release(10_000)
    assert jobs.wait(job, WAIT_S)
    assert job.status == "cancelled" and job.done_count == 2
    sweep = job.result["sweep"]
    assert (sweep["done"], sweep["total"], sweep["cancelled"]) == (2, 72, True)
    cells = [x for row in sweep["map"]["values"] for x in row]
    assert all(x is not None for x in cells[:2]) and all(x is None for x in cells[2:])
    answer = asks.answer(jobs, job)
    assert answer["stage_display"] == "Cancelled after 2 of 72 patches: the partial result is shown."
    assert answer["result"] is job.result and answer["progress"] == 2 / 72
    again = heads_sweep(jobs)  # a cancelled sweep is not shared: the same request runs in full
    assert again is not job
    assert jobs.wait(again, WAIT_S) and again.status == "done" and again.done_count == 72
    full = again.result["sweep"]["map"]["values"]
    assert full[0][:2] == cells[:2]  # the partial sweep's cells are the full sweep's, bit for bit
    assert jobs.cancel(again.id) is again and again.status == "done"  # too late: nothing to stop


def test_identical_requests_share_one_job_and_a_waiting_one_can_leave_the_line(line):
    jobs, gate = line("minilm-queue")
    first = heads_sweep(jobs)
    assert heads_sweep(jobs) is first
    other = heads_sweep(jobs, "A cat sat on the mat.", "A dog sat on the rug.")
    assert jobs.place(other) == 1
    assert jobs.cancel(other.id) is other
    assert other.status == "cancelled" and other.result is None and jobs.place(other) is None
    assert asks.answer(jobs, other)["stage_display"] == "Cancelled before it started."
    assert jobs.cancel("no-such-job") is None
    gate.release(10_000)
    assert jobs.wait(first, WAIT_S) and first.status == "done"


def test_a_worker_process_stops_a_sweep_at_its_first_check_when_asked_before(minilm):
    jobs = Jobs()  # a worker process, loading MiniLM from the registry
    try:
        job = heads_sweep(jobs, "Two cats sat on the mat.", "Two dogs sat on the rug.")
        assert jobs.cancel(job.id) is job  # running (or about to): the worker reads the cell between patches
        assert jobs.wait(job, WAIT_S)
        assert jobs.worker_mode == "process"
        assert job.status == "cancelled", job.message
        assert (job.result["sweep"]["done"], job.result["sweep"]["total"]) == (0, 72)
        assert job.result["sweep"]["map"]["values"] == [[None] * 12] * 6
    finally:
        jobs.shutdown()


def test_each_view_is_a_job_of_its_own_function(line):
    jobs, gate = line("minilm-views", permits=10_000)
    job = asks.start(jobs, "head", model="minilm", text=CLEAN, layer=2, head=5, position=3)
    assert job.function == FUNCTIONS["head"]
    assert dict(job.arguments) == {"text": CLEAN, "layer": 2, "head": 5, "position": 3}
    assert jobs.wait(job, WAIT_S) and job.status == "done"
    assert job.result["query_label"] == "3 sat" and job.result["writes"] is None
    assert np.isclose(sum(k["weight"] for k in job.result["keys"]), 1.0)
    ablation = asks.start(jobs, "ablation", model="minilm", text=CLEAN, heads="L3H1", how="mean", layer=None)
    assert dict(ablation.arguments) == {"text": CLEAN, "heads": ((3, 1),), "how": "mean", "layer": None}
    assert jobs.wait(ablation, WAIT_S) and ablation.status == "done"
    assert ablation.result["layer"] == 5  # the encoder's layer shown: the last, unless one is asked for
