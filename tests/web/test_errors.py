"""Errors in the page's words: ``loc`` machine-readable, ``msg`` the sentence shown next to the control.

The sentence names the field as the page labels its control ("Source B · value y",
"Top-k"), never as a request path ("values[1][1]", "query.top_k", "x[0][0]").
A hypothesis test sends random bad requests to every POST route and checks each
answer's shape and words.
"""

from __future__ import annotations

import copy
import json

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.lab.fields import INDEX_PATH, SNAKE, plain
from attnlab.lab.limits import MAX_MAGNITUDE, MAX_NEW_TOKENS, TOP_K_MAX, page_limits
from attnlab.models.jobs.kinds import TraceJob
from attnlab.models.jobs.line import JOBS
from attnlab.models.jobs.texts import too_many_tokens
from attnlab.web.app import create_app

WORKED = {
    "q": [2, 1],
    "keys": [[-1, 2], [1, 0], [0, 1]],
    "values": [[2, 0], [0, 2], [-1, -1]],
    "labels": ["A", "B", "C"],
}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def _only(r, status=422) -> dict:
    assert r.status_code == status, r.text
    detail = r.json()["detail"]
    assert len(detail) == 1, detail
    return detail[0]


# --- exact worked cases: the words of the control the learner sees ---------------------------


def test_a_value_out_of_range_reads_as_the_page_labels_the_source(client):
    body = copy.deepcopy(WORKED)
    body["values"][1][1] = 2_000_000
    assert _only(client.post("/api/trace", json=body)) == {
        "loc": ["body", "values", 1, 1],
        "field": "values[1][1]",
        "msg": "Source B · value y must be at most 1,000,000",
        "type": "less_than_equal",
    }


def test_the_learners_own_source_names_are_used(client):
    body = copy.deepcopy(WORKED) | {"labels": ["cat", "dog", "emu"]}
    body["keys"][2][0] = -3e6
    d = _only(client.post("/api/trace", json=body))
    assert (d["loc"], d["msg"]) == (["body", "keys", 2, 0], "Source emu · key x must be at least -1,000,000")


def test_an_edit_with_negative_indices_is_named_as_it_was_sent(client):
    """Found by the schema fuzz: an edit's source -2 (and coordinate -1) on a held example of one
    labelled source raised IndexError naming the field, a 500; it is a 422 naming them as sent."""
    body = {"edits": [{"coord": -1, "kind": "mask", "source": -2, "x": False}],
            "held": {"keys": ["k"], "labels": ["0"], "mask": [[False]], "queries": [[0.0, 0.0]],
                     "values": [[0.0, 0.0]]}}  # fmt: skip
    r = client.post("/api/state", json=body)
    assert r.status_code == 422, r.text
    msgs = [d["msg"] for d in r.json()["detail"]]
    assert any(m.startswith("Source (index -2) · value coordinate (index -1) ") for m in msgs), msgs


def test_an_engine_error_names_both_fields_in_the_pages_words(client):
    body = copy.deepcopy(WORKED) | {"labels": ["A", "B", "A"]}
    d = _only(client.post("/api/trace", json=body))
    assert (d["loc"], d["field"], d["msg"]) == (
        ["body", "labels", 2], "labels[2]", "Source 3 · name repeats Source 1 · name ('A')"
    )
    body = copy.deepcopy(WORKED)
    body["keys"][2] = [0, 1, 5]
    d = _only(client.post("/api/trace", json=body))
    assert (d["loc"], d["msg"]) == (
        ["body", "keys", 2], "Source C · key has 3 coordinates; Source A · key has 2"
    )


def test_the_query_is_named_as_the_explorer_labels_it(client):
    body = copy.deepcopy(WORKED) | {"q": [2, float("nan")]}
    r = client.post("/api/trace", content=_json_text(body), headers={"content-type": "application/json"})
    d = _only(r)
    assert d["loc"] == ["body", "q", 1]
    assert d["msg"].startswith("Query q · y ")
    assert plain(d["msg"])


def test_the_block_names_a_cell_by_matrix_row_and_column(client):
    x = client.get("/api/block/example").json()["x"]
    x[0][0] = 5000.0
    d = _only(client.post("/api/block", json={"x": x}))
    assert (d["loc"], d["field"]) == (["body", "x", 0, 0], "x[0][0]")
    assert d["msg"] == "X (inputs) · row 1, column 1 must be at most 1,000"


def test_the_real_model_top_k_is_named_as_its_control(client):
    r = client.get("/api/models/jobs/nojob/next/0", params={"top_k": -1})
    d = _only(r)
    assert (d["loc"], d["field"], d["msg"]) == (["query", "top_k"], "query.top_k", "Top-k must be at least 0")


