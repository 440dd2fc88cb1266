"""The head census: the map, the ranking and their sentences against the scores; a head's evidence
against the score it explains (synthetic heads with hypothesis, and SmolLM2 on the probe); a trace job's
census worded once from the worker's numbers and kept with it."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.census import (
    NAMES,
    RANKED,
    ROWS,
    SCORES,
    THRESHOLD,
    census_body,
    census_view,
    display,
    evidence,
    evidence_view,
    query_values,
)
from attnlab.lab.realmodel.kinds import head_scores, kind_of
from attnlab.lab.realmodel.modelview import model_view
from attnlab.models import toy
from attnlab.models.traces import overview

SETTINGS = settings(max_examples=150, deadline=None)
share = st.floats(0, 1, allow_nan=False)


def numbers_of(sentence: dict) -> list[tuple]:
    """The numbers a sentence marks, ``(display, how, value)`` in order; its pieces join to its text."""
    pieces = sentence.get("pieces", [sentence["text"]])  # a sentence with no number: its text
    assert "".join(p if isinstance(p, str) else p["display"] for p in pieces) == sentence["text"]
    return [(p["display"], p["how"], p["value"]) for p in pieces if not isinstance(p, str)]


@st.composite
def heads(draw):
    n_layer, n_head = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    repeats = draw(st.booleans())
    out = []
    for layer in range(n_layer):
        for h in range(n_head):
            s = {k: draw(share) for k in ("previous", "first", "self", "breadth")}
            s["induction"] = draw(share) if repeats else None
            s["duplicate"] = draw(share) if repeats else None
            out.append({"layer": layer, "head": h, "kv_head": h // 2, "kind": kind_of(s), **s})
    return n_layer, n_head, out


@SETTINGS
@given(heads(), st.sampled_from(SCORES))
def test_the_map_the_ranking_and_their_sentences_say_the_scores(drawn, score):
    n_layer, n_head, hs = drawn
    v = census_view(hs, score=score, n_layer=n_layer, n_head=n_head, n_tokens=9, model="m", job="j")
    scored = [h for h in hs if h[score] is not None]
    for h in hs:
        cell = v["map"]["values"][h["layer"]][h["head"]]
        assert cell == h[score]
        shown = "" if h[score] is None else display(score, h[score])
        assert v["map"]["cells"][h["layer"]][h["head"]] == shown
    values = [r["value"] for r in v["ranked"]]
    assert values == sorted(values, reverse=True) and len(values) == min(RANKED, len(scored))
    assert values == sorted((h[score] for h in scored), reverse=True)[:RANKED]
    for r in v["ranked"]:
        assert r["display"] == display(score, r["value"]) and r["label"] == f"L{r['layer']} H{r['head']}"
        # the score as the census computes it: every head at once, as the model view does
        assert r["how"] == {"kind": "census", "layer": r["layer"], "head": r["head"], "score": score}
        assert v["map"]["hows"][r["layer"]][r["head"]] == r["how"]
    top = v["summary"]["claims"]["top"]
    assert top == [[r["layer"], r["head"], r["value"]] for r in v["ranked"][:3]]
    for layer, head, value in top:
        assert f"L{layer} H{head} ({display(score, value)})" in v["summary"]["text"]
    assert numbers_of(v["summary"]) == [(r["display"], r["how"], r["value"]) for r in v["ranked"][:3]]
    reach = v["reach"]["claims"]
    assert reach["count"] == sum(1 for h in scored if h[score] >= THRESHOLD[score])
    assert reach["total"] == len(hs) and reach["threshold"] == THRESHOLD[score]
    assert v["reach"]["text"].startswith(f"{reach['count']} of {len(hs)} ")
    assert v["definition"]["claims"] == {"score": score, "threshold": THRESHOLD[score]}


def test_no_repeated_token_means_no_induction_score_and_the_summary_says_what_to_do():
    hs = [{"layer": 0, "head": 0, "kv_head": 0, "kind": "focused", "previous": 0.1, "first": 0.2,
           "self": 0.1, "breadth": 0.3, "induction": None, "duplicate": None}]  # fmt: skip
    v = census_view(hs, score="induction", n_layer=1, n_head=1, n_tokens=5, model="m")
    assert v["ranked"] == [] and v["map"]["values"] == [[None]] and v["map"]["cells"] == [[""]]
    assert v["summary"] == {
        "text": "No token of this text repeats an earlier one, so no head has an induction score: repeat a "
        "random run to find one.",
        "claims": {"top": []},
    }
    assert v["map"]["titles"][0][0] == (
        "Layer 0, head 0 (KV head 0): no induction score (no token of this text repeats an earlier one)"
    )
    assert v["map"]["legend"]["claims"]["blank"] is True


@st.composite
def attention(draw):
    n = draw(st.integers(1, 10))
    causal = draw(st.booleans())
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    raw = np.array(draw(st.lists(st.floats(0.0, 5.0), min_size=n * n, max_size=n * n))).reshape(n, n)
    raw = np.where(allowed, raw + 1e-3, 0.0)
    w = (raw / raw.sum(axis=1, keepdims=True)).astype(np.float32)
    ids = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    return w, allowed, ids


@SETTINGS
@given(attention(), st.sampled_from(SCORES))
def test_the_evidence_averages_to_the_heads_score(drawn, score):
    w, allowed, ids = drawn
    tokens = [f"t{i}" for i in ids]
    e = evidence(w, allowed, ids, tokens, layer=2, head=1, kv_head=0, score=score, model="m", job="j")
    expected = head_scores(w, allowed, ids)[score]
    counted = [q for q in e["queries"] if q["counted"]]
    claims = e["averaged"]["claims"]
    assert claims["count"] == len(counted)
    if expected is None or not counted:
        assert claims["mean"] is None and e["value"] is None and e["rows"] == []
        return
    mean = claims["mean"]
    assert mean == float(np.mean([q["value"] for q in counted]))  # the sentence's mean is these values'
    assert math.isclose(mean, float(expected), rel_tol=1e-9, abs_tol=1e-12)  # and it is the head's score
    assert display(score, mean) in e["averaged"]["text"]
    head = {"kind": "evidence", "layer": 2, "head": 1, "score": score}
    assert numbers_of(e["averaged"]) == [(display(score, mean), head, mean)] and e["how"] == head
    for q in e["queries"]:  # each counted query's value is a number of its own; the others have none
        assert q["how"] == ({**head, "query": q["index"]} if q["counted"] else None)
    order = sorted((q["index"] for q in counted), key=lambda i: (-e["queries"][i]["value"], i))
    assert [r["query"] for r in e["rows"]] == order[:ROWS]
    for r in e["rows"]:
        assert r["words"]["claims"]["value"] == r["value"] == e["queries"][r["query"]]["value"]
        if score != "breadth":
            counted_keys = [k["index"] for k in r["keys"] if k["counted"]]
            assert counted_keys == r["words"]["claims"]["counted"]
            assert math.isclose(sum(float(w[r["query"], k]) for k in counted_keys), r["value"], rel_tol=1e-6)
            assert fmt.percent(r["value"]) in r["words"]["text"]
        shares = [k["share"] for k in r["keys"]]
        assert shares == [float(w[r["query"], k["index"]]) for k in r["keys"]]
        assert [k["how"] for k in r["keys"]] == [
            {"kind": "weight", "layer": 2, "head": 1, "query": r["query"], "key": k["index"]}
            for k in r["keys"]
        ]
        own = {**head, "query": r["query"]}
        shown = r["display"] if score == "breadth" else fmt.percent(r["value"])
        assert r["how"] == own and numbers_of(r["words"]) == [(shown, own, r["value"])]


def test_each_scores_query_values_on_a_made_up_head():
    # 4 tokens, ids a b a b: query 2 repeats token 0 (target key 1), query 3 repeats token 1 (target key 2)
    w = np.array([[1, 0, 0, 0], [0.5, 0.5, 0, 0], [0.1, 0.7, 0.2, 0], [0.1, 0.1, 0.6, 0.2]], dtype=np.float32)
    allowed = np.tril(np.ones((4, 4), dtype=bool))
    ids = np.array([0, 1, 0, 1])
    f = np.float32
    assert query_values(w, allowed, ids, "previous")[1:].tolist() == [f(0.5), f(0.7), f(0.6)]
    assert math.isnan(query_values(w, allowed, ids, "previous")[0])
    assert query_values(w, allowed, ids, "first")[1:].tolist() == [f(0.5), f(0.1), f(0.1)]
    induction = query_values(w, allowed, ids, "induction")
    assert np.isnan(induction[:2]).all() and induction[2:].tolist() == [f(0.7), f(0.6)]
    duplicate = query_values(w, allowed, ids, "duplicate")
    assert duplicate[2:].tolist() == [f(0.1), f(0.1)]


@pytest.mark.models
def test_smollm2_on_the_probe_ranks_l18_h6_first_and_its_evidence_is_its_score(smollm2):
    from attnlab.lab.realmodel.probe import repeated_run

    trace = smollm2.trace(repeated_run(0)["text"], details=True)
    view = model_view(trace)
    v = census_view(view["heads"], score="induction", n_layer=30, n_head=9, n_tokens=view["n_tokens"],
                    model="smollm2")  # fmt: skip
    assert (v["ranked"][0]["layer"], v["ranked"][0]["head"]) == (18, 6)
    assert v["summary"]["text"].startswith("Highest induction score: L18 H6 (")
    assert {r["layer"] for r in v["ranked"][:3]} <= {17, 18}
    e = evidence(trace.head_weights(18, 6), trace.allowed, trace.ids, trace.tokens, layer=18, head=6,
                 kv_head=2, score="induction", model="smollm2")  # fmt: skip
    assert math.isclose(e["value"], v["ranked"][0]["value"], rel_tol=1e-9)
    assert e["averaged"]["claims"]["count"] == sum(q["counted"] for q in e["queries"]) >= 32  # copies 2 and 3
    assert NAMES["induction"] in e["title"]


def test_the_induction_definition_says_every_earlier_occurrence_as_the_score_sums():
    """ids a b a b a: query 4 repeats token 0 and token 2; its targets are keys 1 and 3 (the tokens right
    after each earlier a), and its value is their sum, as the definition says: every earlier occurrence,
    not the last one only."""
    w = np.array([[1, 0, 0, 0, 0], [0.5, 0.5, 0, 0, 0], [0.1, 0.7, 0.2, 0, 0], [0.1, 0.1, 0.6, 0.2, 0],
                  [0.05, 0.3, 0.05, 0.4, 0.2]], dtype=np.float64)  # fmt: skip
    allowed = np.tril(np.ones((5, 5), dtype=bool))
    ids = np.array([0, 1, 0, 1, 0])
    assert query_values(w, allowed, ids, "induction")[4] == 0.3 + 0.4  # not 0.4, the latest only
    assert query_values(w, allowed, ids, "duplicate")[4] == 0.05 + 0.05
    hs = [{"layer": 0, "head": 0, "kv_head": 0, "kind": "induction", "previous": 0.1, "first": 0.2,
           "self": 0.1, "breadth": 0.3, "induction": 0.7, "duplicate": 0.1}]  # fmt: skip
    definition = census_view(hs, score="induction", n_layer=1, n_head=1, n_tokens=5, model="m")["definition"]
    said = definition["text"]
    assert "every earlier occurrence" in said and "that earlier occurrence" not in said
    e = evidence(w, allowed, ids, list("abaca"), layer=0, head=0, kv_head=0, score="induction", model="m")
    top = next(r for r in e["rows"] if r["query"] == 4)
    assert [k["index"] for k in top["keys"] if k["counted"]] == [1, 3]
    assert top["words"]["text"].endswith(
        "of its attention on the tokens right after every earlier occurrence of its token."
    )
    assert "every earlier occurrence" in census_view(hs, score="duplicate", n_layer=1, n_head=1, n_tokens=5,
                                                     model="m")["definition"]["text"]


# -- a kept trace job's census and evidence --------------------------------------------------------


def _toy_job(job_id: str, text: str, views: dict):
    return SimpleNamespace(id=job_id, trace=toy.ToyModel("smollm2").trace(text, details=True), views=views)


def test_the_census_is_made_from_the_worker_numbers_once_and_kept():
    """The trace job sends the model view's numbers (``overview``); the first census request words the
    model view and every score's census from them, and keeps them (the toy model: no weights to load)."""
    job = _toy_job("j1", "a b c a b c a b", {})
    job.views["overview"] = overview(job.trace)
    body = census_body(job, "induction")
    assert set(job.views) == {"overview", "model-view", *(f"census:{s}" for s in SCORES)}
    view = model_view(job.trace)
    assert json.loads(job.views["model-view"]) == json.loads(json.dumps({"job": "j1", **view}))
    for score in SCORES:
        expected = census_view(view["heads"], score=score, n_layer=2, n_head=2, n_tokens=8, model="smollm2",
                               job="j1")  # fmt: skip
        assert json.loads(job.views[f"census:{score}"]) == json.loads(json.dumps(expected))
    assert census_body(job, "induction") is body and json.loads(body)["job"] == "j1"
    bare = _toy_job("j2", "a b c a b c a b", {})  # a trace kept without its numbers: made here, then kept
    previous = census_body(bare, "previous")
    assert set(bare.views) == {"model-view", *(f"census:{s}" for s in SCORES)}
    assert census_body(bare, "previous") is previous
    assert json.loads(previous) == json.loads(job.views["census:previous"]) | {"job": "j2"}


def test_a_heads_evidence_reads_its_weights():
    job = _toy_job("j", "a b c a b c", {})
    e = evidence_view(job, 1, 0, "induction")
    assert (e["layer"], e["head"], e["kv_head"], e["job"]) == (1, 0, 0, "j")
    w = job.trace.head_weights(1, 0)
    assert e["queries"][3]["value"] == float(w[3, 1])  # "a" again at 3: the token after its first "a" is 1
