"""The lab's JSON API through the real app (FastAPI's TestClient, no mocks).

The worked example's expected numbers are the reference page's own (its
"Inspect precise numbers" panel), written out here, not read back from the
code under test.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from attnlab.engine.single import trace_query
from attnlab.lab.explorer.program import to_python
from attnlab.lab.explorer.sequence import STARTING
from attnlab.web.app import MAX_BODY_BYTES, create_app
from attnlab.web.explorer.messages import answer_trace

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


def post(client, body):
    return client.post("/api/trace", json=body)


def test_worked_example_trace_is_the_reference_pages_numbers(client):
    r = post(client, WORKED)
    assert r.status_code == 200
    assert r.json()["trace"] == {
        "q": [2.0, 1.0],
        "keys": [[-1.0, 2.0], [1.0, 0.0], [0.0, 1.0]],
        "values": [[2.0, 0.0], [0.0, 2.0], [-1.0, -1.0]],
        "labels": ["A", "B", "C"],
        "allowed": [True, True, True],
        "scale": None,
        "d_k": 2,
        "d_v": 2,
        "dots": [0.0, 2.0, 1.0],
        "scores": [0.0, 1.414213562373095, 0.7071067811865475],
        "m": 1.414213562373095,
        "exps": [0.24311673443421425, 1.0, 0.49306869139523984],
        "z": 1.736185425829454,
        "weights": [0.14002924504337802, 0.575975345215362, 0.28399540974126003],
        "carries": [
            [0.28005849008675604, 0.0],
            [0.0, 1.151950690430724],
            [-0.28399540974126003, -0.28399540974126003],
        ],
        "output": [-0.00393691965450399, 0.8679552806894639],
        "blocked": [],
        "underflowed": [],
    }


def test_worked_example_display_strings(client):
    display = post(client, WORKED).json()["display"]
    said = display.pop("labels")  # the number-dependent labels, each {text, claims}
    assert said["score_header"] == {
        "text": "Score q·k / √2",
        "claims": {"scale": {"op": "divide", "by": 2**0.5, "d_k": 2, "shown": "√2"}},
    }
    assert said["caption"]["text"] == "q = [2, 1] · Compare the query with each key."
    # the pictures' labels: what match.js, mix.js, share.js and the cards place
    marks = {k: display.pop(k) for k in ("q_mark", "output_mark", "precise_q", "precise_output", "off")}
    assert marks == {
        "q_mark": "q [2, 1]",
        "output_mark": "o [-0.004, 0.868]",
        "precise_q": "q = [2, 1]",
        "precise_output": "output=[-0.00393691965450399, 0.8679552806894639]",
        "off": {"key": {"marks": [], "note": ""}, "value": {"marks": [], "note": ""}},
    }
    assert display.pop("query_steps") == {"step": 0.1, "big": 1.0}
    assert display.pop("words")["keys_zoomed"] == "keys, zoomed in"
    names = ("key_mark", "value_mark", "share_mark", "score_mark", "card_title", "card_index", "carry_term",
             "value_legend", "value_fields")
    assert [{k: src.pop(k) for k in names} for src in display["sources"]][2] == {
        "key_mark": "kC",
        "value_mark": "vC",
        "share_mark": "C 28%",
        "score_mark": "C 0.707",
        "card_title": "Source C",
        "card_index": "index 2",
        "carry_term": [["Carry w", "C"], ["v", "C"]],
        "value_legend": "Value vC",
        "value_fields": ["Value C, x", "Value C, y"],
    }
    assert display == {
        "q": "[2, 1]",
        "q_coords": ["2", "1"],
        "q_precise": "[2, 1]",
        "keys_coords": [["-1", "2"], ["1", "0"], ["0", "1"]],
        "values_coords": [["2", "0"], ["0", "2"], ["-1", "-1"]],
        "scale": "√2",
        "m": "1.414",
        "z": "1.736",
        "output": "[-0.004, 0.868]",
        "output_precise": "[-0.00393691965450399, 0.8679552806894639]",
        "m_z_precise": "m=1.414213562373095; stable denominator=1.736185425829454",
        "sources": [
            {
                "label": "A",
                "index": 0,
                "allowed": True,
                "key": "[-1, 2]",
                "value": "[2, 0]",
                "dot": "0",
                "score": "0",
                "share": "0.14",
                "percent": "14%",
                "carry": "[0.28, 0]",
                "precise": "A: key=[-1, 2]; value=[2, 0]; dot=0; score=0; "
                "share=0.14002924504337802; contribution=[0.28005849008675604, 0]",
            },
            {
                "label": "B",
                "index": 1,
                "allowed": True,
                "key": "[1, 0]",
                "value": "[0, 2]",
                "dot": "2",
                "score": "1.414",
                "share": "0.576",
                "percent": "58%",
                "carry": "[0, 1.152]",
                "precise": "B: key=[1, 0]; value=[0, 2]; dot=2; score=1.414213562373095; "
                "share=0.575975345215362; contribution=[0, 1.151950690430724]",
            },
            {
                "label": "C",
                "index": 2,
                "allowed": True,
                "key": "[0, 1]",
                "value": "[-1, -1]",
                "dot": "1",
                "score": "0.707",
                "share": "0.284",
                "percent": "28%",
                "carry": "[-0.284, -0.284]",
                "precise": "C: key=[0, 1]; value=[-1, -1]; dot=1; score=0.7071067811865475; "
                "share=0.28399540974126003; "
                "contribution=[-0.28399540974126003, -0.28399540974126003]",
            },
        ],
    }


def test_worked_example_words_challenge_and_comparison(client):
    body = post(client, WORKED).json()
    assert body["words"]["summary"] == (
        "q lines up most with B's key (score 1.414), so B takes 58% of the attention; "
        "C gets 28% and A gets 14%. Output o = [-0.004, 0.868]."
    )
    assert body["challenge"] == {
        "goal": "Give the second source more than 90% of the attention.",
        "target": "B",
        "available": True,
        "share": 0.575975345215362,
        "met": False,
        "status": "Not yet: B takes 58%. Point q further along B's key, away from the other keys.",
        "claims": {"target": "B", "share": 0.575975345215362, "threshold": 0.9, "met": False},
        "id": "second-over-90",
    }
    compare = body["compare"]
    assert compare["available"] is True
    assert compare["active"] is False
    assert compare["summary"]["text"] == "Scores same; shares same; output same."
    assert compare["display"] == {
        "q": "[2, 1]",
        "scores": ["0", "1.414", "0.707"],
        "weights": ["0.14", "0.576", "0.284"],
        "output": "[-0.004, 0.868]",
    }
    assert compare["reference"] == body["trace"]


def test_worked_example_geometry(client):
    geometry = post(client, WORKED).json()["geometry"]
    # q = [2, 1] onto k_A = [-1, 2] is 0 (perpendicular), onto k_B = [1, 0] is [2, 0],
    # onto k_C = [0, 1] is [0, 1].
    assert geometry["projections"] == [[-0.0, 0.0], [2.0, 0.0], [0.0, 1.0]]
    assert geometry["hull"] == [[-1.0, -1.0], [2.0, 0.0], [0.0, 2.0]]
    assert geometry["arrows"][-1]["end"] == [-0.00393691965450399, 0.8679552806894639]
    assert [a["index"] for a in geometry["arrows"]] == [0, 1, 2]
    assert geometry["pie"][0] == {"index": 0, "start": 0.0, "end": 0.14002924504337802}
    view = geometry["key_view"]
    assert [view[k] for k in ("xmin", "xmax", "ymin", "ymax", "step")] == [-4.0, 4.0, -4.0, 4.0, 1.0]
    # nine lines across: every second one numbered, 0 among them; the y axis leaves out its bottom line
    assert [t["text"] for t in view["ticks"]["x"]] == ["−4", "−2", "0", "2", "4"]
    assert [t["at"] for t in view["ticks"]["y"]] == [-2.0, 0.0, 2.0, 4.0]
    assert geometry["score_axis"] == [-4.5, 4.5] and geometry["score_ticks"] == ["−4.5", "4.5"]


def test_python_is_the_programs_text_for_the_same_trace(client):
    body = post(client, {**WORKED, "q": [0.5, -3.25]}).json()
    assert body["python"] == to_python(trace_query([0.5, -3.25], WORKED["keys"], WORKED["values"]))


def test_comparison_marks_changes_after_a_query_edit(client):
    body = post(client, {**WORKED, "q": [3, 1]}).json()
    compare = body["compare"]
    assert compare["active"] is True
    assert compare["changed"]["dots"] == [True, True, False]  # k_C = [0, 1] ignores q's x
    assert compare["changed"]["m"] is True
    assert compare["summary"]["text"] == "Scores changed; shares changed; output changed."
    assert body["trace"]["dots"] == [-1.0, 3.0, 1.0]


def test_minus_zero_is_kept_in_precise_numbers(client):
    body = post(client, {**WORKED, "q": [-0.0, 1]}).json()
    assert body["display"]["q_precise"] == "[-0, 1]"
    assert body["display"]["q_coords"] == ["-0", "1"]


def test_blocked_source_reads_blocked(client):
    body = post(client, {**WORKED, "allowed": [True, False, True]}).json()
    b = body["display"]["sources"][1]
    assert (b["share"], b["percent"]) == ("blocked", "blocked")
    assert body["challenge"]["available"] is False
    assert body["geometry"]["hull"] == [[-1.0, -1.0], [2.0, 0.0]]
    assert [a["index"] for a in body["geometry"]["arrows"]] == [0, 2]


def test_challenge_met_far_along_b(client):
    body = post(client, {**WORKED, "q": [4, 0]}).json()
    assert body["challenge"]["met"] is True
    assert body["challenge"]["status"].startswith("Done: B takes 94.1%")  # as the pie shows it (A 0.3%)


def test_numbers_the_planes_cannot_draw_are_refused_at_their_coordinate(client):
    # One limit for the explorer and the held example (lab.limits.MAX_MAGNITUDE):
    # keys this large once made the comparison overflow; now they never reach the engine.
    body = {"q": [1e-300, 0], "keys": [[1e308, 1e308], [0, 1]], "values": [[1, 0], [0, 1]]}
    r = post(client, body)
    assert r.status_code == 422
    item = r.json()["detail"][0]
    assert item["field"] == "keys[0][0]"
    assert item["msg"] == "Source A · key x must be at most 1,000,000"  # the page's words (issue 22)
    assert post(client, {**body, "keys": [[1e6, -1e6], [0, 1]]}).status_code == 200


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({**WORKED, "q": [2, "x"]}, "q[1]", "Query q · y must be a number"),
        ({**WORKED, "q": [2, True]}, "q[1]", "Query q · y must be a number"),
        ({**WORKED, "q": []}, "q", "at least 1"),
        ({**WORKED, "q": [2, 1, 0]}, "keys[0]", "Source A · key has 2 coordinates; Query q has 3"),
        ({**WORKED, "values": [[2, 0], [0, 2]]}, "values", "Values list has 2 sources; the keys list has 3"),
        ({**WORKED, "values": [[2, 0], [0, 2], [1]]}, "values[2]", "Source C · value has 1"),
        ({**WORKED, "labels": ["A", "A", "C"]}, "labels[1]", "repeats Source 1 · name"),
        ({**WORKED, "allowed": [False, False, False]}, "allowed", "blocks every source"),
        ({**WORKED, "q": [1e308, 1e308]}, "q[0]", "Query q · x must be at most 1,000,000"),
        ({**WORKED, "scale": 0}, "scale", "Scale must be more than 0"),
        ({**WORKED, "extra": 1}, "extra", "not something the lab knows"),
        ({**WORKED, "keys": [[1, 2]] * 65}, "keys", "at most 64"),
        ({**WORKED, "labels": ["A", "B", "C" * 33]}, "labels[2]", "at most 32"),
    ],
)
def test_bad_input_is_422_naming_the_field(client, body, field, words):
    r = post(client, body)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert detail[0]["field"] == field
    assert words in detail[0]["msg"]
    assert "input" not in detail[0]  # the request is not echoed back


MAX = 1.7976931348623157e308


@pytest.mark.parametrize(
    ("body", "loc", "msg"),
    [
        # the engine's FieldErrors, located by their loc (the message is not parsed)
        ({**WORKED, "keys": [[-1, 2], [1, 0], [0, 1, 5]]}, ["body", "keys", 2],
         "Source C · key has 3 coordinates; Source A · key has 2"),
        ({**WORKED, "q": [2, 1, 0]}, ["body", "keys", 0], "Source A · key has 2 coordinates; Query q has 3"),
        ({**WORKED, "allowed": [False, False, False]}, ["body", "allowed"],
         "Allowed list blocks every source; at least 1 source must be allowed"),
        ({**WORKED, "labels": ["A", "B", "A"]}, ["body", "labels", 2],
         "Source 3 · name repeats Source 1 · name ('A')"),
        # derived numbers: at the input the learner changes, the derived field named after it
    ],
)
def test_engine_errors_are_422_at_their_location(client, body, loc, msg):
    r = post(client, body)
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["loc"] == loc
    assert item["type"] == "value_error"
    assert item["msg"].startswith(msg)
    # the WebSocket's answers (answer_for) are the same, item for item
    assert answer_trace(json.dumps(body)) == {"status": 422, "body": r.json()}


def test_a_huge_value_is_located_at_its_coordinate(client):
    text = json.dumps(WORKED).replace("[0, 2]", "[1e400, 2]", 1)  # parses as inf
    r = client.post("/api/trace", content=text, headers={"content-type": "application/json"})
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert (item["loc"], item["field"]) == (["body", "values", 1, 0], "values[1][0]")


@pytest.mark.parametrize("text", ["[" * 5000, '{"q": ' + "[" * 5000, '{"q": [2], "keys": ' + '{"a": ' * 3000])
def test_deeply_nested_json_is_422_not_500(client, text):
    r = client.post("/api/trace", content=text, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body"]
    answer = answer_trace(text)  # read as the POST reads it: the same refusal
    assert answer == {"status": 422, "body": r.json()}
    assert answer["body"]["detail"][0]["type"] == "json_too_deep"


def test_nan_and_infinity_are_refused(client):
    for literal in ("NaN", "Infinity", "-Infinity"):
        text = json.dumps(WORKED).replace("[2, 1]", f"[{literal}, 1]", 1)
        r = client.post("/api/trace", content=text, headers={"content-type": "application/json"})
        assert r.status_code == 422, literal
        assert r.json()["detail"][0]["field"] == "q[0]"


def test_malformed_json_is_422(client):
    r = client.post("/api/trace", content=b"{", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_oversized_body_is_413(client):
    padding = " " * (MAX_BODY_BYTES + 1)
    r = client.post(
        "/api/trace",
        content=json.dumps(WORKED) + padding,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413
    assert r.json()["detail"][0]["field"] == "body"


def test_example_endpoint(client):
    """The page's first answer: the worked A/B/C sequence, whose explorer row is the worked example."""
    example = client.get("/api/example").json()
    assert set(example) == {"sequence", "explorer", "stepper"}
    held = example["sequence"]["example"]
    assert held == STARTING.to_dict()
    assert (held["labels"], held["queries"][0], held["keys"], held["values"]) == (
        WORKED["labels"], [2.0, 1.0],
        [[-1.0, 2.0], [1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0], [-1.0, -1.0]],
    )
    # The example's explorer answer is exactly what tracing the worked example answers.
    assert example["explorer"] == post(client, {**WORKED, "allowed": [True] * 3, "scale": None}).json()


def test_the_openapi_example_is_the_worked_example(client):
    # the worked example is declared once (lab.explorer.examples); the schema's example is that one
    from attnlab.lab.explorer.examples import WORKED

    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]
    assert schemas["LabState"]["examples"] == [json.loads(json.dumps(WORKED.to_dict()))]
