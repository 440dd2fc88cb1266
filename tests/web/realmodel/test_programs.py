"""'How is this computed?' through the real app (web/realmodel/programs.py): words, programs, refusals.

MiniLM runs on float32 weights: its programs print the API's numbers bit for bit. The server's
SmolLM2 runs on the q4_1 path (where the compiled kernels run): its programs follow the float32
path and print the API's numbers up to the q4_1 path's rounding (the Q4 logits oracle's 5e-4 for
logits, 1e-5 for a share), and the answer says so.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from attnlab.lab.realmodel.program.words import control_words

pytestmark = pytest.mark.models

TEXT = "The cat sat on the mat. The cat sat on the mat."


def run(answer: dict, tmp_path) -> float:
    path = tmp_path / answer["file_name"]
    path.write_text(answer["program"])
    done = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return float(done.stdout.strip().splitlines()[-1])


def test_the_words_are_the_labs(client):
    assert client.get("/api/models/programs/words").json() == control_words()


def test_an_encoders_program_prints_the_apis_number_bit_for_bit(client, traced, minilm, tmp_path):
    job = traced("minilm", TEXT)["id"]
    head = client.get(f"/api/models/jobs/{job}/heads/3/4").json()
    shown = head["weights"][9][3]
    got = client.get(f"/api/models/jobs/{job}/program",
                     params={"kind": "weight", "layer": 3, "head": 4, "query": 9, "key": 3,
                             "value": shown})  # fmt: skip
    assert got.status_code == 200
    answer = got.json()
    assert (answer["path"], answer["program_path"], answer["says"]["claims"]["bit_for_bit"]) == (
        "float32", "float32", True)  # fmt: skip
    assert f"# The page shows {shown!r} (float32 path)." in answer["program"]
    assert run(answer, tmp_path) == shown


def test_a_decoders_q4_1_numbers_are_printed_up_to_its_rounding(client, traced, smollm2, tmp_path):
    job = traced("smollm2", TEXT)["id"]
    assert smollm2.path == "q4_1"
    share = client.get(f"/api/models/jobs/{job}/heads/17/4").json()["weights"][13][2]
    answer = client.get(f"/api/models/jobs/{job}/program",
                        params={"kind": "weight", "layer": 17, "head": 4, "query": 13,
                                "key": 2}).json()  # fmt: skip
    assert answer["path"] == "q4_1" and answer["says"]["claims"]["bit_for_bit"] is False
    assert abs(run(answer, tmp_path) - share) <= 1e-5
    entry = client.get(f"/api/models/jobs/{job}/next/5").json()["entries"][0]
    answer = client.get(f"/api/models/jobs/{job}/program",
                        params={"kind": "next", "position": 5, "token": entry["id"],
                                "quantity": "logit"}).json()  # fmt: skip
    assert abs(run(answer, tmp_path) - entry["logit"]) <= 5e-4


def test_a_patch_takes_its_corrupted_prompt_from_a_second_trace(client, traced, minilm):
    clean = traced("minilm", "The cat sat on the mat.")["id"]
    corrupt = traced("minilm", "The dog sat on the rug.")["id"]
    params = {"kind": "patch", "quantity": "recovered", "target": "head", "layer": 2, "column": 3}
    got = client.get(f"/api/models/jobs/{clean}/program", params={**params, "corrupt_job": corrupt})
    assert got.status_code == 200
    program = got.json()["program"]
    assert "CORRUPT_IDS = [" in program and "    3899,  # 2 'dog'" in program


def test_refusals_name_their_field_in_the_pages_words(client, traced, minilm):
    job = traced("minilm", TEXT)["id"]
    url = f"/api/models/jobs/{job}/program"
    cases = [
        ({"kind": "weight", "layer": 6, "head": 0, "query": 0, "key": 0}, ["query", "layer"],
         "Layer 6 does not exist; minilm has layers 0..5"),
        ({"kind": "weight", "head": 0, "query": 0, "key": 0}, ["query", "layer"],
         "Layer is needed for a number of kind weight"),
        ({"kind": "next", "position": 0, "token": 1, "quantity": "logit"}, ["query", "kind"],
         "Kind 'next' is not a number all-MiniLM-L6-v2 shows: it needs a model that predicts the next token"),
        ({"kind": "patch", "quantity": "clean"}, ["query", "corrupt"],
         "Corrupted prompt is missing: patching compares the clean prompt with a corrupted one"),
    ]  # fmt: skip
    for params, loc, msg in cases:
        got = client.get(url, params=params)
        assert got.status_code == 422
        assert (got.json()["detail"][0]["loc"], got.json()["detail"][0]["msg"]) == (loc, msg)
    assert client.get(url, params={"kind": "weight", "size": 3}).status_code == 422
    assert client.get("/api/models/jobs/nope/program", params={"kind": "weight"}).status_code == 404


def test_token_ids_the_caller_holds_get_their_program(client, minilm):
    body = {"model": "minilm", "ids": [101, 1996, 4937, 102], "kind": "head_qk", "layer": 1, "head": 2,
            "query": 1, "key": 2, "quantity": "before"}  # fmt: skip
    got = client.post("/api/models/program", json=body)
    assert got.status_code == 200
    assert "    4937,  # 2 'cat'" in got.json()["program"]
    bad = client.post("/api/models/program", json={**body, "tokens": ["[CLS]"]})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "tokens"]


def test_the_path_is_the_traces_own_not_the_job_lines(client, traced, minilm, monkeypatch):
    from attnlab.web.realmodel import line

    job = traced("minilm", TEXT)["id"]
    monkeypatch.setattr(line.JOBS, "weights_path", lambda name: None)  # a worker started again forgets
    params = {"kind": "weight", "layer": 0, "head": 0, "query": 1, "key": 0}
    answer = client.get(f"/api/models/jobs/{job}/program", params=params).json()
    assert (answer["path"], answer["says"]["claims"]["bit_for_bit"]) == ("float32", True)
    # token ids the caller holds: the path it says, else the job line's (forgotten here)
    body = {"model": "minilm", "ids": [101, 1996, 4937, 102], **params}
    assert client.post("/api/models/program", json=body).json()["path"] == "unknown"
    assert client.post("/api/models/program", json={**body, "path": "float32"}).json()["path"] == "float32"
    bad = client.post("/api/models/program", json={**body, "path": "fast"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "path"]



@pytest.mark.parametrize(
    "model,field,ids,loc,msg",
    [
        ("smollm2", "ids", [2**32], ["body", "ids", 0], "Ids · item 1 must be at most 1,048,575"),
        ("smollm2", "ids", [1, 49152], ["body", "ids", 1],
         "Ids · item 2 49152 is outside the vocabulary 0..49151"),
        ("minilm", "ids", [101, 30522, 102], ["body", "ids", 1],
         "Ids · item 2 30522 is outside the vocabulary 0..30521"),
        ("smollm2", "corrupt_ids", [60000, 1], ["body", "corrupt_ids", 0],
         "Corrupt ids · item 1 60000 is outside the vocabulary 0..49151"),
    ],
)  # fmt: skip
def test_a_token_id_outside_the_vocabulary_is_a_422_at_its_place(client, model, field, ids, loc, msg):
    # Before: an id >= 2**32 answered 500 (an OverflowError in tokenizer.decode); an id just past the
    # vocabulary was taken, and its program would fail when run.
    body = {"model": model, "kind": "census", "ids": [1, 2, 3], "layer": 0, "head": 0, "score": "previous"}
    got = client.post("/api/models/program", json={**body, field: ids})
    assert got.status_code == 422, got.text
    [item] = got.json()["detail"]
    assert (item["loc"], item["msg"]) == (loc, msg)


def test_a_token_past_the_vocabulary_is_refused_at_token(client):
    body = {"model": "smollm2", "kind": "next", "ids": [1, 2], "position": 0, "quantity": "p"}
    assert client.post("/api/models/program", json={**body, "token": 49151}).status_code == 200
    got = client.post("/api/models/program", json={**body, "token": 49152})
    assert got.status_code == 422
    assert got.json()["detail"][0]["msg"] == "Token 49152 is outside the vocabulary 0..49151"
