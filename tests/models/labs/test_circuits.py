"""The circuits lab's run on SmolLM2: the census on the probe names L18 H6, and switching L16 H0 off takes
most of its induction through the keys; the recorded rows are the run's own q . k; the job line runs it."""

from __future__ import annotations

import time

import numpy as np
import pytest

from attnlab.lab.connections.circuits import CONTROLS, LAB
from attnlab.lab.connections.circuits.copying import Copying, induction_score
from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.models.census import score_text
from attnlab.models.circuits.ablation import ablate
from attnlab.models.circuits.heads import head_reads
from attnlab.models.circuits.runs import run
from attnlab.models.labs.circuits import copying

pytestmark = pytest.mark.models

VALUES = read(CONTROLS, {}, "inputs")  # seed 0: 10 words, twice; mean ablation; 3 heads tested


@pytest.fixture(scope="module")
def recorded(smollm2):
    steps = []
    data = copying(smollm2, lambda *m: steps.append(m), **LAB.ask(VALUES)[0].args)
    return data, steps


def test_the_census_names_the_induction_head_and_its_feeder(recorded):
    data, steps = recorded
    assert steps == [("running", 5), *(("progress", i) for i in range(1, 6))]
    c = Copying(data)
    assert c.head == (18, 6) and c.tested == [(16, 0), (11, 1), (1, 2)]
    assert c.clean > 0.9 and c.drops[0] > 0.5  # most of the copying goes with L16 H0's output
    assert all(abs(d) < 0.05 for d in c.drops[1:])  # the other previous-token heads barely matter
    assert c.feeder == 0 and c.every[0] < 0.5
    answer = LAB.answer(VALUES, {"copying": Measured("done", data=data)})
    assert answer["words"][-1]["text"].startswith("L16 H0 feeds the induction head")


def test_the_recorded_rows_are_the_runs_own_products(smollm2, recorded):
    data, _ = recorded
    ids = data["ids"]
    census = score_text(smollm2, "smollm2", LAB.ask(VALUES)[0].args["text"])
    assert data["scores"]["induction"] == census["scores"]["induction"].tolist()
    clean = run(smollm2, ids)
    reads = head_reads(smollm2, clean, 18, 6)
    s = (reads.q_rotated.astype(np.float64) @ reads.k_rotated.astype(np.float64).T) * reads.scale
    assert data["rows"]["clean"] == [s[i, : i + 1].tolist() for i in range(len(ids))]
    # the clean score from the rows is the census's (the trace's float32 weights) to float32 rounding
    assert abs(induction_score(data["rows"]["clean"], ids) - census["scores"]["induction"][18, 6]) < 1e-5
    off = head_reads(smollm2, ablate(smollm2, clean, [(16, 0)], how="mean").after, 18, 6)
    keys = (reads.q_rotated.astype(np.float64) @ off.k_rotated.astype(np.float64).T) * reads.scale
    assert data["rows"]["keys"][0] == [keys[i, : i + 1].tolist() for i in range(len(ids))]
    # a head above the induction head's layer cannot change its keys: ablating one leaves the rows as they are
    above = head_reads(smollm2, ablate(smollm2, clean, [(19, 0)], how="mean").after, 18, 6)
    assert np.array_equal(above.k_rotated, reads.k_rotated)
    assert np.array_equal(above.q_rotated, reads.q_rotated)


def test_the_job_line_runs_it_and_says_where_it_is():
    from attnlab.models.jobs.line import Jobs
    from attnlab.models.labs.runs import measure

    jobs = Jobs(process=False)
    try:
        a = LAB.ask(read(CONTROLS, {"tested": 1}, "inputs"))[0]
        seen, deadline = [], time.monotonic() + 300  # a bound on a hang, not a timing
        while (m := measure(a, jobs)).status == "waiting":
            seen.append(m)
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        jobs.shutdown()
    assert m.status == "done" and m.data["tested"] == [[16, 0]] and m.title == "SmolLM2-135M-Instruct"
    assert all(w.unit == "step" and w.total == 3 for w in seen if w.stage == "running" and w.total)
