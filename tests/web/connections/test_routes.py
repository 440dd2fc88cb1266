"""The connection labs' API and pages: exact answers, 4xx at the field in the page's words, exports."""

from __future__ import annotations

import json
import re
import time

import pytest
from fastapi.testclient import TestClient

from attnlab.lab.connections import registry
from attnlab.lab.connections.export import to_json, to_markdown
from attnlab.lab.connections.page import lab_page
from attnlab.web.app import create_app
from attnlab.web.connections import routes


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def test_the_labs_are_listed(client):
    assert client.get("/api/connections").json() == registry.listing()


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_labs_answer_is_the_labs_own(client, name):
    # a lab whose defaults start a model run is compared once the run is done: while it runs, its
    # progress ("12 of 48 tokens") may move between the route's answer and the second measurement
    deadline = time.monotonic() + 600
    while (r := client.get(f"/api/connections/{name}")).json().get("live", {}) and r.json()["live"][
        "status"
    ] == "waiting":
        assert time.monotonic() < deadline, f"{name}'s run did not finish"
        time.sleep(0.2)
    assert r.status_code == 200
    measured = routes._measured(name, {}, "query")  # what the route passes in: kv's shapes, the registry's
    assert r.json() == json.loads(json.dumps(lab_page(name, {}, "query", measured)))


def test_the_query_is_the_links_inputs(client):
    answer = client.get("/api/connections/flash?n=32&tile=8&row=9&keys=12&window=3&seed=5").json()
    assert answer["inputs"] == {"n": 32, "tile": 8, "row": 9, "keys": 12, "window": 3, "seed": 5}
    assert answer["link"] == "/connections/flash?n=32&tile=8&row=9&keys=12&window=3&seed=5"
    assert answer["data"]["block"] == [8, 16] and len(answer["data"]["m"]) == 2  # causal: tiles 3-4 skipped


@pytest.mark.parametrize(
    "query,loc,msg",
    [
        ("n=3", ["query", "n"], "Sequence length n must be at least 4"),
        ("n=16&tile=17", ["query", "tile"], "Tile size must be at most 16, the sequence length n"),
        ("n=16&row=16", ["query", "row"], "Query row must be at most 15, the sequence length n minus 1"),
        ("seed=one", ["query", "seed"], "Random seed must be a whole number, such as 16"),
        ("colour=red", ["query", "colour"], "colour is not something this lab knows; remove it"),
    ],
)
def test_a_refused_input_is_422_at_its_field_in_the_controls_words(client, query, loc, msg):
    r = client.get(f"/api/connections/flash?{query}")
    assert r.status_code == 422
    assert r.json() == {"detail": [{"loc": loc, "field": loc[1], "msg": msg, "type": "value_error"}]}


def test_an_unknown_lab_is_404(client):
    r = client.get("/api/connections/nope")
    assert r.status_code == 404
    assert r.json()["detail"][0]["loc"] == ["path", "name"]
    assert client.get("/connections/nope").status_code == 404


def test_study_records_a_check_on_the_inputs(client):
    body = {"inputs": {"n": 16, "window": 4}, "action": {"kind": "submit", "challenge": "window-four"}}
    r = client.post("/api/connections/flash/study", json=body)
    assert r.status_code == 200
    out = r.json()
    assert out["study"]["challenges"]["window-four"]["attempts"][0]["feedback"]["met"] is True
    assert out["history"][0]["checked"]["text"] == "✓ Checked: goal met" and out["answer"] is None


@pytest.mark.parametrize(
    "body,loc,msg",
    [
        (
            {"inputs": {"k": 99}, "action": {"kind": "open", "challenge": "keep-90"}},
            ["body", "inputs", "k"],
            "Top k must be at most 8, the experts E",
        ),
        (
            {"action": {"kind": "jump"}},
            ["body", "action", "kind"],
            "Action · kind must be one of open, submit, clear, retry, goto, help",
        ),
        ({"action": {"kind": "open", "challenge": "nope"}}, ["body", "action", "challenge"], None),
        (
            {"study": {"version": 3}, "action": {"kind": "open", "challenge": "keep-90"}},
            ["body", "study"],
            None,
        ),
    ],
)
def test_a_refused_study_is_422_at_its_field(client, body, loc, msg):
    r = client.post("/api/connections/moe/study", json=body)
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["loc"] == loc
    if msg is not None:
        assert item["msg"] == msg


