"""Every sentence of the sampling lab is true of its numbers: each claim recomputed here (hypothesis), on
seeded logits and on synthetic recorded ones; the shares are what sampling with top-k draws from."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims
from synthetic import logits_measured, rows

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.sampling import CONTROLS, LAB
from attnlab.lab.connections.sampling.walk import MAX_K, SWEEP
from attnlab.models.sampling import Sampling, cut


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


temperatures = st.integers(1, 200).map(lambda i: round(i * 0.05, 10))


@st.composite
def inputs(draw, source: str) -> dict:
    given = {
        "source": source,
        "k": draw(st.integers(2, MAX_K)),
        "temperature": draw(temperatures),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


def check_words(answer: dict, logits: np.ndarray, v: dict) -> list[dict]:
    k, t = v["k"], v["temperature"]
    source, at, attention, limits, *rest = page_claims(answer)
    assert source["k"] == k and source["source"] == v["source"]
    p = softmax(logits / t)
    assert math.isclose(at["top_share"], p.max(), rel_tol=1e-12) and math.isclose(at["last_share"], p.min())
    assert math.isclose(at["entropy"], float(-(p[p > 0] * np.log(p[p > 0])).sum()), abs_tol=1e-12)
    assert at["entropy"] <= at["most"] + 1e-12 and at["most"] == math.log(k)
    assert attention["temperature"] == t and math.isclose(attention["d_k"], t * t)
    onehot = (logits == logits.max()) / (logits == logits.max()).sum()
    assert limits["cold"] == SWEEP[0] and limits["hot"] == SWEEP[-1] and limits["uniform"] == 1 / k
    assert math.isclose(
        limits["from_argmax"], np.abs(softmax(logits / SWEEP[0]) - onehot).max(), abs_tol=1e-15
    )
    assert math.isclose(
        limits["from_uniform"], np.abs(softmax(logits / SWEEP[-1]) - 1 / k).max(), abs_tol=1e-15
    )
    assert limits["from_uniform"] < 1 / k  # at T = 100 every share is nearer 1/k than 0 is
    assert answer["data"]["p"] == [float(x) for x in answer["data"]["p"]] and math.isclose(
        sum(answer["data"]["p"]), 1
    )
    return rest


@settings(max_examples=40, deadline=None)
@given(inputs("random"))
def test_every_claim_on_seeded_logits(v):
    answer = LAB.answer(v, {})
    logits = np.sort(np.random.default_rng(v["seed"]).normal(0.0, 2.0, MAX_K))[::-1][: v["k"]]
    assert check_words(answer, logits, v) == [] and answer["data"]["logits"] == logits.tolist()


@settings(max_examples=40, deadline=None)
@given(inputs("smollm2"), rows())
def test_every_claim_on_recorded_logits_and_the_same_shares_as_sampling(v, row):
    m = logits_measured(row)
    answer = LAB.answer(v, m)
    top = m["logits"].data
    logits = np.asarray(top["logits"][: v["k"]])
    (same,) = check_words(answer, logits, v)
    source = answer["words"][0]["claims"]
    assert math.isclose(source["coverage"], math.fsum(top["p_model"][: v["k"]]), rel_tol=1e-12)
    assert source["top"] == top["tokens"][0] and source["vocab"] == row.size
    assert same == {"k": v["k"], "temperature": v["temperature"]}
    # "Sampling with top-k = k at temperature T draws from exactly these shares"
    drawn = cut(np.asarray(row, dtype=np.float64), Sampling(temperature=v["temperature"], top_k=v["k"])).p
    assert np.count_nonzero(drawn) == v["k"]
    np.testing.assert_allclose(answer["data"]["p"], drawn[top["ids"][: v["k"]]], rtol=1e-12, atol=1e-300)


def test_without_the_logits_the_lab_says_where_they_stand():
    v = read(CONTROLS, {"source": "smollm2"}, "inputs")
    waiting = LAB.answer(v, {"logits": Measured("waiting", stage="loading", title="SmolLM2-135M-Instruct")})
    assert waiting["pictures"] == [] and waiting["numbers"] == [] and waiting["data"] == {}
    assert [w["text"] for w in waiting["words"]] == [
        "SmolLM2 reads your text for its next-token logits: loading SmolLM2-135M-Instruct (once per server)…"
    ]
    assert LAB.answer(v, {})["words"][0]["claims"] == {"status": "absent"}
