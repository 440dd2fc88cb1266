"""The Circuits page's API through the real app and the real models: exact JSON where it is fixed,
every refusal 4xx in the page's words at its field, a sweep's progress and its cancel."""

from __future__ import annotations

import time

import pytest

from attnlab.lab.circuits.page import FILLS
from attnlab.lab.realmodel.probe import repeated_run

pytestmark = pytest.mark.models

WAIT_S = 300
CLEAN, CORRUPT = "The Eiffel Tower is in the city of", "The Colosseum is in the city of"


def finished(client, job: dict) -> dict:
    deadline = time.monotonic() + WAIT_S
    while job["status"] not in ("done", "error", "cancelled"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
        job = client.get(f"/api/circuits/jobs/{job['id']}").json()
    return job


def refusal(response, status: int = 422) -> tuple[list, str]:
    assert response.status_code == status, response.text
    (item,) = response.json()["detail"]
    return item["loc"], item["msg"]


def test_the_models_pickers_and_a_texts_positions(client, smollm2):
    models = {m["name"]: m for m in client.get("/api/circuits/models").json()["models"]}
    smol = models["smollm2"]
    shape = (smol["title"], smol["decoder"], smol["n_layer"], smol["n_head"])
    assert shape == ("SmolLM2-135M-Instruct", True, 30, 9)
    assert smol["heads"][3] == {"value": 3, "label": "head 3 (KV head 1)"}
    assert models["minilm"]["views"] == ["census", "ablation", "patching", "head"]
    found = client.post("/api/circuits/smollm2/tokens", json={"text": "The cat"}).json()
    assert found == {"model": "smollm2", "count": 2, "fits": True, "message": "2 of 256 tokens",
                     "positions": [{"value": 0, "label": "0 The", "exact": "The"},
                                   {"value": 1, "label": "1 ␣cat", "exact": " cat"}], "last": 1}  # fmt: skip
    assert refusal(client.post("/api/circuits/gpt9/tokens", json={"text": "a"})) == (
        ["path", "model"], "Model 'gpt9' is unknown; use one of minilm, smollm2")


def test_the_census_of_a_kept_trace_and_a_heads_evidence(client, traced, smollm2):
    job = traced("smollm2", repeated_run(0)["text"])
    census = client.get(f"/api/circuits/census/{job['id']}").json()
    assert census["score"] == "induction" and census["job"] == job["id"]
    assert (census["ranked"][0]["layer"], census["ranked"][0]["head"]) == (18, 6)
    assert len(census["map"]["values"]) == 30 and len(census["map"]["values"][0]) == 9
    previous = client.get(f"/api/circuits/census/{job['id']}?score=previous").json()
    assert previous["definition"]["claims"] == {"score": "previous", "threshold": 0.5}
    e = client.get(f"/api/circuits/census/{job['id']}/heads/18/6?score=induction").json()
    assert e["value"] == pytest.approx(census["ranked"][0]["value"], rel=1e-9)
    assert refusal(client.get(f"/api/circuits/census/{job['id']}/heads/30/0")) == (
        ["path", "layer"], "Layer 30 does not exist; smollm2 has layers 0..29")
    assert refusal(client.get(f"/api/circuits/census/{job['id']}?score=self")) == (
        ["query", "score"], "Score must be one of 'induction', 'previous', 'first', 'duplicate' or 'breadth'")
    assert refusal(client.get("/api/circuits/census/nope"), 404) == (
        ["path", "job_id"], "This trace is no longer kept: trace the text again")


SMOL = {"model": "smollm2"}
CAT = {**SMOL, "text": "The cat sat."}
PAIR = {**SMOL, "clean": CLEAN, "right": " Paris"}


@pytest.mark.parametrize(
    ("route", "body", "loc", "msg"),
    [
        ("ablation", {**CAT, "heads": "L18 H6 and L17H4"}, ["body", "heads"],
         "Heads to switch off has 'L18 H6 and', which is not a head: write each as L<layer> H<head>, "
         "such as L18 H6"),
        ("ablation", {**CAT, "heads": "L1H1", "how": "half"}, ["body", "how"],
         "How must be one of 'zero' or 'mean'"),
        ("patching", {**PAIR, "corrupt": "Rome is", "other": " Rome"}, ["body", "corrupt"],
         "Corrupted prompt is 2 tokens long and the clean prompt 9; patching needs two prompts of the same "
         "token length"),
        ("patching", {**PAIR, "corrupt": CORRUPT, "other": " Parisian"}, ["body", "other"],
         "Other answer is 2 tokens for SmolLM2-135M-Instruct (␣Paris + ian); give one token, such as "
         "' Paris'"),
        ("lens", {"model": "minilm", "text": "The cat."}, ["body", "model"],
         "Model cannot show a logit lens: all-MiniLM-L6-v2 is an encoder, with no next token and no "
         "unembedding"),
        ("head", {**SMOL, "text": "The cat.", "layer": 3, "head": 9}, ["body", "head"],
         "Head 9 does not exist; smollm2 has heads 0..8"),
        ("head", {**SMOL, "text": "The cat.", "layer": 3, "head": 1, "position": 3}, ["body", "position"],
         "Position 3 does not exist; the text has tokens 0..2"),
    ],
)
def test_every_refusal_is_4xx_in_the_pages_words_at_its_field(client, smollm2, route, body, loc, msg):
    assert refusal(client.post(f"/api/circuits/{route}", json=body)) == (loc, msg)


def test_a_job_runs_to_its_view_and_a_sweep_can_be_cancelled(client, smollm2):
    started = client.post("/api/circuits/lens", json={"model": "smollm2", "text": CLEAN})
    assert started.status_code == 202
    lens = finished(client, started.json())
    assert lens["status"] == "done" and lens["stage_display"] == "Done." and lens["progress"] == 1.0
    assert lens["result"]["named"]["claims"]["answer"] == "␣Paris"
    sweep = {"model": "smollm2", "clean": CLEAN, "corrupt": CORRUPT, "right": " Paris", "other": " Rome",
             "sweep": "heads"}  # fmt: skip
    job = client.post("/api/circuits/patching", json=sweep).json()
    stopped = client.post(f"/api/circuits/jobs/{job['id']}/cancel").json()
    assert stopped["id"] == job["id"] and stopped["cancel_asked"] is True
    stopped = finished(client, stopped)
    assert stopped["status"] == "cancelled"
    done = stopped["result"]["sweep"]["done"]
    assert stopped["stage_display"] == f"Cancelled after {done} of 270 patches: the partial result is shown."
    assert stopped["result"]["sweep"]["map"]["values"][-1][-1] is None  # the last patch was never made
    again = client.post("/api/circuits/patching", json={**sweep, "first_layer": 29}).json()
    full = finished(client, again)
    assert full["status"] == "done" and full["done"] == full["total"] == 9
    assert full["stage_display"] == "Done: 9 patches."
    assert refusal(client.get("/api/circuits/jobs/nope"), 404) == (
        ["path", "job_id"], "This result is no longer kept: run it again")
    assert refusal(client.post("/api/circuits/jobs/nope/cancel"), 404)[0] == ["path", "job_id"]


def test_the_page_is_served_with_its_words_and_the_real_model_page_links_to_it(client):
    page = client.get("/circuits").text
    assert FILLS["title"] in page and FILLS["patching_title"] in page and "<!-- fill:" not in page
    assert '"circuits":{' in page and "/static/v/" in page
    assert 'id="rm-circuits" href="/circuits"' in client.get("/real-model").text


def test_each_views_numbers_name_their_program(client, smollm2):
    """The hook for "How is this computed?": a number's ``how`` and its view's ``program_source`` are a
    request ``POST /api/models/program`` answers (one number of each view)."""
    views = {}
    for route, body in (("lens", {"model": "smollm2", "text": CLEAN}),
                        ("attribution", {"model": "smollm2", "text": CLEAN}),
                        ("head", {"model": "smollm2", "text": CLEAN, "layer": 18, "head": 6}),
                        ("ablation", {"model": "smollm2", "text": CLEAN, "heads": "L18H6"}),
                        ("patching", {**PAIR, "corrupt": CORRUPT, "other": " Rome", "first_layer": 29})):
        job = finished(client, client.post(f"/api/circuits/{route}", json=body).json())
        assert job["status"] == "done", job["message"]
        views[route] = job["result"]
    numbers = {
        "lens": views["lens"]["layers"][-1]["how"]["token_p"],
        "attribution": views["attribution"]["map"]["hows"][18][6],
        "head": views["head"]["keys"][0]["how"]["after"],
        "ablation": views["ablation"]["positions"][3]["how"]["p_after"],
        "patching": views["patching"]["sweep"]["map"]["hows"][0][8],
    }
    for route, how in numbers.items():
        answer = client.post("/api/models/program", json={**views[route]["program_source"], **how})
        assert answer.status_code == 200, (route, answer.text)
        assert answer.json()["kind"] == how["kind"]


def test_the_attention_pattern_and_kv_sweeps_through_the_api(client, smollm2):
    """The pattern, keys and values sites: the page's sweep choices, a map over query heads or KV heads."""
    base = {"model": "smollm2", "clean": CLEAN, "corrupt": CORRUPT, "right": " Paris", "other": " Rome",
            "first_layer": 20, "last_layer": 21}  # fmt: skip
    started = client.post("/api/circuits/patching", json={**base, "sweep": "pattern"}).json()
    pattern = finished(client, started)
    assert pattern["status"] == "done" and pattern["total"] == 2 * 9
    view = pattern["result"]
    assert view["sweep"]["kind"] == "pattern" and view["sweep"]["columns"] == list(range(9))
    assert view["meaning"]["claims"]["kind"] == "pattern" and "attention pattern" in view["meaning"]["text"]
    values = finished(client, client.post("/api/circuits/patching", json={**base, "sweep": "values"}).json())
    sweep = values["result"]["sweep"]
    assert values["total"] == 2 * 3 and sweep["kind"] == "values" and sweep["columns"] == [0, 1, 2]
    assert sweep["map"]["columns"] == ["KV0", "KV1", "KV2"]
    assert "rows are layers, columns KV heads" in sweep["map"]["label"]
    hover = sweep["map"]["titles"][0][1] if "titles" in sweep["map"] else str(sweep["map"])
    assert "query heads 3, 4, 5" in str(hover)
    loc, _ = refusal(client.post("/api/circuits/patching", json={**base, "sweep": "queries"}))
    assert loc[-1] == "sweep"
