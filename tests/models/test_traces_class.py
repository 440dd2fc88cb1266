"""The class test: 32 learners' 256-token SmolLM2 traces, all kept, each still answering its heads.

The real loader with the worker in a thread (``process=False``): the same jobs,
shelf and routes as the server, one model in this process. The default memory
cap (512 MiB); the spill folder under ``tmp_path``. About two minutes (32 forward
passes with details).
"""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from attnlab.lab.realmodel.query import query_row
from attnlab.models.jobs.kept import trace_nbytes
from attnlab.models.jobs.line import TRACE_MEMORY_CAP, Jobs
from attnlab.models.jobs.turns import Client
from attnlab.models.registry import get_model
from attnlab.web.app import create_app
from attnlab.web.realmodel import line

pytestmark = pytest.mark.models

LEARNERS = 32
N_TOKENS = 256
WORDS = (
    "the cat dog sat ran on under mat tree house river bright dark and then over small big red blue".split()
)
WAIT_S = 600  # a bound on a hang only


def class_texts(smollm2) -> list[str]:
    """32 distinct texts of exactly 256 SmolLM2 tokens (each word, with or without its space, is one)."""
    rng = np.random.default_rng(32)
    texts = [" ".join(rng.choice(WORDS, N_TOKENS)) for _ in range(LEARNERS)]
    assert len(set(texts)) == LEARNERS and all(len(smollm2.encode(t)) == N_TOKENS for t in texts)
    return texts


def test_a_class_of_32_keeps_every_trace_and_each_answers_its_heads(smollm2, tmp_path, monkeypatch):
    # each learner on a computer of their own (one computer may have 8 jobs in line), all of them
    # asking after their trace (this test's waits stand for the pages' polls: none is abandoned)
    jobs = Jobs(loader=get_model, process=False, spill_dir=str(tmp_path), abandon_s=WAIT_S)
    monkeypatch.setattr(line, "JOBS", jobs)
    api = TestClient(create_app())
    try:
        texts = class_texts(smollm2)
        started = [jobs.start("smollm2", text, client=Client(f"learner-{i}"))  # the whole class at once
                   for i, text in enumerate(texts)]  # fmt: skip
        for job in started:
            assert jobs.wait(job, WAIT_S) and job.status == "done", job.message
        assert jobs.memory_cap == TRACE_MEMORY_CAP and jobs.kept_bytes <= jobs.memory_cap
        newest = started[-1].trace
        assert trace_nbytes(newest) <= 32 * 2**20  # q, k, v and the journey; its logits are on disk
        for i, job in enumerate(started):
            assert not jobs.was_dropped(job.id)
            layer, head = i % 30, i % 9
            r = api.get(f"/api/models/jobs/{job.id}/heads/{layer}/{head}?packed=true")
            assert r.status_code == 200, (i, r.text[:200])
            assert r.json()["n_tokens"] == N_TOKENS
        # the oldest (spilled to disk by now) answers a fresh trace's numbers exactly
        first = started[0]
        assert isinstance(first.trace.q, np.memmap)
        fresh = smollm2.trace(texts[0], details=True)
        body = api.get(f"/api/models/jobs/{first.id}/heads/29/8").json()
        blocked = ~fresh.allowed
        got = np.array(
            [[np.nan if x is None else x for x in row] for row in body["weights"]], dtype=np.float32
        )
        want = fresh.head_weights(29, 8)
        assert np.array_equal(got[~blocked], want[~blocked]) and np.isnan(got[blocked]).all()
        row = api.get(f"/api/models/jobs/{first.id}/rows/29/8/255").json()
        assert [s["share"] for s in row["sources"]] == list(query_row(fresh, 29, 8, 255).weights)
        nxt = api.get(f"/api/models/jobs/{first.id}/next/100")
        assert nxt.status_code == 200
    finally:
        jobs.shutdown()
    assert list(tmp_path.iterdir()) == []  # the spill folder goes with the jobs