def test_a_path_parameter_is_named_once(client):
    d = _only(client.post("/api/models/gpt9/tokens", json={"text": "hi"}))
    assert (d["loc"], d["field"]) == (["path", "model"], "path.model")
    assert d["msg"] == "Model 'gpt9' is unknown; use one of minilm, smollm2"  # never "Model model 'gpt9' …"


def test_the_limits_are_served_once(client):
    r = client.get("/api/limits")
    assert r.status_code == 200
    assert r.json() == page_limits()
    assert r.json()["max_magnitude"] == MAX_MAGNITUDE == 1e6
    assert (r.json()["min_sources"], r.json()["max_sources"]) == (1, 8)



def test_the_next_views_top_k_has_the_one_declared_limit(client):
    assert page_limits()["top_k_max"] == TOP_K_MAX == 49_152  # what generate and the page take
    r = client.get("/api/models/jobs/nojob/next/0", params={"top_k": TOP_K_MAX + 1})
    d = _only(r)
    assert (d["loc"], d["msg"]) == (["query", "top_k"], "Top-k must be at most 49,152")


def test_the_page_is_told_its_limits_in_words_with_their_numbers(client):
    words = client.get("/api/limits").json()["words"]
    assert words["block_edit"] == {
        "text": "Type a number and press Enter. Numbers past ±1,000 or that are not numbers are refused "
        "next to their field; the last good walk stays.",
        "claims": {"max_magnitude": 1000.0},
    }
    assert words["new_tokens"] == {
        "text": "New tokens (1 to 64)", "claims": {"min": 1, "max": MAX_NEW_TOKENS}
    }


# --- the real model's kept traces: refused in the page's words, located at the job ----------


@pytest.mark.parametrize("url", ["/api/models/jobs/nojob", "/api/models/jobs/nojob/model-view",
                                 "/api/models/jobs/nojob/next/0", "/api/models/jobs/nojob/layers/0"])
def test_a_trace_no_longer_kept_says_so(client, url):
    assert _only(client.get(url), 404) == {
        "loc": ["path", "job_id"],
        "field": "job_id",
        "msg": "This trace is no longer kept: trace the text again",
        "type": "not_found",
    }


def test_a_continuation_no_longer_kept_says_so(client):
    d = _only(client.get("/api/models/generate/nojob"), 404)
    assert (d["loc"], d["msg"]) == (
        ["path", "job_id"], "This continuation is no longer kept: continue the text again"
    )


def _kept(monkeypatch, job: TraceJob) -> None:
    monkeypatch.setattr(JOBS, "trace_job", lambda job_id: job if job_id == job.id else None)


@pytest.mark.parametrize(
    ("status", "msg"),
    [
        ("queued", "This trace is not finished yet: wait until it is done"),
        ("running", "This trace is not finished yet: wait until it is done"),
        ("cancelled", "This trace was cancelled: trace the text again"),
    ],
)
def test_a_trace_not_finished_says_so(client, monkeypatch, status, msg):
    _kept(monkeypatch, TraceJob(id="jw1", model="smollm2", text="hi", status=status))
    d = _only(client.get("/api/models/jobs/jw1/model-view"), 409)
    assert (d["loc"], d["field"], d["msg"], d["type"]) == (["path", "job_id"], "job_id", msg, "not_ready")


def test_a_failed_trace_says_what_to_fix_in_the_pages_words(client, monkeypatch):
    job = TraceJob(id="jw2", model="smollm2", text="word " * 300)
    error = too_many_tokens("text", "smollm2", 300, 256)
    job.apply("error", error.loc, str(error))  # as the worker reports it
    _kept(monkeypatch, job)
    words = (
        "Text is 300 tokens long for SmolLM2-135M-Instruct; the Real model view takes at most 256 "
        "tokens. Shorten it by 44."
    )
    status = client.get("/api/models/jobs/jw2").json()
    assert (status["message"], status["stage_display"], status["field"]) == (words, words, "text")
    d = _only(client.get("/api/models/jobs/jw2/next/0"), 409)
    assert (d["loc"], d["msg"]) == (["path", "job_id"], words)


def test_a_model_failure_is_one_sentence(client, monkeypatch):
    job = TraceJob(id="jw3", model="minilm", text="hi")
    job.apply("error", None, "the model failed: RuntimeError: out of paper")
    _kept(monkeypatch, job)
    said = client.get("/api/models/jobs/jw3").json()["message"]
    assert said == "The model failed: RuntimeError: out of paper"


# --- integers of any length: the number is too long, said at its field ----------------------


