"""The Real model view's API (web/realmodel/jobs.py) through the real app, no mocks."""

from __future__ import annotations

import time

import numpy as np
import pytest
from fastapi.testclient import TestClient

from attnlab.web.app import create_app

pytestmark = pytest.mark.models

CAT = "The cat sat on the mat."


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def wait(client, job_id: str, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(f"/api/models/jobs/{job_id}").json()
        if job["status"] in ("done", "error") or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def start(client, model: str, text: str) -> dict:
    r = client.post("/api/models/jobs", json={"model": model, "text": text})
    assert r.status_code == 202, r.text
    return r.json()


def test_models_lists_both_with_their_shapes_and_caps(client):
    body = client.get("/api/models").json()
    by_name = {m["name"]: m for m in body["models"]}
    assert set(by_name) == {"minilm", "smollm2"}
    assert body["max_chars"] == 2000 and body["max_tokens"] == 256
    # the shapes and caps are the models' own, read from their files (GET /api/models/about)
    minilm, smollm2 = (client.get("/api/models/about", params={"model": m}).json()
                       for m in ("minilm", "smollm2"))  # fmt: skip
    assert (minilm["n_layer"], minilm["n_head"]) == (6, 12)
    assert smollm2["kv_groups"] == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert smollm2["max_tokens"] == minilm["max_tokens"] == 256
    # continuing the text is the default, for an instruct model too; the chat template is a choice
    assert by_name["smollm2"]["generates"] and not by_name["smollm2"]["chat_default"]
    assert not by_name["minilm"]["generates"] and by_name["minilm"]["architecture"] == "encoder"


def test_models_say_what_their_products_run_on_once_loaded(client, smollm2):
    job = wait(client, start(client, "smollm2", CAT)["id"])
    assert job["status"] == "done"
    by_name = {m["name"]: m for m in client.get("/api/models").json()["models"]}
    assert by_name["smollm2"]["loaded"] and by_name["smollm2"]["path"] == "q4_1" == smollm2.path
    assert by_name["minilm"]["path"] in (None, "float32")  # None until the worker has loaded it


def test_a_trace_job_reports_progress_and_its_layers_equal_the_model(client, minilm):
    job = wait(client, start(client, "minilm", CAT)["id"])
    assert job["status"] == "done" and job["progress"] == 1.0 and job["layers_done"] == 6
    assert (job["place"], job["place_display"]) == (None, "")
    assert start(client, "minilm", CAT)["id"] == job["id"]  # the same text again: the same, kept job
    assert job["result"]["tokens"] == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    assert job["result"]["labels"][3] == "3 sat"
    layer = client.get(f"/api/models/jobs/{job['id']}/layers/2").json()
    ours = minilm.trace(CAT).weights[2]
    got = np.array([h["weights"] for h in layer["heads"]], dtype=np.float32)
    np.testing.assert_array_equal(got, ours)  # float32 -> JSON -> float32 loses nothing
    assert layer["heads"][5]["shares"][3][0] == f"{ours[5, 3, 0]:.2f}".rstrip("0").rstrip(".")
    assert all(h["kv_head"] == h["head"] for h in layer["heads"])


def test_a_query_row_is_the_explorers_calculation(client, minilm):
    job = wait(client, start(client, "minilm", CAT)["id"])
    row = client.get(f"/api/models/jobs/{job['id']}/rows/2/5/3").json()
    weights = minilm.trace(CAT).weights[2, 5, 3]
    shares = np.array([s["share"] for s in row["sources"]])
    assert np.abs(shares - weights).max() <= 1e-6
    assert row["query"] == "3 sat" and row["kv_head"] == 5
    assert (
        row["top"][0]["label"]
        == f"{int(np.argmax(weights))} {job['result']['tokens'][int(np.argmax(weights))]}"
    )
    assert row["summary"].startswith("q lines up most with ")
    assert sum(s["share"] for s in row["sources"]) == pytest.approx(1.0, abs=1e-12)


def test_smollm2_rows_are_causal_and_show_the_gqa_group(client, smollm2):
    job = wait(client, start(client, "smollm2", CAT)["id"])
    assert job["status"] == "done", job["message"]
    assert job["result"]["causal"] is True and job["result"]["n_kv_head"] == 3
    layer = client.get(f"/api/models/jobs/{job['id']}/layers/4").json()
    assert [h["kv_head"] for h in layer["heads"]] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert layer["heads"][0]["shares"][0][1] == ""  # the first token may not see the second
    row = client.get(f"/api/models/jobs/{job['id']}/rows/4/7/2").json()
    assert [s["allowed"] for s in row["sources"]] == [True, True, True, False, False, False, False]
    assert row["sources"][5]["score_display"] == "blocked" and row["sources"][5]["score"] is None
    assert row["kv_head"] == 2


def test_the_view_gets_its_words_and_a_traces_names_from_the_lab(client, smollm2):
    words = client.get("/api/models").json()["words"]
    assert words["retry"] == "{message} Trying again in {seconds} s…"
    assert words["nothing_traced"] == "Nothing traced: fix the text and try again."
    job = wait(client, start(client, "smollm2", CAT)["id"])
    r = job["result"]
    assert r["layer_names"][29] == "layer 29" and len(r["layer_names"]) == 30
    assert r["head_names"][4] == "head 4" and r["head_options"][4] == "head 4 (KV head 1)"
    assert r["kv_group_names"][2]["title"]["claims"] == {"kv_head": 2, "heads": [6, 7, 8]}
    assert r["row_title"] == "Query {query} · layer {layer}, head {head} (reads KV head {kv_head})"
    assert r["scale_display"] == "0.125"  # 1 / sqrt(64)
    minilm = wait(client, start(client, "minilm", CAT)["id"])["result"]
    assert minilm["head_options"] == minilm["head_names"] and "{kv_head}" not in minilm["row_title"]


def test_the_explorer_answers_while_a_model_is_working(client, smollm2):
    # ~216 tokens (the cap is 256): 30 layers take seconds even on a quiet machine, while the
    # explorer answers in milliseconds (54 tokens was done first once the prefill got faster)
    text = " ".join(["a cat sat on the mat"] * 36)
    job = start(client, "smollm2", text)
    r = client.post(
        "/api/trace",
        json={"q": [2, 1], "keys": [[-1, 2], [1, 0], [0, 1]], "values": [[2, 0], [0, 2], [-1, -1]]},
    )
    assert r.status_code == 200
    assert client.get(f"/api/models/jobs/{job['id']}").json()["status"] in ("queued", "loading", "running")
    assert wait(client, job["id"])["status"] == "done"
    assert client.get("/api/models").json()["worker"] == "process"  # the model ran outside this process


def test_text_over_the_character_cap_gets_the_message(client):
    r = client.post("/api/models/jobs", json={"model": "minilm", "text": "x" * 2001})
    assert r.status_code == 422
    [item] = r.json()["detail"]
    assert item["field"] == "text"
    assert item["msg"] == "Text has 2,001 characters; it takes at most 2,000. Shorten it by 1."


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_text_over_the_token_cap_is_refused_before_any_job(client, model):
    from attnlab.models.jobs.line import JOBS

    before = JOBS.computations
    r = client.post("/api/models/jobs", json={"model": model, "text": " ".join(["word"] * 300)})
    assert r.status_code == 422
    [item] = r.json()["detail"]
    assert item["field"] == "text"
    n = 302 if model == "minilm" else 300  # MiniLM's [CLS] and [SEP] count
    title = {"minilm": "all-MiniLM-L6-v2", "smollm2": "SmolLM2-135M-Instruct"}[model]
    assert item["msg"] == (
        f"Text is {n} tokens long for {title}; the Real model view takes at most 256 tokens. "
        f"Shorten it by {n - 256}."
    )
    assert JOBS.computations == before  # nothing was queued: no model was loaded for it


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"model": "minilm", "text": "   "}, "text"),
        ({"model": "gpt9", "text": "hi"}, "model"),
        ({"model": "minilm"}, "text"),
        ({"model": "minilm", "text": 3}, "text"),
        ({"model": "minilm", "text": "hi", "extra": 1}, "extra"),
    ],
)
def test_bad_requests_name_the_field(client, body, field):
    r = client.post("/api/models/jobs", json=body)
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == field


