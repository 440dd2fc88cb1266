"""Found models through the API (web/realmodel): listed, described, traced by a worker process, every view.

The models are the tiny ones of a fake Hugging Face cache (tests/hubkit.py). The job line is a real
one with a worker process started with the registry pointed at that cache (as ``attnlab serve``
starts its worker after ``--models-dir``): the worker finds the same models by name. A path sent
by a browser is refused unless it is a found model's name.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from attnlab.models import registry
from attnlab.models.families.checkpoint import open_path
from attnlab.models.jobs.line import Jobs
from attnlab.web.app import create_app
from attnlab.web.realmodel import line
from hubkit import GPT2, QWEN2, SHORT, SHORT_CONTEXT

WAIT_S = 240  # a bound on a hang only: the worker process starts and loads the model first


@pytest.fixture
def client(found_models, monkeypatch):
    jobs = Jobs()  # a worker process, started with this environment: it finds the same models
    monkeypatch.setattr(line, "JOBS", jobs)
    with TestClient(create_app()) as c:
        yield c
    jobs.shutdown()


def wait(client, url: str) -> dict:
    deadline = time.monotonic() + WAIT_S
    while (job := client.get(url).json())["status"] not in ("done", "error", "cancelled"):
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
    return job


def test_the_listing_offers_the_found_models_and_says_why_a_file_was_skipped(client):
    body = client.get("/api/models").json()
    by_name = {m["name"]: m for m in body["models"]}
    assert list(by_name)[:2] == ["minilm", "smollm2"] and {QWEN2, GPT2, SHORT} <= set(by_name)
    q = by_name[QWEN2]
    assert (q["group"], q["origin"], q["family"], q["parameters"], q["dtype"], q["chat"]) == (
        "found", "hf-cache", "qwen2", 149248, "float32", True)  # fmt: skip
    assert q["option"] == "tiny/qwen2 (qwen2, 149,248 parameters, float32)"
    assert q["line"]["text"] == (
        "tiny/qwen2: qwen2, 149,248 parameters, float32, chat (in the Hugging Face cache)")  # fmt: skip
    shipped = by_name["smollm2"]
    assert shipped["option"] == "SmolLM2-135M-Instruct" and shipped["parameters"] is None  # not read
    assert body["groups"] == {"shipped": "Shipped with attnlab", "found": "Found on this computer"}
    [skipped] = body["skipped"]
    assert skipped["claims"]["name"] == "tiny/broken" and skipped["claims"]["kind"] == "missing_shard"
    assert skipped["text"].startswith("tiny/broken is skipped: model.safetensors.index.json lists weights ")
    assert body["skipped_title"] == "1 file that looks like a model skipped"
    assert body["searched"]["text"] == "Searched the Hugging Face cache on the server. Nothing is downloaded."
    assert "/" not in body["searched"]["text"]  # the server's folders are not the browser's to see


def test_about_reads_the_models_own_config(client, families):
    about = client.get("/api/models/about", params={"model": QWEN2}).json()
    arch = open_path(families.folder("qwen2")).arch
    assert (about["n_layer"], about["n_head"], about["n_kv_head"], about["d_head"], about["context"]) == (
        arch.n_layer, arch.n_head, arch.n_kv_head, arch.d_head, arch.n_ctx)  # fmt: skip
    assert about["max_tokens"] == 128 and about["writer"] == QWEN2 and about["writer_chat"]
    assert about["note"] == (
        "decoder (causal, GQA): 2 layers × 4 heads, 2 KV heads (grouped-query attention). It reads up to 128 "
        "tokens; this view takes 128 tokens.")  # fmt: skip
    assert about["writer_note"] == {"text": "tiny/qwen2 continues the text.", "claims": {"model": QWEN2}}
    assert about["chat_note"] is None
    short = client.get("/api/models/about", params={"model": SHORT}).json()
    assert short["context"] == short["max_tokens"] == SHORT_CONTEXT  # the model's own limit, not 256
    gpt2 = client.get("/api/models/about", params={"model": GPT2}).json()
    assert not gpt2["writer_chat"] and gpt2["chat_note"]["text"] == (
        "tiny/gpt2 has no chat template, so it has no chat: it continues the text you give it.")  # fmt: skip


def test_a_path_is_refused_unless_it_is_a_found_model(client, families):
    folder = str(families.folder("qwen2"))
    for r in (client.post("/api/models/jobs", json={"model": folder, "text": "Hello"}),
              client.get("/api/models/about", params={"model": folder}),
              client.post("/api/models/generate", json={"model": folder, "prompt": "Hello"})):  # fmt: skip
        assert r.status_code == 422, r.text
        [item] = r.json()["detail"]
        assert item["msg"].startswith(f"Model '{folder}' is a path on the server; the page opens models by")
    assert folder not in registry.names()  # nothing was opened


def test_a_found_models_tokens_are_counted_under_its_slashed_name(client):
    r = client.post(f"/api/models/{QWEN2}/tokens", json={"text": "Hello world"})
    assert r.status_code == 200 and r.json()["cap"] == 128 and r.json()["model"] == QWEN2
    assert r.json()["tokens"] == registry.token_strings(QWEN2, "Hello world")
    over = client.post(f"/api/models/{SHORT}/tokens", json={"text": "word " * 40}).json()
    assert not over["fits"] and over["cap"] == SHORT_CONTEXT


def test_a_found_model_is_traced_by_the_worker_and_every_view_answers(client, families):
    text = "The cat sat on the mat. The cat"
    job = client.post("/api/models/jobs", json={"model": QWEN2, "text": text}).json()
    job = wait(client, f"/api/models/jobs/{job['id']}")
    assert job["status"] == "done", job
    r = job["result"]
    model = open_path(families.folder("qwen2"))
    assert r["tokens"] == model.to_str_tokens(text) and r["n_layer"] == 2
    assert r["kv_groups"] == [[0, 1], [2, 3]]
    base = f"/api/models/jobs/{job['id']}"
    views = ("heads/1/3", "model-view", "rows/1/3/4", "neuron/1/3/4/2", "next/4", "journey/4", "bridge/1/3/4",
             "layers/1")  # fmt: skip
    for url in (f"{base}/{view}" for view in views):
        assert client.get(url).status_code == 200, url
    # the numbers are the model's: the head's weights are its own forward's attention pattern
    import numpy as np

    _, cache = model.run_with_cache(model.to_tokens(text))
    head = client.get(f"{base}/heads/1/3").json()
    got = np.array([[np.nan if w is None else w for w in row] for row in head["weights"]], dtype=float)
    want = np.asarray(cache["blocks.1.attn.hook_pattern"])[3]
    np.testing.assert_allclose(np.nan_to_num(got), want, rtol=0, atol=1e-6)
    journey = client.get(f"{base}/journey/4").json()
    assert journey["norm"] == "rms"  # Qwen2 normalises with RMSNorm
    nxt = client.get(f"{base}/next/{len(r['tokens']) - 1}?top=3").json()
    logits = model.logits(model.to_tokens(text))[-1]
    assert nxt["entries"][0]["id"] == int(np.argmax(logits))


def test_gpt2s_journey_says_layernorm(client):
    job = client.post("/api/models/jobs", json={"model": GPT2, "text": "Hello world"}).json()
    job = wait(client, f"/api/models/jobs/{job['id']}")
    assert job["status"] == "done", job
    assert client.get(f"/api/models/jobs/{job['id']}/journey/1").json()["norm"] == "layer"


def test_a_found_model_writes_and_one_without_a_template_has_no_chat(client, families):
    gen = client.post("/api/models/generate", json={"model": QWEN2, "prompt": "Hello", "max_new_tokens": 4})
    assert gen.status_code == 202, gen.text
    done = wait(client, f"/api/models/generate/{gen.json()['id']}")
    model = open_path(families.folder("qwen2"))
    assert done["status"] == "done" and done["tokens"] == 4
    assert done["pieces"] == [p.text for p in model.generate("Hello", max_new_tokens=4)]
    chat = client.post("/api/models/generate", json={"model": QWEN2, "prompt": "Hello", "chat": True,
                                                     "max_new_tokens": 2})  # fmt: skip
    assert chat.status_code == 202
    assert wait(client, f"/api/models/generate/{chat.json()['id']}")["status"] == "done"
    refused = client.post("/api/models/generate", json={"model": GPT2, "prompt": "Hello", "chat": True})
    assert refused.status_code == 422
    [item] = refused.json()["detail"]
    assert item["loc"] == ["body", "chat"] and item["msg"] == (
        "Ask it as a chat message is not offered: tiny/gpt2 has no chat template, so it has no chat; "
        "continue the text instead")  # fmt: skip
