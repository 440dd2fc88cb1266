"""A lab's asks answered (models/labs/runs.py): facts and MiniLM at once, SmolLM2's runs as jobs of the
job line (a worker thread here), waiting until done; a text over the cap refused before anything runs."""

from __future__ import annotations

import time

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.connections.dilution.needle import arguments
from attnlab.lab.connections.live import ask
from attnlab.models.jobs.line import Jobs
from attnlab.models.labs.runs import measure

WAIT_S = 300  # a bound on a hang, not a timing


@pytest.fixture(scope="module")
def jobs():
    line = Jobs(process=False)
    yield line
    line.shutdown()


def until_done(a, jobs) -> list:
    seen, deadline = [], time.monotonic() + WAIT_S
    while (m := measure(a, jobs)).status == "waiting":
        seen.append(m)
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return [*seen, m]


def test_facts_are_measured_at_once(jobs):
    m = measure(ask("shapes", "smollm2"), jobs)
    assert m.status == "done" and m.data["kv_heads"] == 3 and jobs.computations == 0


@pytest.mark.models
def test_minilm_is_run_at_once(jobs):
    m = measure(ask("embeddings", "minilm", sentences=["a cat"], matches=["a kitten"]), jobs)
    assert m.status == "done" and m.data["d"] == 384 and m.title == "all-MiniLM-L6-v2"


@pytest.mark.models
def test_smollm2s_runs_are_jobs_that_wait_then_answer(jobs):
    before = jobs.computations
    kv = until_done(ask("kv", "smollm2", prompt="Hello there", new_tokens=2), jobs)
    assert kv[-1].status == "done" and kv[-1].data["steps"][-1]["tokens"] == 4
    assert all(m.stage in ("queued", "loading", "running") for m in kv[:-1])
    assert measure(ask("kv", "smollm2", prompt="Hello there", new_tokens=2), jobs).data == kv[-1].data  # kept
    logits = until_done(ask("logits", "smollm2", text="The capital of France is", top=50), jobs)[-1]
    assert logits.data["tokens"][0] == " Paris" and len(logits.data["logits"]) == 50
    assert jobs.computations == before + 2  # the same asks again share their jobs
    needle = until_done(ask("needle", "smollm2", **arguments("mango")), jobs)
    waits = [m for m in needle if m.status == "waiting" and m.unit == "trace"]
    assert all(m.total == 5 and 0 <= m.done < 5 for m in waits)
    rows = needle[-1].data["rows"]
    assert [r["n_tokens"] for r in rows] == [16, 32, 64, 128, 256] and jobs.computations == before + 7


@pytest.mark.models
def test_a_text_over_the_cap_is_refused_before_anything_runs(jobs):
    before = jobs.computations
    with pytest.raises(FieldError) as err:
        measure(ask("logits", "smollm2", field="text", text="😀" * 300, top=50), jobs)
    assert err.value.loc == ("text",) and "tokens long" in err.value.problem
    with pytest.raises(FieldError):
        measure(ask("kv", "smollm2", prompt="😀" * 300, new_tokens=2), jobs)
    assert jobs.computations == before
