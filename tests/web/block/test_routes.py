"""The block API through the real app: the walk, 4xx naming the field, practice, study, export."""

from __future__ import annotations

import json
import math

import pytest
from fastapi.testclient import TestClient

from attnlab.engine.single import trace_query
from attnlab.lab.block.data import MAX_MAGNITUDE, given_weights, given_x
from attnlab.lab.block.walk import walk
from attnlab.web.app import create_app


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app()) as c:
        yield c


def tensors(body: dict) -> dict:
    return {t["name"]: t for s in body["steps"] for t in s["tensors"]}


def test_default_walk_has_every_step_and_the_engines_numbers(client):
    r = client.post("/api/block", json={})
    assert r.status_code == 200
    body = r.json()
    assert [s["id"] for s in body["steps"]] == [
        "embed",
        "project",
        "attend-1",
        "attend-2",
        "combine",
        "add-norm-1",
        "mlp",
        "add-norm-2",
    ]
    w = walk()
    ts = tensors(body)
    assert set(ts) == set(w.tensors)
    for name, t in ts.items():
        assert t["values"] == w.tensors[name], name  # JSON floats round-trip: bit for bit
        assert [[float(p) for p in row] for row in t["precise"]] == w.tensors[name]
    assert body["output"] == w.output
    assert ts["x"]["display"] == [["1", "0", "0", "1"], ["0", "1", "0", "1"], ["0", "0", "1", "1"]]
    assert ts["head1.weights"]["display"][0] == ["1", "blocked", "blocked"]
    assert ts["head1.q"]["expansions"][1][0] == "(-1)×0 + 1×0.5 + (-1)×(-0.5) + 1×0 = 1"
    assert body["heads"][0]["kind"] == "previous-token" and body["heads"][1]["kind"] == "self"
    assert body["heads"][0]["sentence"]["text"].startswith(
        "Head 1 is a previous-token head: on average 86% of B's and C's attention goes to the token just"
    )
    assert "Its largest shares: B gives A 94% and C gives B 77%" in body["heads"][0]["sentence"]["text"]
    assert "ordered_sum" in body["python"]
    captions = body["playback"]["captions"]
    assert [c["step"] for c in captions] == [s["id"] for s in body["steps"]]
    assert [c["tensors"] for c in captions] == [[t["name"] for t in s["tensors"]] for s in body["steps"]]
    assert captions[-1]["end_s"] == body["playback"]["duration_s"]


def test_explorer_states_open_the_heads_rows_in_the_trace_api(client):
    body = client.post("/api/block", json={"positions": "rope"}).json()
    for head in body["heads"]:
        for r, state in enumerate(head["explorer"]):
            assert state["allowed"] == [i <= r for i in range(3)]
            trace = client.post("/api/trace", json=state)
            assert trace.status_code == 200
            assert trace.json()["trace"]["weights"] == head["weights"][r]
            assert list(trace_query(**state).output) == head["output"][r]


def test_head_ablation_and_heads_on(client):
    body = client.post("/api/block", json={"heads_on": [True, False]}).json()
    concat = tensors(body)["concat"]["values"]
    assert [row[2:] for row in concat] == [[0.0, 0.0]] * 3
    full = client.post("/api/block", json={}).json()
    assert full["ablation"][1]["output"] == body["output"]
    assert full["ablation"][1]["max_change"] == max(
        abs(a - b) for ra, rb in zip(full["output"], body["output"]) for a, b in zip(ra, rb)
    )
    assert body["heads"][1]["on"] is False and body["heads"][1]["kind"] == "self"  # its weights still name it
    assert "Head 2: off" in body["summary"]["text"]


def test_pre_post_compare_lists_the_other_walk_and_what_changed(client):
    pre = client.post("/api/block", json={"norm": "pre"}).json()
    post = client.post("/api/block", json={"norm": "post"}).json()
    cmp = pre["norm_compare"]
    assert cmp["other"] == "post" and cmp["output"] == post["output"]
    assert [s["id"] for s in cmp["steps"]] == [s["id"] for s in post["steps"]]
    assert cmp["changed"]["x"] == [[False] * 4] * 3
    assert cmp["changed"]["output"] == [
        [abs(a - b) > 1e-12 for a, b in zip(ra, rb)] for ra, rb in zip(pre["output"], post["output"])
    ]


def test_rope_demo_scores_at_equal_offsets_are_equal(client):
    rope = client.post("/api/block", json={"positions": "rope"}).json()["rope"]
    assert rope["active"] is True and rope["angles"] == [0.0, 1.0, 2.0]
    pairs = rope["demo"]["pairs"]
    same = [p["score"] for p in pairs if p["offset"] == 1]
    assert len(same) >= 4 and max(same) - min(same) <= 1e-12
    other = [p["score"] for p in pairs if p["offset"] != 1]
    assert other and abs(other[0] - same[0]) > 0.1


def test_example_is_what_reset_restores(client):
    ex = client.get("/api/block/example").json()
    assert ex["x"] == given_x() and ex["weights"] == given_weights()
    again = client.post("/api/block", json={"x": ex["x"], "weights": ex["weights"]}).json()
    assert again["output"] == client.post("/api/block", json={}).json()["output"]


