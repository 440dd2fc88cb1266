"""One ModelSpec per model: a fake tiny spec, registered here, appears in the API, schema, jobs and CLI."""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from attnlab import cli
from attnlab.models import registry, toy
from attnlab.models.jobs.line import Jobs
from attnlab.web.app import create_app
from attnlab.web.realmodel import line

WAIT_S = 60  # a bound on a hang only


@pytest.fixture
def toy_spec(monkeypatch):
    spec = registry.register(toy.toy_spec("toy"))
    jobs = Jobs(process=False)  # the registry's own loader and tokenizer: nothing else knows "toy"
    monkeypatch.setattr(line, "JOBS", jobs)
    yield spec
    jobs.shutdown()
    registry.unregister("toy")


def test_the_shipped_models_are_specs_with_their_shapes_and_caps():
    assert registry.names()[:2] == ("minilm", "smollm2")
    s = registry.spec("smollm2")
    assert (s.architecture, s.generates, s.instruct, s.max_tokens) == ("decoder", True, True, 256)
    assert s.kv_groups == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert registry.spec("minilm").max_tokens == 256 and not registry.spec("minilm").generates
    with pytest.raises(ValueError, match=r"^model 'gpt9' is unknown; use one of minilm, smollm2"):
        registry.spec("gpt9")


def test_a_registered_spec_is_listed_by_the_api_and_the_schema(toy_spec):
    with TestClient(create_app()) as client:
        by_name = {m["name"]: m for m in client.get("/api/models").json()["models"]}
        assert by_name["toy"]["title"] == "Toy decoder" and by_name["toy"]["max_tokens"] == 8
        assert (by_name["toy"]["n_layer"], by_name["toy"]["n_head"], by_name["toy"]["d_head"]) == (2, 2, 4)
        schema = client.get("/api/openapi.json").json()["components"]["schemas"]
        assert "toy" in schema["TraceIn"]["properties"]["model"]["enum"]
        r = client.post("/api/models/toy/tokens", json={"text": "a b c"})
        assert r.json() == {"model": "toy", "count": 3, "cap": 8, "fits": True, "tokens": ["a", "b", "c"],
                            "shown": [{"label": t, "exact": t} for t in "abc"],
                            "message": "3 of 8 tokens"}  # fmt: skip


def test_a_registered_spec_runs_as_a_job_with_its_own_cap(toy_spec):
    with TestClient(create_app()) as client:
        r = client.post("/api/models/jobs", json={"model": "toy", "text": "a b c d e f g h i"})
        assert r.status_code == 422 and r.json()["detail"][0]["msg"].startswith(
            "Text is 9 tokens long for Toy decoder; the Real model view takes at most 8"  # its title
        )
        job = client.post("/api/models/jobs", json={"model": "toy", "text": "a b c d"}).json()
        deadline = time.monotonic() + WAIT_S
        while (job := client.get(f"/api/models/jobs/{job['id']}").json())["status"] != "done":
            assert time.monotonic() < deadline and job["status"] != "error", job
            time.sleep(0.01)
        assert job["stage_display"] == "Done: 2 layers" and job["result"]["has_logits"]
        nxt = client.get(f"/api/models/jobs/{job['id']}/next/3?top=3").json()
        assert [e["token"] for e in nxt["entries"]][0].startswith("w") and nxt["vocab"] == 16
        gen = client.post("/api/models/generate", json={"model": "toy", "prompt": "hi", "max_new_tokens": 2})
        assert gen.status_code == 202 and gen.json()["chat"] is False  # not an instruct model


def test_a_registered_spec_is_known_to_the_cli(toy_spec, capsys):
    assert cli.main(["heads", "a b c", "--model", "toy", "--json", "--layer", "1"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["model"] == "toy" and body["tokens"] == ["a", "b", "c"] and body["n_layer"] == 2
    assert cli.main(["generate", "hi", "--model", "toy", "--max-new-tokens", "2", "--json"]) == 0
    assert [t["text"] for t in json.loads(capsys.readouterr().out)["tokens"]] == [" w0", " w1"]