def _with_number(route: str, client) -> tuple[str, list, str]:
    """A valid body for ``route`` as JSON text with NUMBER where one number goes, its loc and page name."""
    if route == "/api/trace":
        return json.dumps(WORKED).replace("[2, 1]", "[NUMBER, 1]", 1), ["body", "q", 0], "Query q · x"
    if route == "/api/block":
        block = client.get("/api/block/example").json()
        body = {k: block[k] for k in ("x", "weights", "norm", "positions", "heads_on")}
        body["x"][0][0] = 12345.5
        text = json.dumps(body).replace("12345.5", "NUMBER", 1)
        return text, ["body", "x", 0, 0], "X (inputs) · row 1, column 1"
    return '{"model": "smollm2", "text": NUMBER}', ["body", "text"], "Text"


@pytest.mark.parametrize("route", ["/api/trace", "/api/block", "/api/models/jobs"])
@pytest.mark.parametrize("digits", [400, 4_300, 4_301, 5_000, 100_000])
def test_an_integer_of_any_length_is_said_to_be_too_long(client, route, digits):
    text, loc, name = _with_number(route, client)
    r = client.post(route, content=text.replace("NUMBER", "-" + "9" * digits),
                    headers={"content-type": "application/json"})  # fmt: skip
    assert _only(r) == {
        "loc": loc,
        "field": loc_field(loc),
        "msg": f"{name} is a number too long to read ({digits:,} digits)",
        "type": "number_too_long",
    }


def loc_field(loc: list) -> str:
    return {"q": "q[0]", "x": "x[0][0]", "text": "text"}[loc[1]]


def test_a_body_that_is_not_json_still_says_so(client):
    words = "The request is not valid JSON, so the lab could not read it. Nothing changed."
    # cut short, not UTF-8, and a long integer in a body cut short
    for content in (b'{"q": [1, 2', b'{"labels": ["\xff"]}', b'{"q": [' + b"9" * 5000):
        d = _only(client.post("/api/trace", content=content, headers={"content-type": "application/json"}))
        assert (d["loc"], d["msg"]) == (["body"], words)


# --- invariants over random bad requests to every POST route -------------------------------

BAD_NUMBERS = st.sampled_from(
    [float("nan"), float("inf"), -float("inf"), 1e300, -1e300, 2e6, "1", None, True, [], {}]
)


def _paths(node, at=()):
    """Every location in a JSON body, for a random one to spoil."""
    yield at
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*at, i))


def _spoil(body, path, value):
    body = copy.deepcopy(body)
    if not path:
        return value
    node = body
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return body


@pytest.fixture(scope="module")
def bodies(client):
    """A valid body for each POST route (from the app's own examples); a real model's never starts a job."""
    held = client.get("/api/example").json()["sequence"]["example"]
    block = client.get("/api/block/example").json()
    block_req = {k: block[k] for k in ("x", "weights", "norm", "positions", "heads_on")}
    challenge = client.get("/api/notebook/practice").json()["challenges"][0]["id"]
    block_challenge = client.get("/api/block/practice").json()["challenges"][0]["id"]
    return {
        "/api/trace": WORKED,
        "/api/state": {"held": held, "edits": [{"kind": "query", "q": [1, 2]}]},
        "/api/notebook/study": {
            "held": held, "study": {"version": 1}, "action": {"kind": "open", "challenge": challenge}
        },
        "/api/notebook/export/json": {"held": held},
        "/api/notebook/import": {"text": "{}"},
        "/api/block": block_req,
        "/api/block/study": {"block": block_req, "action": {"kind": "submit", "challenge": block_challenge}},
        "/api/models/jobs": {"model": "no-such-model", "text": "The cat sat."},
        "/api/models/generate": {"model": "no-such-model", "prompt": "Once upon a time", "top_k": 5},
    }


def _json_text(body) -> str:
    return json.dumps(body, allow_nan=True)  # NaN and Infinity as a careless client writes them


def _check_answer(r):
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    detail = r.json()["detail"]
    assert isinstance(detail, list) and detail
    for d in detail:
        assert isinstance(d["loc"], list) and d["loc"][0] in ("body", "query", "path"), d
        assert all(isinstance(p, (str, int)) for p in d["loc"]), d
        assert isinstance(d["field"], str)
        msg = d["msg"]
        assert msg and not msg.startswith(d["field"] + " "), d  # named as the page names it, not by path
        assert not INDEX_PATH.search(msg), d  # no values[1][1]
        assert not SNAKE.search(msg), d  # no top_k, norm_1
        assert "body." not in msg and "query." not in msg, d


ROUTES = [
    "/api/trace",
    "/api/state",
    "/api/notebook/study",
    "/api/notebook/export/json",
    "/api/notebook/import",
    "/api/block",
    "/api/block/study",
    "/api/models/jobs",
    "/api/models/generate",
]