def test_unknown_jobs_layers_and_heads(client):
    assert client.get("/api/models/jobs/j999999").status_code == 404
    job = wait(client, start(client, "minilm", CAT)["id"])
    r = client.get(f"/api/models/jobs/{job['id']}/layers/6")
    assert r.status_code == 422
    [item] = r.json()["detail"]
    assert item["loc"] == ["path", "layer"]
    assert item["msg"] == "Layer 6 does not exist; minilm has layers 0..5"
    r = client.get(f"/api/models/jobs/{job['id']}/rows/0/12/0")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["path", "head"]
    r = client.get(f"/api/models/jobs/{job['id']}/rows/0/0/9")
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["path", "index"]


def test_details_give_each_heads_q_k_v_and_scores(client, smollm2):
    job = wait(client, start(client, "smollm2", CAT)["id"])
    plain = client.get(f"/api/models/jobs/{job['id']}/layers/3").json()
    assert plain["heads"][0]["q"] is None
    layer = client.get(f"/api/models/jobs/{job['id']}/layers/3?details=true&head=4").json()
    [head] = layer["heads"]  # head 4 alone: it reads KV head 1
    q, k = np.array(head["q"]), np.array(head["k"])
    assert q.shape == (7, 64) and k.shape == (7, 64) and np.array(head["v"]).shape == (7, 64)
    assert head["scores"][1][2] is None  # token 1 may not see token 2
    s = np.array([[x if x is not None else -np.inf for x in row] for row in head["scores"]])
    np.testing.assert_allclose(np.tril(s), np.tril(q @ k.T / 8.0), rtol=1e-5, atol=1e-5)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(e / e.sum(axis=1, keepdims=True), head["weights"], atol=1e-6)
    trace = smollm2.trace(CAT, details=True)
    np.testing.assert_array_equal(np.array(head["k"], dtype=np.float32), trace.k[3, 1])