def bad(path_value):
    path, value = path_value
    body = {"x": given_x(), "weights": given_weights()}
    target = body
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(
    "path,value,field",
    [
        (("x", 0, 3), 1e6, "x[0][3]"),
        (("x", 2), [1, 2, 3], "x[2]"),
        (("x", 1, 1), "2", "x[1][1]"),
        (("x", 1, 1), True, "x[1][1]"),
        (("weights", "heads", 1, "w_q", 2, 0), 5000, "weights.heads[1].w_q[2][0]"),
        (("weights", "w_o"), [[1, 0, 0, 0]] * 3, "weights.w_o"),
        (("weights", "norm_2", "gamma"), [1, 1], "weights.norm_2.gamma"),
        (("weights", "b_1", 7), None, "weights.b_1[7]"),
        (("heads_on",), [True], "heads_on"),
        (("norm",), "middle", "norm"),
        (("positions",), "learned", "positions"),
    ],
)
def test_bad_input_is_422_naming_the_field(client, path, value, field):
    r = client.post("/api/block", json=bad((path, value)))
    assert r.status_code == 422
    assert field in [d["field"] for d in r.json()["detail"]]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_are_refused(client, token):
    text = json.dumps({"x": given_x()}).replace("1.0", token, 1)
    r = client.post("/api/block", content=text, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["field"] == "x[0][0]"


def test_largest_allowed_values_do_not_fail(client):
    w = given_weights()
    w["w_1"] = [[1000.0] * 8 for _ in range(4)]
    w["w_2"] = [[-1000.0] * 4 for _ in range(8)]
    r = client.post("/api/block", json={"x": [[1000.0, -1000.0, 1000.0, -1000.0]] * 3, "weights": w})
    assert r.status_code == 200
    assert all(math.isfinite(v) for row in r.json()["output"] for v in row)


def test_practice_lists_challenges_without_answers(client):
    data = client.get("/api/block/practice").json()
    assert len(data["challenges"]) >= 5
    for c in data["challenges"]:
        assert "answer" not in c and len(c["hints"]) == 3
    assert data["words"]["check"] == "Check" and data["words"]["reveal"] == "Show the answer"


def test_the_walk_carries_the_sections_fixed_words(client):
    words = client.post("/api/block", json={}).json()["words"]
    assert words["parts"]["practice"]["title"] == client.get("/api/block/practice").json()["title"]
    assert words["play"]["moving"]["claims"] == {"step_s": 4.0}
    assert words["edit"]["reset_hint"]["text"] == (
        "Reset restores the given X and weights, pre-norm, no positions and both heads on."
    )


def submit(client, challenge, response=None, block=None):
    """POST a submit to /api/block/study, as the page's Check does; return the answer."""
    action = {"kind": "submit", "challenge": challenge, "response": response}
    return client.post("/api/block/study", json={"block": block or {}, "action": action})


def feedback(r) -> dict:
    study = r.json()["study"]
    (entry,) = study["challenges"].values()
    return entry["attempts"][entry["current"]]["feedback"]


def test_the_only_check_is_the_studys_submit(client):
    assert client.post("/api/block/check", json={"challenge": "ln-stats"}).status_code == 404


def test_check_and_study_record_help(client):
    r = submit(client, "ln-stats", [0.5, 1])
    assert r.status_code == 200 and feedback(r)["met"] is False
    words = feedback(r)["words"]["text"]
    assert "mean is too high" in words and "0.5" not in words.split("high")[1]
    assert feedback(submit(client, "ln-stats", [0, 1]))["met"] is True
    r = submit(client, "nope")
    assert r.status_code == 422 and r.json()["detail"][0]["field"] == "action.challenge"
    r = submit(client, "ln-stats", [0, "x"])
    assert r.status_code == 422
    s = client.post(
        "/api/block/study",
        json={"action": {"kind": "help", "help": "hint", "detail": 2, "challenge": "silent-head"}},
    ).json()
    s = client.post(
        "/api/block/study",
        json={"study": s["study"], "action": {"kind": "help", "help": "answer", "challenge": "silent-head"}},
    ).json()
    assert s["answer"].startswith("Set W_O's first two rows to zeros")
    assert s["history"][0]["help"] == ["Opened hint 2 of 3", "Showed the answer"]
    w = given_weights()
    w["w_o"][0] = [0.0] * 4
    w["w_o"][1] = [0.0] * 4
    s = client.post(
        "/api/block/study",
        json={
            "block": {"weights": w},
            "study": s["study"],
            "action": {"kind": "submit", "challenge": "silent-head", "response": "head-1"},
        },
    ).json()
    attempt = s["study"]["challenges"]["silent-head"]["attempts"][0]
    assert attempt["feedback"]["met"] is True and attempt["response"] == "head-1"


def test_exports(client):
    r = client.post("/api/block/export/markdown", json={"norm": "post"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    assert "attachment" in r.headers["content-disposition"]
    assert "## Add & Norm" in r.text and "Settings: post-norm" in r.text
    r = client.post("/api/block/export/ipynb", json={})
    assert r.status_code == 200
    assert json.loads(r.text)["nbformat"] == 4
    r = client.post("/api/block/export/ipynb", json={"x": [[1, 2]]})
    assert r.status_code == 422


@pytest.mark.parametrize(
    "path,value,field,words",
    [
        (("x", 0, 3), 1000.5, "x[0][3]", "X (inputs) · row 1, column 4 must be at most 1,000"),
        (
            ("weights", "w_2", 7, 0), -5000, "weights.w_2[7][0]",
            "W₂ · row 8, column 1 must be at least -1,000",
        ),
    ],
)
def test_a_number_past_the_blocks_limit_is_refused_in_the_labs_words(client, path, value, field, words):
    r = client.post("/api/block", json=bad((path, value)))
    assert r.status_code == 422
    (item,) = r.json()["detail"]
    assert item["field"] == field
    assert item["msg"] == words  # the matrix and cell as the block editor labels them (issue 22)
    assert f"{MAX_MAGNITUDE:,.0f}" in item["msg"]
    # not pydantic's wording, nor the explorer's limit
    assert "Input should" not in item["msg"] and "1,000,000" not in item["msg"]
