"""Circuits jobs in the model worker: progress, Cancel (the partial sweep kept), sharing, both worker modes;
the worker's functions return numbers (the numerics', with progress and a stop between patches), and the
lab words them as the page polls the job (``lab.circuits.requests.answer``).

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

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import requests
from attnlab.models.circuits.ablation import ablate, next_token_change
from attnlab.models.circuits.patching import pair, residual_sweep
from attnlab.models.circuits.runs import run
from attnlab.models.jobs import circuits as work
from attnlab.models.jobs.circuits import FUNCTIONS
from attnlab.models.jobs.kinds import Stopped
from attnlab.models.jobs.line import Jobs

pytestmark = pytest.mark.models

WAIT_S = 120  # a bound on a hang only: nothing is timed
CLEAN, CORRUPT = "The cat sat on the mat.", "The dog sat on the rug."
PAIR_BLOCKS = 2 * 6  # the clean and corrupted runs: MiniLM's 6 blocks each


class GatedLayers(list):
    """MiniLM's blocks, each taken only once the gate lets it (``asked``: how many were asked for)."""

    def __init__(self, layers, gate: threading.Semaphore) -> None:
        super().__init__(layers)
        self.gate = gate
        self.asked = 0

    def __getitem__(self, i):
        self.asked += 1
        assert self.gate.acquire(timeout=WAIT_S)
        return super().__getitem__(i)


def gated(minilm, gate: threading.Semaphore, name: str):
    """MiniLM under another name (its runs are kept apart from the real one's), its blocks gated."""
    model = copy.copy(minilm)
    model.name = name
    model.weights = dataclasses.replace(minilm.weights, blocks=GatedLayers(minilm.weights.blocks, gate))
    gate.layers = model.weights.blocks  # the test reads how far the worker asked
    return model


def heads_sweep(jobs: Jobs, clean: str = CLEAN, corrupt: str = CORRUPT):
    return requests.start(jobs, "patching", model="minilm", clean=clean, corrupt=corrupt, right=None,
                          other=None, position=-1, sweep="heads", site="pre", first_layer=None,
                          last_layer=None)  # fmt: skip


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
    assert requests.answer(jobs, job)["stage_display"] == "Patching: 1 of 72 patches done…"
    until(lambda: gate.layers.asked > PAIR_BLOCKS + 6)  # the worker waits for patch 2's first block
    assert jobs.cancel(job.id) is job and job.cancel_asked  # so it is inside patch 2 now
    assert requests.answer(jobs, job)["stage_display"] == (
        "Cancelling: stopping after the patch under way (1 of 72 done)…"
    )
    gate.release(10_000)
    assert jobs.wait(job, WAIT_S)
    assert job.status == "cancelled" and job.done_count == 2
    partial = job.result["sweep"]  # the worker's numbers: the sweep as far as it went
    assert (partial.done, job.result["total"], job.result["cancelled"]) == (2, 72, True)
    assert not np.isnan(partial.values.ravel()[:2]).any() and np.isnan(partial.values.ravel()[2:]).all()
    answer = requests.answer(jobs, job)
    sweep = answer["result"]["sweep"]
    assert (sweep["done"], sweep["total"], sweep["cancelled"]) == (2, 72, True)
    cells = [x for row in sweep["map"]["values"] for x in row]
    assert all(x is not None for x in cells[:2]) and all(x is None for x in cells[2:])
    assert answer["stage_display"] == "Cancelled after 2 of 72 patches: the partial result is shown."
    assert answer["progress"] == 2 / 72
    assert requests.answer(jobs, job)["result"] is answer["result"]  # worded once, then kept
    again = heads_sweep(jobs)  # a cancelled sweep is not shared: the same request runs in full
    assert again is not job
    assert jobs.wait(again, WAIT_S) and again.status == "done" and again.done_count == 72
    assert again.result["sweep"].values[0, :2].tolist() == partial.values[0, :2].tolist()  # bit for bit
    full = requests.answer(jobs, again)["result"]["sweep"]["map"]["values"]
    assert full[0][:2] == cells[:2]  # the partial sweep's cells are the full sweep's
    assert jobs.cancel(again.id) is again and again.status == "done"  # too late: nothing to stop


def test_identical_requests_share_one_job_and_a_waiting_one_can_leave_the_line(line):
    jobs, gate = line("minilm-queue")
    first = heads_sweep(jobs)
    assert heads_sweep(jobs) is first
    other = heads_sweep(jobs, "A cat sat on the mat.", "A dog sat on the rug.")
    assert jobs.place(other) == 1
    assert jobs.cancel(other.id) is other
    assert other.status == "cancelled" and other.result is None and jobs.place(other) is None
    assert requests.answer(jobs, other)["stage_display"] == "Cancelled before it started."
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
        assert (job.result["sweep"].done, job.result["total"]) == (0, 72)
        assert np.isnan(job.result["sweep"].values).all()
        assert requests.answer(jobs, job)["result"]["sweep"]["map"]["values"] == [[None] * 12] * 6
    finally:
        jobs.shutdown()