def test_generation_streams_pieces_equal_to_the_models_greedy_tokens(client, smollm2):
    body = {"prompt": "Once upon a time", "max_new_tokens": 12, "chat": False}
    r = client.post("/api/models/generate", json=body)
    assert r.status_code == 202
    job_id, counts = r.json()["id"], []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = client.get(f"/api/models/generate/{job_id}").json()
        counts.append(job["tokens"])
        if job["status"] in ("done", "error"):
            break
        time.sleep(0.02)
    assert job["status"] == "done" and job["finish"] == "length" and job["tokens"] == 12
    ids = smollm2.encode("Once upon a time")
    assert job["text"] == smollm2.decode(list(smollm2.generate_ids(ids, max_new_tokens=12)))
    assert job["text"] == "".join(job["pieces"])
    assert counts == sorted(counts)  # the text only grows


def test_chat_generation_stops_at_the_end_of_the_turn(client, smollm2):
    body = {"prompt": "Say hello.", "chat": True, "max_new_tokens": 64}
    job_id = client.post("/api/models/generate", json=body).json()["id"]
    deadline = time.monotonic() + 120
    while (job := client.get(f"/api/models/generate/{job_id}").json())["status"] not in ("done", "error"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert job["status"] == "done"
    if job["finish"] == "end_of_turn":
        assert job["tokens"] < 64 and "<|im_end|>" not in job["text"]
    else:
        assert job["tokens"] == 64


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"prompt": " "}, "prompt"),
        ({"prompt": "x" * 8001}, "prompt"),
        ({"prompt": "hi", "model": "minilm"}, "model"),
        ({"prompt": "hi", "model": "gpt9"}, "model"),
        ({"prompt": "hi", "max_new_tokens": 65}, "max_new_tokens"),
        ({"prompt": "hi", "temperature": -0.5}, "temperature"),
        ({"prompt": "hi", "top_p": 0}, "top_p"),
        ({"prompt": "hi", "top_k": 2.5}, "top_k"),
        ({"prompt": "hi", "temperature": True}, "temperature"),  # before: accepted as 1.0
        ({"prompt": "hi", "temperature": "0.7"}, "temperature"),  # before: accepted as 0.7
        ({"prompt": "hi", "top_p": "0.9"}, "top_p"),
        ({"prompt": "hi", "seed": True}, "seed"),
        ({"prompt": "word " * 400}, "prompt"),  # before: accepted (a 4,000-token prompt took 27 s)
        ({"prompt": "\U0001f600" * 8000}, "prompt"),  # before: 202, then a failed job with field null
    ],
)
def test_bad_generation_requests_name_the_field(client, body, field):
    r = client.post("/api/models/generate", json=body)
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == field


def test_generation_and_trace_ids_do_not_mix(client):
    job = start(client, "minilm", CAT)
    assert client.get(f"/api/models/generate/{job['id']}").status_code == 404
