"""The study travels: a JSON export carries the attempts, checks and help; import restores them."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from attnlab.lab.explorer.sequence import STARTING
from attnlab.lab.notebook import export
from attnlab.lab.notebook import history as hist
from attnlab.web.app import create_app
from attnlab.web.notebook import routes as api_notebook

HELD = STARTING.to_dict()


@pytest.fixture(scope="module")
def client():
    app = create_app()
    if not any(getattr(r, "path", "").startswith("/api/notebook") for r in app.routes):
        app.include_router(api_notebook.router)
    with TestClient(app) as c:
        yield c


def study_after(client, *actions):
    study = hist.new_study()
    for action in actions:
        r = client.post("/api/notebook/study", json={"held": HELD, "study": study, "action": action})
        assert r.status_code == 200, r.text
        study = r.json()["study"]
    return study


def test_export_then_import_restores_the_history(client):
    study = study_after(
        client,
        {"kind": "help", "help": "playback"},
        {"kind": "submit", "challenge": "zero-q", "response": [10, 10, 80]},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "zero-q"},
        {"kind": "help", "help": "answer", "challenge": "zero-q"},
        {"kind": "submit", "challenge": "zero-q", "response": [33.3, 33.3, 33.4]},
    )
    doc = client.post("/api/notebook/export/json", json={"held": HELD, "study": study}).json()
    assert doc["study"] == study
    back = client.post("/api/notebook/import", json={"text": json.dumps(doc)})
    assert back.status_code == 200, back.text
    body = back.json()
    assert body["study"] == study
    assert body["history"] == doc["history"]
    group = next(g for g in body["history"] if g["challenge"] == "zero-q")
    assert group["checks"] == [
        {"label": "Check 1 · [10, 10, 80] % · not yet", "met": False},
        {"label": "Check 2 · [33.3, 33.3, 33.4] % · right", "met": True},
    ]
    assert group["help"] == ["Opened hint 1 of 3", "Showed the answer"]
    # the imported study is one the page can go on with
    more = client.post("/api/notebook/study", json={
        "held": body["example"], "study": body["study"], "action": {"kind": "retry", "challenge": "zero-q"},
    })
    assert more.status_code == 200 and len(more.json()["study"]["challenges"]["zero-q"]["attempts"]) == 2


def test_an_export_without_a_study_imports_its_example_only(client):
    doc = export.to_json(STARTING, hist.new_study())
    del doc["study"]
    body = client.post("/api/notebook/import", json={"text": json.dumps(doc)}).json()
    assert "study" not in body and body["example"] == HELD


def test_a_broken_study_in_a_file_is_refused_naming_its_field(client):
    doc = export.to_json(STARTING, hist.new_study())
    doc["study"] = {"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": [
        {"checks": [{"response": [1, 2, 3], "met": "maybe"}]}]}}}
    r = client.post("/api/notebook/import", json={"text": json.dumps(doc)})
    assert r.status_code == 422
    detail = r.json()["detail"][0]
    assert detail["field"] == "text"
    assert detail["msg"] == (  # the page's words (issue 22): the place in the file counted from 1
        "The file was not imported: its study › challenges › zero-q › attempts › 1 › checks › 1 › met "
        "must be true or false"
    )
