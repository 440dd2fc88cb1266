"""The views of a kept trace (web/realmodel/views.py) through the real app and the real models."""

from __future__ import annotations

import base64
import math
import time

import numpy as np
import pytest

from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel.kinds import KINDS
from attnlab.models.sampling import Sampling, cut
from attnlab.web.realmodel.schema import HeadView, JourneyView, ModelView, NeuronView, NextView

pytestmark = pytest.mark.models

TEXT = "The capital of France is Paris. The cat sat on the mat"


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_token_count_is_the_traces_own(client, traced, model, request):
    request.getfixturevalue(model)
    body = client.post(f"/api/models/{model}/tokens", json={"text": TEXT}).json()
    job = traced(model, TEXT)
    assert body["tokens"] == job["result"]["tokens"] and body["count"] == len(body["tokens"])
    assert body["cap"] == 256 and body["fits"] and body["message"] == f"{body['count']} of 256 tokens"
    over = client.post(f"/api/models/{model}/tokens", json={"text": "word " * 300}).json()
    assert not over["fits"] and over["message"].endswith(f"shorten it by {over['count'] - 256}.")


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_the_neuron_view_equals_trace_query_on_the_same_vectors(
    client, traced, reference_row, model, request
):
    m = request.getfixturevalue(model)
    job = traced(model, TEXT)
    trace = m.trace(TEXT, details=True)
    layer, head, query, key = 2, 5, 9, 4
    r = client.get(f"/api/models/jobs/{job['id']}/neuron/{layer}/{head}/{query}/{key}")
    assert r.status_code == 200, r.text
    view = NeuronView.model_validate(r.json())
    ref = reference_row(trace, layer, head, query)
    assert (
        view.q == list(ref.q)
        and view.k == list(ref.keys[key])
        and view.d_k == 64 // (2 if model == "minilm" else 1)
    )
    assert view.products == [a * b for a, b in zip(ref.q, ref.keys[key])]
    assert view.dot == ref.dots[key] and view.score == ref.scores[key] and view.scale == trace.scale
    assert view.row.weights == list(ref.weights) and view.row.exps == list(ref.exps)
    assert (view.row.m, view.row.z) == (ref.m, ref.z)
    assert view.row.key_share == ref.weights[key]
    assert np.abs(np.array(view.row.weights) - trace.head_weights(layer, head)[query]).max() <= 1e-6
    assert view.words.share.text.startswith("Share: softmax")
    assert view.plane.caption.text.startswith("A projection")


def test_a_256_token_trace_answers_rows_heads_and_the_neuron_view(client, traced, minilm):
    text = " ".join(["a cat sat on the mat and"] * 36)  # 7 words a time: 254 tokens with [CLS], [SEP]
    count = client.post("/api/models/minilm/tokens", json={"text": text}).json()["count"]
    assert 240 <= count <= 256
    job = traced("minilm", text)
    i = job["id"]
    head = HeadView.model_validate(client.get(f"/api/models/jobs/{i}/heads/3/7").json())
    trace = minilm.trace(text)
    np.testing.assert_array_equal(np.array(head.weights, dtype=np.float32), trace.weights[3, 7])
    row = client.get(f"/api/models/jobs/{i}/rows/3/7/{count - 1}")
    assert row.status_code == 200 and len(row.json()["sources"]) == count
    neuron = client.get(f"/api/models/jobs/{i}/neuron/3/7/{count - 1}/0").json()
    assert len(neuron["row"]["weights"]) == count
    view = ModelView.model_validate(client.get(f"/api/models/jobs/{i}/model-view").json())
    assert (view.size, len(view.heads), view.bins[-1][1]) == (32, 72, count)


def test_the_model_view_labels_every_head_with_its_kind(client, traced, smollm2):
    job = traced("smollm2", TEXT)
    view = ModelView.model_validate(client.get(f"/api/models/jobs/{job['id']}/model-view").json())
    assert (view.n_layer, view.n_head, len(view.heads)) == (30, 9, 270)
    kinds = {h.kind for h in view.heads}
    assert kinds <= set(KINDS) and len(kinds) >= 2
    h = view.heads[1 * 9 + 2]
    head = client.get(f"/api/models/jobs/{job['id']}/heads/1/2").json()
    assert h.kind == head["kind"] and h.label == f"L1 H2 · {head['kind_short']}"
    assert head["kind_sentence"]["claims"]["kind"] == h.kind and head["induction"] == h.induction
    assert [d.kind for d in view.kinds] == list(KINDS)  # the legend defines every kind
    assert head["legend"]["blocked"] and head["weights"][0][1] is None


