"""The notebook API and the held example's rules through the one state (``POST /api/state``):
exact JSON from the engine, the page's rules, 422 naming the field."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from attnlab.engine.errors import FieldError
from attnlab.lab.explorer.sequence import STARTING, apply_edit, held_from_dict
from attnlab.lab.explorer.view import sequence_view
from attnlab.lab.notebook import history as hist
from attnlab.web.app import create_app
from attnlab.web.notebook import routes as api_notebook


@pytest.fixture(scope="module")
def client():
    app = create_app()
    if not any(getattr(r, "path", "").startswith("/api/notebook") for r in app.routes):
        app.include_router(api_notebook.router)
    with TestClient(app) as c:
        yield c


HELD = STARTING.to_dict()


class Sequence:
    """A ``POST /api/state`` answer read as its held view (``sequence``), as the page reads it."""

    def __init__(self, response):
        self.status_code = response.status_code
        self._r = response

    def json(self):
        body = self._r.json()
        return body["sequence"] if self.status_code == 200 else body


def edit(client, held, **e):
    return Sequence(client.post("/api/state", json={"held": held, "edits": [e]}))


def test_example_is_the_starting_sequence(client):
    r = client.get("/api/example")
    assert r.status_code == 200
    body = r.json()["sequence"]
    assert body == json.loads(json.dumps(sequence_view(STARTING)))
    assert body["explorer"]["label"]["text"] == "Row 0 (A) · unmasked projection"
    assert body["outputs"][0] == [2.0, 0.0]
    assert body["explorer"]["trace"]["output"] == [-0.00393691965450399, 0.8679552806894639]


def test_query_edit_from_a_masked_row_returns_to_row0(client):
    held = {**HELD, "row": 1, "masked": True}
    r = edit(client, held, kind="query", q=[0, 3])
    assert r.status_code == 200
    body = r.json()
    assert body["explorer"]["label"]["text"] == "Row 0 (A) · unmasked projection"
    assert body["example"]["queries"] == [[0.0, 3.0], [1.0, 2.0], [-1.0, 1.0]]
    assert body["example"]["mask"] == HELD["mask"]


def test_select_row_shows_the_masked_row(client):
    body = edit(client, HELD, kind="select", row=1).json()
    assert body["explorer"]["label"]["text"] == "Row 1 (B) · masked row"
    assert body["explorer"]["trace"]["allowed"] == [True, True, False]
    assert body["explorer"]["trace"]["output"] == body["outputs"][1]


def test_mask_refusal_is_a_clear_422_and_nothing_changes(client):
    r = edit(client, HELD, kind="mask", row=0, source=0, allowed=False)
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["type"] == "mask_refused"
    assert item["field"] == "edits[0].allowed"
    assert "Blocking A would leave row 0 (A) with no allowed source" in item["msg"]


def test_reset_restores_query_and_first_value_x_only(client):
    held = {**HELD, "queries": [[4, 4], [0, 0], [1, 1]], "values": [[7, 7], [1, 1], [2, 2]]}
    body = edit(client, held, kind="reset").json()
    assert body["example"]["queries"] == [[2.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    assert body["example"]["values"] == [[2.0, 7.0], [1.0, 1.0], [2.0, 2.0]]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"held": {**HELD, "queries": [[1, 2], [3, 4]]}}, "held.queries"),
        ({"held": {**HELD, "values": [[1, 2], [3, "4"]], }}, "held.values[1][1]"),
        ({"held": {**HELD, "labels": ["A", "A", "C"]}}, "held.labels[1]"),
        ({"held": {**HELD, "mask": [[False] * 3, [True] * 3, [True] * 3]}}, "held.mask[0]"),
        ({"held": {**HELD, "row": 5}}, "held.row"),
        ({"held": HELD, "extra": 1}, "extra"),
    ],
)
def test_bad_held_examples_get_422_naming_the_field(client, body, field):
    r = client.post("/api/state", json=body)
    assert r.status_code == 422
    assert field in [d["field"] for d in r.json()["detail"]]


def test_lab_errors_are_422_at_their_location(client):
    # the held example's errors are the lab's, relocated under "held"
    r = client.post("/api/state", json={"held": {**HELD, "labels": ["A", "B", "A"]}})
    assert r.json()["detail"] == [{"loc": ["body", "held", "labels", 2], "field": "held.labels[2]",
                                   "msg": "Source 3 · name repeats Source 1 · name ('A')",
                                   "type": "value_error"}]
    empty_row = {**HELD, "mask": [[False] * 3] + HELD["mask"][1:]}
    r = client.post("/api/state", json={"held": empty_row})
    (item,) = r.json()["detail"]
    assert (item["loc"], item["type"]) == (["body", "held", "mask", 0], "value_error")
    # a study action's response, and a response stored in the study
    r = client.post("/api/notebook/study", json={
        "held": HELD, "study": {"version": 1},
        "action": {"kind": "submit", "challenge": "zero-q", "response": [1, 2]}})
    (item,) = r.json()["detail"]
    assert (item["loc"], item["msg"]) == (["body", "action", "response"],
                                          "Action · Your answer must be a list of 3 numbers")
    study = {"version": 1, "challenges": {"zero-q": {"current": 0, "attempts": [{"response": [1, 2]}]}}}
    clear = {"kind": "clear", "challenge": "zero-q"}
    r = client.post("/api/notebook/study", json={"held": HELD, "study": study, "action": clear})
    (item,) = r.json()["detail"]
    assert item["loc"] == ["body", "study", "challenges", "zero-q", "attempts", 0, "response"]


def test_an_edit_of_q0_is_located_the_same_by_the_api_and_the_lab(client):
    r = edit(client, HELD, kind="query", q=[2e6, 0])  # the schema refuses it first
    assert r.status_code == 422
    assert [d["loc"] for d in r.json()["detail"]] == [["body", "edits", 0, "q", 0]]
    with pytest.raises(FieldError) as refused:  # the lab's own check, for callers without the schema
        apply_edit(STARTING, {"kind": "query", "q": [2e6, 0]})
    assert refused.value.loc == ("edit", "q", 0)  # the route says which of its edits: edits[0]


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("[" * 5000, "The file was not imported: it nests 5000 levels deep; an export nests at most 32"),
        ('{"a": ' * 2000 + "1" + "}" * 2000, "The file was not imported: it nests 2000 levels deep"),
        ("{", "The file was not imported: it is not JSON"),
        ('{"format": ' + "9" * 5000 + "}", "The file was not imported: it holds a number too long to read"),
    ],
)
def test_import_of_unreadable_text_is_422_at_text(client, text, msg):
    r = client.post("/api/notebook/import", json={"text": text})
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert (item["loc"], item["type"]) == (["body", "text"], "import_refused")
    assert item["msg"].startswith(msg)


def test_stepper_follows_the_explorer_row(client):
    body = client.post("/api/state", json={"held": {**HELD, "row": 2, "masked": True}}).json()["stepper"]
    assert [s["title"] for s in body["steps"]][0] == "Step 1 of 4 · Vectors"
    share = body["steps"][2]["table"]["rows"]
    assert [r[2] for r in share] == ["0.768", "0.045", "0.187"]


def test_playback_and_practice_and_content(client):
    p = client.get("/api/notebook/playback").json()
    assert p["duration"] == 31.0 and len(p["frames"]) == 311
    pr = client.get("/api/notebook/practice").json()
    assert len(pr["challenges"]) >= 8
    c = client.get("/api/notebook/content").json()
    assert sum(len(g["items"]) for g in c["connections"]["groups"]) == 17
    assert c["math"]["blocks"][1]["html"].startswith("<math alttext=")


def test_study_actions_and_history(client):
    study = hist.new_study()
    steps = [
        {"kind": "help", "help": "playback"},
        {"kind": "submit", "challenge": "row0-masked", "response": [2, 0]},
        {"kind": "help", "help": "hint", "detail": 1, "challenge": "row0-masked"},
        {"kind": "retry", "challenge": "row0-masked"},
        {"kind": "help", "help": "python"},
    ]
    for action in steps:
        r = client.post("/api/notebook/study", json={"held": HELD, "study": study,
                                                     "action": action})
        assert r.status_code == 200, r.text
        study = r.json()["study"]
    first, second = study["challenges"]["row0-masked"]["attempts"]
    assert first["feedback"]["met"] is True
    assert first["feedback"]["words"]["text"].startswith("Row 0's masked output is [2, 0]")
    assert first["feedback"]["words"]["claims"]["output"] == [2.0, 0.0]
    assert first["checks"] == [{"response": [2, 0], "met": True}]
    assert r.json()["history"] == [
        {"heading": "Before any attempt", "challenge": None, "attempt": None, "checks": [],
         "help": ["Watched the guided playback"]},
        {"heading": "Predict row 0's masked output · attempt 1", "challenge": "row0-masked",
         "attempt": 1, "checks": [{"label": "Check 1 · [2, 0] · right", "met": True}],
         "help": ["Opened hint 1 of 3"],
         "panel": {"attempt": {"text": "Attempt 1 of 2", "claims": {"attempt": 1, "attempts": 2}},
                   "hint": {"text": "Show hint 2 of 3", "claims": {"hint": 2, "hints": 3}}}},
        {"heading": "Predict row 0's masked output · attempt 2", "challenge": "row0-masked",
         "attempt": 2, "checks": [],
         "help": ["Opened “Read the same calculation in Python”"],
         "panel": {"attempt": {"text": "Attempt 2 of 2", "claims": {"attempt": 2, "attempts": 2}},
                   "hint": {"text": "Show hint 1 of 3", "claims": {"hint": 1, "hints": 3}}}},
    ]
    assert second == {"response": None, "feedback": None, "checks": [], "answer": None,
                      "help": [{"kind": "python", "detail": None}]}


@pytest.mark.parametrize(
    ("study", "action", "field"),
    [
        ({"version": 1}, {"kind": "help", "help": "cheat"}, "action.help"),
        ({"version": 1}, {"kind": "submit", "challenge": "zero-q", "response": [1, 2]},
         "action.response"),
        ({"version": 1, "challenges": {"zero-q": {"current": 3, "attempts": [{}]}}},
         {"kind": "open", "challenge": "zero-q"}, "study.challenges.zero"),
        ({"version": 2}, {"kind": "open", "challenge": "zero-q"}, "study.version"),
    ],
)
def test_bad_study_requests_get_422(client, study, action, field):
    r = client.post("/api/notebook/study", json={"held": HELD, "study": study, "action": action})
    assert r.status_code == 422
    assert any(d["field"].startswith(field) for d in r.json()["detail"]), r.json()


def test_export_json_and_import_round_trip(client):
    held = {**HELD, "values": [[2, 0], [0, 2], [-1, 3]], "row": 2, "masked": True}
    doc = client.post("/api/notebook/export/json", json={"held": held}).json()
    assert doc["format"] == "attnlab-notebook"
    r = client.post("/api/notebook/import", json={"text": json.dumps(doc)})
    assert r.status_code == 200
    assert r.json()["example"] == held_from_dict(held).to_dict()
    # the page's sentence for it names the file it sent (the lab words it, not the page)
    body = {"text": json.dumps(doc), "name": "mine.json"}
    named = client.post("/api/notebook/import", json=body).json()
    assert named["message"] == {
        "text": "Imported mine.json: the held example now shows its numbers and the study history is "
        "restored.",
        "claims": {"name": "mine.json", "study_restored": True},
    }


def test_import_refuses_bad_files_clearly(client):
    r = client.post("/api/notebook/import", json={"text": '{"format": "something"}'})
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["field"] == "text"
    assert item["msg"] == ("The file was not imported: its format is not an attnlab export "
                           "(format must be 'attnlab-notebook')")


def test_markdown_and_ipynb_downloads(client):
    md = client.post("/api/notebook/export/markdown", json={"held": HELD})
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert "attachment" in md.headers["content-disposition"]
    assert "| 1 (B) | 2.121, 0.707, blocked | 80%, 20%, blocked | [1.609, 0.391] |" in md.text
    nb = client.post("/api/notebook/export/ipynb", json={"held": HELD})
    assert nb.headers["content-type"].startswith("application/x-ipynb+json")
    assert json.loads(nb.text)["nbformat"] == 4
    # The plots are the page's own SVGs (static/js/notebook/export.js): no server renderer.
    assert client.post("/api/notebook/export/svg/value", json={"held": HELD}).status_code == 404


@pytest.mark.parametrize(
    ("path", "media_type"),
    [
        ("/api/notebook/export/markdown", "text/markdown"),
        ("/api/notebook/export/ipynb", "application/x-ipynb+json"),
    ],
)
def test_downloads_match_what_the_openapi_document_says(path, media_type):
    """The schema fuzzing meets a valid request only now and then; check the 200 answers here."""
    import jsonschema

    client = TestClient(create_app())  # the app as served (the module's client adds a router)
    r = client.post(path, json={"held": HELD})
    assert r.status_code == 200 and r.headers["content-type"].startswith(media_type)
    doc = client.get("/api/openapi.json").json()
    route = path.replace("/value", "/{plane}")
    schema = doc["paths"][route]["post"]["responses"]["200"]["content"][media_type]["schema"]
    body = r.json() if media_type.endswith("+json") else r.text  # how clients read "+json"
    jsonschema.validate(body, schema)
