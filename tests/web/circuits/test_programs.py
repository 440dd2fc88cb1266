"""'How is this computed?' for the Circuits page's numbers, through the real app.

Each number of a circuits view carries its descriptor (``how``; a map's cells ``hows``) and the
view the text it ran on (``program_source``); the census is of a kept trace. The program that
``POST /api/models/program`` (or the trace's ``GET .../program``) writes for it, run in a
subprocess under ``python -I``, prints the page's number: bit for bit on MiniLM (float32
weights), within the Q4 path's stated tolerance on the server's SmolLM2 (1e-5 for a
probability; its program follows the float32 path, and says so).
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.models

WAIT_S = 300
CLEAN, CORRUPT = "The cat sat on the mat.", "The dog sat on the rug."
PROBABILITY = 1e-5  # the q4_1 path's probabilities against the float32 program (tests/web/realmodel)


def finished(client, kind: str, body: dict) -> dict:
    """Run a circuits job to its end; its view."""
    job = client.post(f"/api/circuits/{kind}", json=body).json()
    deadline = time.monotonic() + WAIT_S
    while job["status"] not in ("done", "error", "cancelled"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
        job = client.get(f"/api/circuits/jobs/{job['id']}").json()
    assert job["status"] == "done", job["message"]
    return job["result"]


def printed(answer: dict, tmp_path) -> float:
    """The number the program prints: its last line of output."""
    path = tmp_path / answer["file_name"]
    path.write_text(answer["program"])
    done = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    return float(done.stdout.strip().splitlines()[-1])


def test_a_patched_heads_fraction_recovered_is_printed_bit_for_bit_on_minilm(client, minilm, tmp_path):
    body = {"model": "minilm", "clean": CLEAN, "corrupt": CORRUPT, "sweep": "heads", "first_layer": 2,
            "last_layer": 2}  # fmt: skip
    view = finished(client, "patching", body)
    grid = view["sweep"]["map"]
    how, value = grid["hows"][0][5], grid["values"][0][5]  # layer 2, head 5
    assert how == {"kind": "patch", "quantity": "recovered", "target": "head", "layer": 2, "column": 5}
    source = view["program_source"]
    assert source["path"] == "float32" and source["corrupt_ids"][2] == minilm.tokenize(["dog"]).ids[0][1]
    answer = client.post("/api/models/program", json={**source, **how, "value": value}).json()
    said = answer["says"]["claims"]
    assert said == {"page_path": "float32", "program_path": "float32", "bit_for_bit": True}
    assert f"# The page shows {value!r} (float32 path)." in answer["program"]
    assert printed(answer, tmp_path) == value


def test_a_heads_census_score_is_printed_bit_for_bit_from_the_kept_trace(client, traced, minilm, tmp_path):
    job = traced("minilm", "red green blue red green blue")["id"]
    census = client.get(f"/api/circuits/census/{job}?score=induction").json()
    top = census["ranked"][0]
    layer, head = top["layer"], top["head"]
    assert census["map"]["hows"][layer][head] == top["how"]
    assert census["map"]["values"][layer][head] == top["value"]
    number = {**top["how"], "value": top["value"]}
    answer = client.get(f"/api/models/jobs/{job}/program", params=number).json()
    assert answer["path"] == "float32"
    assert printed(answer, tmp_path) == top["value"]


def test_a_lens_probability_of_smollm2s_q4_1_path_is_printed_within_its_tolerance(client, smollm2, tmp_path):
    view = finished(client, "lens", {"model": "smollm2", "text": "The Eiffel Tower is in the city of"})
    layer = view["layers"][27]
    how, value = layer["how"]["token_p"], layer["token_p"]
    answer_id = view["token"]["id"]
    assert how == {"kind": "lens", "position": 8, "layer": 27, "quantity": "token_p", "token": answer_id}
    source = view["program_source"]
    answer = client.post("/api/models/program", json={**source, **how, "value": value}).json()
    path = source["path"]
    assert (answer["path"], answer["says"]["claims"]["bit_for_bit"]) == (path, path == "float32")
    assert f"# The page shows {value!r} ({path} path)." in answer["program"]
    got = printed(answer, tmp_path)
    assert got == value if path == "float32" else abs(got - value) <= PROBABILITY