def test_each_view_is_a_job_of_its_own_function(line):
    jobs, gate = line("minilm-views", permits=10_000)
    job = requests.start(jobs, "head", model="minilm", text=CLEAN, layer=2, head=5, position=3)
    assert job.function == FUNCTIONS["head"]
    assert dict(job.arguments) == {"text": CLEAN, "layer": 2, "head": 5, "position": 3}
    assert jobs.wait(job, WAIT_S) and job.status == "done"
    assert (job.result["query"], job.result["writes"], job.result["rotated"]) == (3, None, False)
    assert job.result["reads"].weights.shape == (9, 9)  # the numbers: [CLS] The cat sat on the mat . [SEP]
    shown = requests.answer(jobs, job)["result"]
    assert shown["query_label"] == "3 sat" and shown["writes"] is None
    assert np.isclose(sum(k["weight"] for k in shown["keys"]), 1.0)
    ablation = requests.start(jobs, "ablation", model="minilm", text=CLEAN, heads="L3H1", how="mean",
                              layer=None)  # fmt: skip
    assert dict(ablation.arguments) == {"text": CLEAN, "heads": ((3, 1),), "how": "mean", "layer": None}
    assert jobs.wait(ablation, WAIT_S) and ablation.status == "done"
    assert ablation.result["change"]["layer"] == 5  # the encoder's layer: the last, unless one is asked for
    assert requests.answer(jobs, ablation)["result"]["layer"] == 5


# -- the worker's functions, called as the worker calls them -------------------------------------


def test_a_workers_function_returns_the_numerics_numbers_and_no_words(smollm2):
    said = []
    text = "The Eiffel Tower is in the city of"
    n = work.ablation(smollm2, lambda *what: said.append(what), lambda: False, text=text, heads=((18, 6),),
                      how="zero", layer=None)  # fmt: skip
    ids = smollm2.encode(text)
    expected = next_token_change(ablate(smollm2, run(smollm2, ids), [(18, 6)]), top=work.TOP)
    assert said == [("running", 0)]
    assert (n["model"], n["path"], n["kind"], n["ids"], n["heads"]) == ("smollm2", "q4_1", "decoder", ids,
                                                                        ((18, 6),))  # fmt: skip
    assert n["tokens"] == smollm2.token_labels(ids)
    for name in ("p_next_before", "p_next_after", "loss_after", "top_ids_after"):
        assert np.array_equal(n["change"][name], expected[name])
    named = {*expected["top_ids_before"].ravel().tolist(), *expected["top_ids_after"].ravel().tolist()}
    assert n["texts"] == dict(zip(sorted(named), smollm2.token_labels(sorted(named))))
    with pytest.raises(FieldError) as caught:  # a typed refusal, in the lab's words
        work.lens(smollm2, said.append, lambda: False, text="", position=0, token=None)
    assert caught.value.loc == ("text",)


def test_a_sweep_says_each_patch_and_a_stop_raises_its_partial_numbers(minilm):
    clean, corrupt = (minilm.tokenize([t]).ids[0].tolist() for t in (CLEAN, CORRUPT))
    told = []
    args = {"clean": CLEAN, "corrupt": CORRUPT, "right": None, "other": None, "position": -1,
            "sweep": "residual", "site": "pre", "first_layer": 4, "last_layer": None, "per_position": False}
    n = work.patching(minilm, lambda *what: told.append(what), lambda: False, **args)
    expected = residual_sweep(minilm, pair(minilm, clean, corrupt), layers=[4, 5])
    assert told == [("running", 18), *(("progress", d) for d in range(1, 19))]
    assert np.array_equal(n["sweep"].recovered, expected.recovered) and n["sweep"].done == 18
    assert (n["total"], n["cancelled"]) == (18, False)
    assert (n["pair"]["metric"], n["pair"]["answers"]) == ("cosine", None)
    assert (n["pair"]["clean_ids"], n["pair"]["corrupt_ids"]) == (clean, corrupt)
    checks = iter([False, False, False, True])
    with pytest.raises(Stopped) as stopped:
        work.patching(minilm, lambda *what: None, lambda: next(checks), **args)
    partial = stopped.value.result
    assert partial["cancelled"] is True and partial["sweep"].done == 3
    assert partial["sweep"].recovered[0, :3].tolist() == expected.recovered[0, :3].tolist()
    assert np.isnan(partial["sweep"].recovered[0, 3:]).all() and np.isnan(partial["sweep"].recovered[1]).all()
    assert work.patching.makes_way and work.patching.stops


def test_a_sweeps_layers_and_patch_count(minilm, smollm2):
    assert work.sweep_layers(minilm, None, None) == [0, 1, 2, 3, 4, 5]
    assert work.sweep_layers(smollm2, 28, None) == [28, 29] and work.sweep_layers(minilm, 2, 2) == [2]
    with pytest.raises(FieldError) as caught:
        work.sweep_layers(minilm, 4, 2)
    assert (caught.value.loc, caught.value.problem) == (
        ("last_layer",), "is 2, below the first layer 4; give a last layer of 4 or more")
    with pytest.raises(FieldError) as caught:
        work.sweep_layers(minilm, 6, None)
    assert caught.value.loc == ("first_layer",)
    counts = {kind: work.patch_count(smollm2, 9, kind, [0, 1], False) for kind in work.SWEEPS}
    assert counts == {"residual": 18, "heads": 18, "mlp": 2, "pattern": 18, "keys": 6, "values": 6}
    assert work.patch_count(smollm2, 9, "mlp", [0, 1], True) == 18
    assert work.patch_count(minilm, 9, "keys", [0], False) == 12  # MiniLM: a KV head per query head
