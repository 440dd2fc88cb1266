"""``GET /api/models/probe``: the repeated-run probe text, through the real app (no model is loaded)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from attnlab.lab.realmodel.probe import repeated_run
from attnlab.web.app import create_app
from attnlab.web.realmodel.schema import ProbeOut


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def test_a_seed_gives_the_labs_probe_exactly(client):
    r = client.get("/api/models/probe?seed=42")
    assert r.status_code == 200
    assert r.json() == repeated_run(42)
    ProbeOut.model_validate(r.json())
    assert client.get("/api/models/probe?seed=42&n_words=8").json() == repeated_run(42, n_words=8)


def test_without_a_seed_the_answer_names_the_seed_it_used(client):
    body = client.get("/api/models/probe").json()
    assert body == repeated_run(body["seed"])
    assert body["note"]["text"].startswith(f"Seed {body['seed']}: a random run of 16 words")


@pytest.mark.parametrize("query", ["seed=-1", "seed=1000000", "seed=x", "n_words=1"])
def test_a_bad_seed_or_length_is_refused(client, query):
    r = client.get(f"/api/models/probe?{query}")
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == query.split("=")[0]
