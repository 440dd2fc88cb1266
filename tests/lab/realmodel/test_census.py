"""The census's numbers and words: the t point, means and intervals over texts, every claim checked."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab.realmodel import census

SHAPE = (3, 2)


def per_text(values: list[np.ndarray], repeats: list[bool], tokens: int = 7) -> list[dict]:
    """Synthetic per-text results as ``models.census.score_texts`` gives them."""
    out = []
    for i, (v, r) in enumerate(zip(values, repeats)):
        scores = {name: np.clip(v + 0.01 * k, 0, 1) for k, name in enumerate(census.SCORES)}
        if not r:
            scores["induction"] = scores["duplicate"] = None
        out.append({"tokens": tokens + i, "scores": scores})
    return out


def test_the_t_point_in_closed_form():
    # one degree of freedom: Cauchy, t = tan(0.475 pi); two: A = sin(atan(t / sqrt 2)) = 0.95
    assert math.isclose(census.t_critical(1), math.tan(0.475 * math.pi), rel_tol=1e-13)
    assert math.isclose(census.t_critical(2), 0.95 * math.sqrt(2 / (1 - 0.95**2)), rel_tol=1e-13)
    # the printed tables' values
    for df, t in ((3, 3.182446305), (4, 2.776445105), (10, 2.228138852), (30, 2.042272456)):
        assert math.isclose(census.t_critical(df), t, rel_tol=1e-9), df
    assert census.t_critical(1000) < census.t_critical(100) < census.t_critical(10)
    with pytest.raises(ValueError, match="at least 1"):
        census.t_critical(0)


@pytest.mark.oracle
def test_the_t_point_against_scipy():
    stats = pytest.importorskip("scipy.stats")
    for df in (*range(1, 40), 99, 250, 1001):
        assert math.isclose(census.t_critical(df), stats.t.ppf(0.975, df), rel_tol=1e-12), df


@st.composite
def texts(draw):
    n = draw(st.integers(1, 12))
    values = [
        np.array(draw(st.lists(st.floats(0, 1), min_size=6, max_size=6))).reshape(SHAPE) for _ in range(n)
    ]
    repeats = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return per_text(values, repeats)


@settings(max_examples=60, deadline=None)
@given(texts())
def test_means_and_intervals_and_every_claim(results):
    c = census.summary(results, model="smollm2", title="SmolLM2")
    assert c.texts == len(results) and c.shape == SHAPE
    for name in census.SCORES:
        have = [r["scores"][name] for r in results if r["scores"][name] is not None]
        s = c.scores[name]
        assert s.n == len(have)
        if have:
            x = np.stack(have)
            assert np.allclose(s.mean, x.mean(axis=0), rtol=1e-15, atol=1e-15)
        if len(have) >= 2:
            half = census.t_critical(len(have) - 1) * x.std(axis=0, ddof=1) / math.sqrt(len(have))
            assert np.allclose(s.low, s.mean - half, atol=1e-15)
            assert np.allclose(s.high, s.mean + half, atol=1e-15)
            assert np.all(s.low <= s.mean) and np.all(s.mean <= s.high)
        else:
            assert s.low is None and s.high is None
        sentence = census.score_sentence(c, name)
        claims = sentence["claims"]
        assert claims["texts"] == s.n and claims["score"] == name
        if s.n == 0:
            assert "no head has this score" in sentence["text"]
            continue
        top = float(np.max(s.mean))
        assert claims["mean"] == top == s.mean[claims["layer"], claims["head"]]
        first = int(np.argmax(s.mean.ravel()))  # ties: the first in layer, head order
        assert (claims["layer"], claims["head"]) == divmod(first, SHAPE[1])
        where = f"layer {claims['layer']}, head {claims['head']}'s, {census.shown(name, top)}"
        assert where in sentence["text"]
        if s.low is not None:
            assert claims["low"] == s.low[claims["layer"], claims["head"]]
            interval = f"{census.shown(name, claims['low'])} to {census.shown(name, claims['high'])}"
            assert interval in sentence["text"]
    out = census.data(c)
    json.dumps(out, allow_nan=False)
    assert out["interval"]["method"] == "t-interval over texts" and out["interval"]["unit"] == "text"


def test_the_printed_table_and_sentence_on_a_worked_case():
    a = np.array([[0.1, 0.9], [0.5, 0.2], [0.0, 0.3]])
    b = np.array([[0.3, 0.7], [0.5, 0.2], [0.0, 0.5]])
    c = census.summary(per_text([a, b], [True, True]), model="smollm2", title="SmolLM2")
    prev = c.scores["previous"]
    assert prev.mean[0, 1] == 0.8 and math.isclose(prev.sd[0, 1], math.sqrt(0.02), rel_tol=1e-12)
    half = census.t_critical(1) * math.sqrt(0.02) / math.sqrt(2)  # 12.706 * 0.1
    assert math.isclose(prev.high[0, 1], 0.8 + half, rel_tol=1e-12)
    assert census.top_rows(c, "previous", 2) == [
        ["rank", "head", "mean", "95% interval", "texts"],
        ["1", "L0 H1", "80%", "-47.1% to 207.1%", "2"],
        ["2", "L1 H0", "50%", "50% to 50%", "2"],
    ]
    assert census.score_sentence(c, "previous")["text"] == (
        "Previous token: the highest mean is layer 0, head 1's, 80% (95% interval -47.1% to 207.1%, over 2 "
        "texts)."
    )
    heading = "SmolLM2: every head's scores over 2 texts (15 tokens), 3 layers × 2 heads."
    assert census.heading(c)["text"] == heading
    one = census.summary(per_text([a], [False]), model="smollm2", title="SmolLM2")
    assert census.score_sentence(one, "induction")["text"] == (
        "Induction: no text repeats a token, so no head has this score."
    )
    assert census.score_sentence(one, "breadth")["text"].endswith("over 1 text (no interval from one text).")
    assert census.top_rows(one, "first", 1)[1][3] == "—"


def test_the_python_programs_first_line_names_its_head_and_its_score():
    assert census.program_comment("previous", 3, 0, 1) == (
        "# attnlab census --python: this program prints the previous-token score of L3 H0 on the first text "
        "of the file, as the census computes it (L3 H0 has the highest mean previous-token score over its "
        "text)."
    )
    said = census.program_comment("induction", 18, 6, 1200)
    assert said.startswith("# ") and "\n" not in said
    assert said.endswith("induction score over its 1,200 texts).")


def test_the_progress_line():
    assert census.progress_line(0, 4) == "[------------------------] 0 of 4 texts scored"
    assert census.progress_line(3, 4) == "[##################------] 3 of 4 texts scored"
    assert census.progress_line(1, 1) == "[########################] 1 of 1 text scored"