def test_a_body_with_an_unknown_field_is_422(client):
    r = client.post("/api/connections/moe/study", json={"action": {"kind": "open"}, "extra": 1})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "extra"]


def test_exports_are_the_labs_documents(client):
    study = {"version": 1}
    r = client.post("/api/connections/ssm/export/json", json={"inputs": {"n": 5}, "study": study})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.headers["content-disposition"] == 'attachment; filename="attnlab-ssm.json"'
    assert r.text == to_json("ssm", {"n": 5}, study)
    r = client.post("/api/connections/ssm/export/markdown", json={"inputs": {"n": 5}})
    assert r.headers["content-disposition"] == 'attachment; filename="attnlab-ssm.md"'
    assert r.text == to_markdown("ssm", {"n": 5}, study)
    r = client.post("/api/connections/ssm/export/markdown", json={"inputs": {"n": 99}})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "inputs", "n"]


@pytest.mark.parametrize("name", registry.NAMES)
def test_each_lab_has_its_page_with_versioned_assets_and_the_labs_words(client, name):
    r = client.get(f"/connections/{name}?n=8")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    assert f'<h1 id="cx-title">{registry.entry(name).title}</h1>' in page
    assert "<!--" not in page.split("</head>", 1)[1]  # every fill marker is filled
    assert re.search(r'<script type="module" src="/static/v/[0-9a-f]{16}/js/connections/main.js">', page)
    preloads = set(re.findall(r'rel="modulepreload" href="/static/v/[0-9a-f]{16}/js/([\w./-]+)"', page))
    assert {"connections/main.js", "connections/state.js", "shared/http.js"} <= preloads
    assert not {p for p in preloads if p.startswith(("explorer/", "notebook/", "realmodel/", "block/"))}
    words = json.loads(
        re.search(r'<script type="application/json" id="attnlab-words">(.*?)</script>', page).group(1)
    )
    assert words["connections"]["back_href"] == "/#connections"


# --- the labs that run SmolLM2 (speculate, serving): their runs are jobs of the model worker ----------


@pytest.mark.parametrize(
    "query,loc,msg",
    [
        ("speculate?tokens=99", ["query", "tokens"], "New tokens must be at most 64"),
        ("speculate?draft=0", ["query", "draft"], "Draft length k must be at least 1"),
        ("speculate?prompt=%20", ["query", "prompt"], "Your prompt is empty: type a sentence to look at"),
        (
            "serving?prompts=a",
            ["query", "prompts"],
            "Prompt list has 1 line; write at least 2, one on each line",
        ),
        ("serving?batch=9", ["query", "batch"], "Batch size must be at most 8"),
    ],
)
def test_a_model_labs_refused_input_is_422_before_any_run(client, query, loc, msg):
    r = client.get(f"/api/connections/{query}")
    assert r.status_code == 422
    assert r.json() == {"detail": [{"loc": loc, "field": loc[1], "msg": msg, "type": "value_error"}]}


@pytest.mark.models
def test_a_prompt_over_the_token_cap_is_refused_at_the_prompt(client):
    r = client.get("/api/connections/speculate", params={"prompt": "a " * 290})
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["loc"] == ["query", "prompt"] and item["msg"].startswith("Your prompt ")
    assert "291 tokens" in item["msg"] and "at most 256 tokens" in item["msg"]


RUNS = {  # a short run of each, and a challenge checked on its numbers
    "speculate": ({"tokens": 6}, "passes", lambda run: [run["passes"]["speculative"]]),
    "serving": ({"prompts": "Hi\nThe capital of France is", "tokens": 4}, "throughput",
                lambda run: [round(run["ratio"], 1)]),
}  # fmt: skip