def test_next_token_probabilities_are_recomputed_from_the_real_logits(client, traced, smollm2):
    job = traced("smollm2", TEXT)
    ids = job["result"]["ids"]
    r = client.get(f"/api/models/jobs/{job['id']}/next/4?temperature=0.8&top_k=20&top_p=0.8&top=5")
    view = NextView.model_validate(r.json())
    logits = smollm2.logits(ids)[4]
    c = cut(logits, Sampling(temperature=0.8, top_k=20, top_p=0.8))
    order = np.argsort(-logits.astype(np.float64), kind="stable")[:5]
    assert [e.id for e in view.entries] == order.tolist()
    assert np.abs(np.array([e.p for e in view.entries]) - c.p[order]).max() <= 1e-5
    assert view.entries[0].token == " Paris" and view.actual.token == " Paris" and view.actual.rank == 1
    assert view.removed[1].count == 49152 - 20 and view.kept == int((c.p > 0).sum())
    assert math.isclose(sum(e.p for e in view.entries if e.kept), 1.0, rel_tol=1e-9) or view.kept > 5


def test_one_tokens_journey_through_the_blocks(client, traced, smollm2):
    job = traced("smollm2", TEXT)
    view = JourneyView.model_validate(client.get(f"/api/models/jobs/{job['id']}/journey/5").json())
    assert len(view.blocks) == 30 and view.norm == "rms" and view.placement == "pre"
    ids = job["result"]["ids"]
    from attnlab.engine.hooks import block_names

    _, cache = smollm2.run_with_cache(ids, ops=smollm2.trace_ops)
    n = block_names(7)
    t = {"input": cache[n.resid_pre], "attn.output": cache[n.attn_out], "mlp.output": cache[n.mlp_out],
         "output": cache[n.resid_post], "mlp.activated": cache[n.mlp_post], "residual_1": cache[n.resid_mid]}
    b = view.blocks[7]

    def norm(x) -> float:
        return float(np.linalg.norm(x.astype(np.float64)))

    # the same float32 rows; a norm of a (T, d) array may round its last bit unlike a single row's
    assert math.isclose(b.resid_in, norm(t["input"][5]), rel_tol=1e-12)
    assert math.isclose(b.attn, norm(t["attn.output"][5]), rel_tol=1e-12)
    assert math.isclose(b.mlp, norm(t["mlp.output"][5]), rel_tol=1e-12)
    assert math.isclose(b.resid_out, norm(t["output"][5]), rel_tol=1e-12)
    act = t["mlp.activated"][5]
    unit = int(np.argmax(np.abs(act)))
    assert (b.mlp_top[0].unit, b.mlp_top[0].value) == (unit, float(act[unit]))
    rms = float(np.sqrt((t["residual_1"][5].astype(np.float64) ** 2).mean()))
    assert math.isclose(b.norm_2.rms, rms, rel_tol=1e-12)
    # every number comes with the string the page shows, rounded for reading
    assert b.display["mlp"] == fmt.rounded(b.mlp)
    assert b.norm_2.display == {k: fmt.rounded(getattr(b.norm_2, k)) for k in ("mean", "rms", "max_abs")}
    assert [u.value_display for u in b.mlp_top] == [fmt.rounded(u.value) for u in b.mlp_top]


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_a_packed_head_has_the_same_numbers_and_shares_are_its_weights_rounded(
    client, traced, model, request
):
    request.getfixturevalue(model)
    job = traced(model, TEXT)
    base = f"/api/models/jobs/{job['id']}/heads/2/5"
    plain = client.get(base).json()
    packed = client.get(base, params={"packed": "true"}).json()
    HeadView.model_validate(plain), HeadView.model_validate(packed)
    n = plain["n_tokens"]
    cells = np.frombuffer(base64.b64decode(packed.pop("weights_f32")), dtype="<f4").reshape(n, n)
    assert [[None if np.isnan(x) else float(x) for x in row] for row in cells] == plain["weights"]
    weights = plain.pop("weights")
    assert packed == plain  # all else equal
    assert plain["shares"] == [[fmt.rounded(w, 2) if w is not None else "" for w in row] for row in weights]
    blocked = sum(w is None for row in weights for w in row)
    assert blocked == (n * (n - 1) // 2 if model == "smollm2" else 0)


def test_the_model_views_numbers_come_with_the_trace_and_its_words_are_kept_once_made(client, traced, minilm):
    from attnlab.models.traces import overview
    from attnlab.web.realmodel import line

    job = traced("minilm", "A text nobody has traced before in this module.")
    kept = line.JOBS.trace_job(job["id"])
    numbers = kept.views["overview"]  # sent by the worker with the trace: numbers, no words yet
    assert "model-view" not in kept.views
    here = overview(kept.trace)
    assert numbers["size"] == here["size"] and np.array_equal(numbers["cells"], here["cells"], equal_nan=True)
    assert numbers["scores"].keys() == here["scores"].keys()
    for score, values in here["scores"].items():
        assert (numbers["scores"][score] is None) if values is None else np.array_equal(
            numbers["scores"][score], values, equal_nan=True)  # fmt: skip
    answer = client.get(f"/api/models/jobs/{job['id']}/model-view")
    assert answer.content == kept.views["model-view"].encode()  # worded on the first request, then kept
    assert client.get(f"/api/models/jobs/{job['id']}/model-view").content == answer.content
    assert ModelView.model_validate(answer.json()).heads[0].previous_display.endswith("%")


def test_generation_steps_carry_their_distribution_and_chat_is_a_choice(client, smollm2):
    from attnlab.models.chat import user_turn

    body = {"prompt": "What is the capital of France?", "max_new_tokens": 4, "chat": True}
    job = client.post("/api/models/generate", json=body).json()
    deadline = time.monotonic() + 120
    while (job := client.get(f"/api/models/generate/{job['id']}").json())["status"] not in ("done", "error"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert job["chat"] and job["hint"] == "" and job["mode"] == "Answer as the assistant (chat template)"
    ids = list(smollm2.generate_ids(smollm2.encode(user_turn(body["prompt"])), max_new_tokens=4))
    assert [s["id"] for s in job["steps"]] == ids
    first = smollm2.logits(smollm2.encode(user_turn(body["prompt"])))[-1]
    p = cut(first, Sampling(temperature=1.0)).p
    step = job["steps"][0]
    assert step["top"][0]["id"] == ids[0] == int(np.argmax(first))  # greedy draws the likeliest
    # Generation runs the prompt through the KV-cache path, whose summation order differs from a
    # whole logits pass by rounding only (each within 5e-4 of HF's logits): p agrees to ~1e-6,
    # far inside what a changed distribution would move (a wrong position or temperature moves it by >1e-2).
    assert abs(step["p"] - p[ids[0]]) <= 1e-4 and len(step["top"]) == 5


def test_stage_display_counts_layers_without_passing_the_last(client, traced, minilm):
    job = traced("minilm", "One more short text.")
    assert job["stage_display"] == "Done: 6 layers"


@pytest.mark.parametrize(
    ("path", "status", "field"),
    [
        ("heads/30/0", 422, "path.layer"),
        ("heads/0/9", 422, "path.head"),
        ("neuron/0/0/99/0", 422, "path.query"),
        ("neuron/0/0/0/99", 422, "path.key"),
        ("neuron/0/-1/0/0", 422, "path.head"),
        ("next/99", 422, "path.position"),
        ("next/0?temperature=-1", 422, "query.temperature"),
        ("next/0?temperature=nan", 422, "query.temperature"),
        ("next/0?top_p=0", 422, "query.top_p"),
        ("next/0?top_k=-2", 422, "query.top_k"),
        ("next/0?top=0", 422, "query.top"),
        ("journey/99", 422, "path.index"),
    ],
)
def test_bad_view_requests_name_the_field(client, traced, smollm2, path, status, field):
    job = traced("smollm2", TEXT)
    r = client.get(f"/api/models/jobs/{job['id']}/{path}")
    assert r.status_code == status, r.text
    assert r.json()["detail"][0]["field"] == field


def test_views_of_unknown_or_unsuitable_jobs(client, traced, minilm):
    assert client.get("/api/models/jobs/nope/model-view").status_code == 404
    job = traced("minilm", "Hello there.")
    r = client.get(f"/api/models/jobs/{job['id']}/next/0")
    assert r.status_code == 409 and r.json()["detail"][0]["field"] == "model"
    r = client.post("/api/models/gpt9/tokens", json={"text": "hi"})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "path.model"
    r = client.post("/api/models/minilm/tokens", json={"text": "x" * 2001})
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "text"
