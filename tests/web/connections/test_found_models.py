"""The live labs on a found model, through the API: the KV cache measured as it writes, its RoPE, serving.

The registry searches a fake Hugging Face cache of tiny models (tests/hubkit.py) and the job line's
worker is a process started with that environment (as ``attnlab serve`` starts it): the labs' runs
are jobs of that worker on the chosen model, and their numbers are the model's.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from attnlab.models.families.checkpoint import open_path
from attnlab.models.jobs.line import Jobs
from attnlab.web.app import create_app
from attnlab.web.realmodel import line
from hubkit import GPT2, QWEN2

WAIT_S = 240  # a bound on a hang only: the worker starts and loads the model first


@pytest.fixture
def client(found_models, monkeypatch):
    jobs = Jobs()
    monkeypatch.setattr(line, "JOBS", jobs)
    with TestClient(create_app()) as c:
        yield c
    jobs.shutdown()


def done(client, name: str, query: dict) -> dict:
    deadline = time.monotonic() + WAIT_S
    while (answer := client.get(f"/api/connections/{name}", params=query).json())["live"]["status"] != "done":
        assert answer["live"]["status"] == "waiting" and time.monotonic() < deadline, answer
        time.sleep(0.1)
    return answer


def test_the_kv_cache_lab_measures_a_found_models_caches(client, families):
    answer = done(client, "kv", {"live": "on", "new": 3, "model": QWEN2, "prompt": "The cat sat"})
    a = open_path(families.folder("qwen2")).arch
    live = answer["data"]["live"]
    assert live["equal"] and live["measured"] == live["counted"]
    assert live["counted"][-1] == 2 * a.n_layer * a.n_kv_head * a.d_head * 4 * live["tokens"][-1]
    texts = [w["text"] for w in answer["words"]]
    assert any(t.startswith(f"Live: {QWEN2} read your prompt") for t in texts)
    assert any(t.startswith(f"{QWEN2} caches K and V in {a.n_layer} layers") for t in texts)


def test_the_rope_lab_shows_a_found_models_own_rope(client, families):
    answer = done(client, "rope", {"own": "on", "model": QWEN2})
    own = answer["data"]["own"]
    a = open_path(families.folder("qwen2")).arch
    assert (own["base"], own["head_dim"], own["context"]) == (a.rope_base, a.d_head, a.n_ctx)
    first = next(w["text"] for w in answer["words"] if "own RoPE" in w["text"])
    half = a.d_head // 2
    assert first.startswith(f"{QWEN2}'s own RoPE, as its config states it: head size {a.d_head} "
                            f"({half} pairs, turned as coordinates i and i + {half})")  # fmt: skip
    refused = client.get("/api/connections/rope", params={"own": "on", "model": GPT2})
    assert refused.status_code == 422 and refused.json()["detail"][0]["field"] == "model"


def test_the_serving_lab_serves_a_found_models_requests(client, families):
    answer = done(client, "serving", {"model": QWEN2, "prompts": "Hi\nThe cat", "tokens": 4, "batch": 2})
    run = answer["data"]["run"]
    model = open_path(families.folder("qwen2"))
    greedy = [[p.id for p in model.generate(t, max_new_tokens=4) if p.finish != "end_of_turn"]
              for t in ("Hi", "The cat")]  # fmt: skip
    assert run["same"] and run["tokens"]["one"] == run["tokens"]["batched"] == greedy