@pytest.mark.parametrize("route", ROUTES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_bad_request_gets_a_4xx_in_the_pages_words(client, bodies, route, data):
    good = bodies[route]
    paths = [p for p in _paths(good) if p]
    kind = data.draw(st.sampled_from(["number", "shape", "empty", "extra"]))
    if kind == "number":
        path = data.draw(st.sampled_from(paths))
        body = _spoil(good, path, data.draw(BAD_NUMBERS))
    elif kind == "shape":
        path = data.draw(st.sampled_from(paths))
        body = _spoil(good, path, data.draw(st.sampled_from([[], [[1, 2, 3]], [1] * 9, "x", {"a": 1}])))
    elif kind == "empty":
        body = data.draw(st.sampled_from([{}, [], None, "", 0]))
    else:
        body = dict(good, **{"not_a_field": 1}) if isinstance(good, dict) else good
    if body == good:
        return
    r = client.post(route, content=_json_text(body), headers={"content-type": "application/json"})
    if r.status_code < 400:
        return  # the spoil landed somewhere harmless (a label that is still a label): nothing to check
    _check_answer(r)


# --- integers in paths and queries; a number's examples inside the field's range --------------


@pytest.mark.parametrize(
    ("url", "loc", "name"),
    [
        ("/api/models/jobs/abc/layers/" + "9" * 5_000, ["path", "layer"], "Layer"),
        ("/api/models/jobs/abc/layers/1?head=" + "9" * 5_000, ["query", "head"], "Head"),
        ("/api/models/probe?seed=-" + "9" * 5_000, ["query", "seed"], "Seed"),
    ],
)
def test_a_path_or_query_integer_too_long_says_so(client, url, loc, name):
    # Before: "Layer is not in a form the lab can use" (pydantic's int_parsing_size).
    assert _only(client.get(url)) == {
        "loc": loc,
        "field": ".".join(loc),
        "msg": f"{name} is a number too long to read (5,000 digits)",
        "type": "number_too_long",
    }


GEN = {"model": "no-such-model", "prompt": "hi"}  # refused at model once its numbers pass: no job starts
NOT_NUMBERS = [  # (url with X where the value goes, the JSON body with X, loc, the sentence)
    ("/api/models/jobs/abc/layers/X", None, ["path", "layer"],
     "Layer must be a whole number, such as 0 or 2"),
    ("/api/models/jobs/abc/layers/1?head=X", None, ["query", "head"],
     "Head must be a whole number, such as 0 or 2"),
    ("/api/models/probe?seed=X", None, ["query", "seed"], "Seed must be a whole number, such as 0 or 2"),
    ("/api/models/generate", {**GEN, "max_new_tokens": "X"}, ["body", "max_new_tokens"],
     "New tokens must be a whole number, such as 1 or 2"),
    ("/api/models/generate", {**GEN, "seed": "X"}, ["body", "seed"],
     "Seed must be a whole number, such as 0 or 2"),
    ("/api/models/generate", {**GEN, "temperature": "X"}, ["body", "temperature"],
     "Temperature must be a number, such as 0.5 or 2"),
    ("/api/models/generate", {**GEN, "top_p": "X"}, ["body", "top_p"],
     "Top-p must be a number, such as 0.5 or 1"),
    ("/api/trace", {**WORKED, "q": ["X", 1]}, ["body", "q", 0],
     "Query q · x must be a number, such as -0.5 or 2"),
]


def _with(client, url: str, body: dict | None, value: str):
    """GET ``url`` or POST ``body`` with ``value`` (JSON text) where X stands."""
    if body is None:
        return client.get(url.replace("X", value))
    text = json.dumps(body).replace('"X"', value)
    return client.post(url, content=text, headers={"content-type": "application/json"})


@pytest.mark.parametrize(("url", "body", "loc", "msg"), NOT_NUMBERS)
def test_a_number_that_is_not_one_gets_examples_the_field_takes(client, url, body, loc, msg):
    # Before: "must be a whole number, such as 2 or -1" for a layer, a head and a seed, none of which
    # can be -1.
    not_a_number = "1.5" if "whole" in msg else "true"
    r = _with(client, url, body, not_a_number if body is not None else "x")
    assert r.status_code == 422
    assert [d["msg"] for d in r.json()["detail"] if d["loc"] == loc] == [msg]
    for example in msg.rsplit("such as ", 1)[1].split(" or "):  # each example is taken at that field
        r = _with(client, url, body, example)
        refused = [e["loc"] for e in r.json()["detail"]] if r.status_code == 422 else []
        assert loc not in refused, (example, r.text[:300])