@pytest.mark.models
@pytest.mark.parametrize("name", RUNS)
def test_a_model_lab_waits_for_its_run_then_draws_it_and_checks_on_it(client, name):
    query, challenge, response = RUNS[name]
    deadline = time.monotonic() + 300
    while (answer := client.get(f"/api/connections/{name}", params=query).json())["live"]["status"] != "done":
        assert answer["live"]["poll_ms"] == 700 and answer["data"]["run"] is None
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert answer["live"] == {"status": "done", "poll_ms": None}
    run = answer["data"]["run"]
    assert run["identical"] if name == "speculate" else run["same"] == [True, True]
    body = {"inputs": query, "action": {"kind": "submit", "challenge": challenge, "response": response(run)}}
    study = client.post(f"/api/connections/{name}/study", json=body).json()
    assert study["study"]["challenges"][challenge]["attempts"][0]["feedback"]["met"] is True
    exported = json.loads(client.post(f"/api/connections/{name}/export/json", json={"inputs": query}).text)
    assert exported["data"]["run"] == run  # the same kept run, every number


# --- the model parts of kv, dilution, rope, embeddings and sampling ------------------------------------


@pytest.mark.parametrize(
    "query,loc,msg",
    [
        ("sampling?text=" + "x" * 401, ["query", "text"],
         "Your text has 401 characters; it takes at most 400"),
        ("embeddings?matches=a%0Ab%0Ac", ["query", "matches"],
         "Their matches has 3 lines; it needs 4, one for each line of sentences"),
        ("embeddings?sentences=one", ["query", "sentences"],
         "Sentences has 1 line; write at least 2, one on each line"),
        ("kv?new=17", ["query", "new"], "New tokens must be at most 16"),
        ("kv?prompt=%20", ["query", "prompt"], "Prompt is empty: type a sentence to look at"),
        ("dilution?word=kiwi", ["query", "word"],
         "Needle word must be one of mango, violet, anchor, pepper, rocket"),
    ],
)  # fmt: skip
def test_a_model_parts_refused_input_is_422_at_its_control(client, query, loc, msg):
    r = client.get(f"/api/connections/{query}")
    assert r.status_code == 422
    assert r.json() == {"detail": [{"loc": loc, "field": loc[1], "msg": msg, "type": "value_error"}]}


@pytest.mark.parametrize("name", ["kv", "dilution", "rope", "embeddings", "sampling"])
def test_the_model_parts_are_off_until_asked(client, name):
    answer = client.get(f"/api/connections/{name}").json()
    assert answer["live"] == {"status": "off" if name != "kv" else "done", "poll_ms": None}


@pytest.mark.models
def test_a_text_over_the_token_cap_is_refused_at_the_text(client):
    r = client.get("/api/connections/sampling", params={"source": "smollm2", "text": "😀" * 300})
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["loc"] == ["query", "text"] and item["msg"].startswith("Your text is ")
    assert "tokens long for SmolLM2-135M-Instruct" in item["msg"]


MODEL_PARTS = {  # a model part's inputs, a challenge checked on its numbers and the answer it takes
    "sampling": ({"source": "smollm2", "k": 5, "temperature": 0.3}, "top-90", None),
    "embeddings": ({"source": "minilm", "tau": 0.05}, "loss-below", None),
    "kv": ({"live": "on", "new": 3}, "mha-ratio", "3"),
    "rope": ({"own": "on"}, "slowest", "440k"),
}


@pytest.mark.models
@pytest.mark.parametrize("name", MODEL_PARTS)
def test_a_model_part_is_the_labs_own_answer_once_its_numbers_are_in(client, name):
    query, challenge, response = MODEL_PARTS[name]
    deadline = time.monotonic() + 300
    while (answer := client.get(f"/api/connections/{name}", params=query).json())["live"]["status"] != "done":
        assert answer["live"] == {"status": "waiting", "poll_ms": 700}
        assert time.monotonic() < deadline
        time.sleep(0.2)
    measured = routes._measured(name, query, "inputs")
    assert answer == json.loads(json.dumps(lab_page(name, query, "inputs", measured)))
    assert set(measured) <= {"shapes", "kv", "rope", "embeddings", "logits"} and all(
        m.status == "done" for m in measured.values()
    )
    body = {"inputs": query, "action": {"kind": "submit", "challenge": challenge, "response": response}}
    study = client.post(f"/api/connections/{name}/study", json=body).json()
    checked = study["study"]["challenges"][challenge]["attempts"][0]["feedback"]
    assert checked == registry.lab(name).check(challenge, answer["inputs"], response, measured)
    exported = json.loads(client.post(f"/api/connections/{name}/export/json", json={"inputs": query}).text)
    assert exported["data"] == answer["data"]  # the same model numbers, every one

