"""Every sentence of the speculative-decoding lab is true of its numbers (hypothesis, on synthetic runs)."""

from __future__ import annotations

import json
from fractions import Fraction

from hypothesis import given, settings
from labtools import page_claims
from specruns import STOP, runs

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.speculate import CONTROLS, LAB
from attnlab.lab.connections.speculate.draft import replay


@settings(max_examples=60, deadline=None)
@given(runs())
def test_every_claim_of_a_done_run(case):
    values, measured = case
    answer = LAB.answer_for(values, measured)
    same, acceptance, speed, again, toy = page_claims(answer)
    data = measured["speculate"].data
    plain, spec = data["plain"], data["speculative"]
    assert same == {"identical": True, "tokens": len(spec["ids"]), "first_difference": None}
    proposed = sum(len(s["proposed"]) for s in spec["steps"])
    kept = sum(s["accepted"] for s in spec["steps"])
    passes = [s for s in spec["steps"] if s["passes"]]
    assert acceptance["proposed"] == proposed and acceptance["accepted"] == kept
    assert acceptance["rate"] == (kept / proposed if proposed else None)
    assert acceptance["passes"] == len(passes)
    assert acceptance["no_draft"] == sum(not s["proposed"] for s in passes)
    assert speed["passes"] == 1 + len(passes) == spec["passes"] and speed["plain_passes"] == len(plain["ids"])
    assert speed["speedup"] == plain["total_s"] / spec["total_s"]
    assert speed["faster"] == (speed["speedup"] >= 1)
    assert ("times as fast" in answer["words"][2]["text"]) == speed["faster"]
    assert again == {"replay_matches": True, "argmax_rule": True}
    steps = replay(data["prompt_ids"], plain["ids"], ngram=values["ngram"], draft=values["draft"],
                   max_new_tokens=values["tokens"], stop_ids=set(STOP))  # fmt: skip
    assert [t for s in steps for t in s.tokens] == spec["ids"]  # the steps make exactly the tokens
    p = [Fraction(values[f"p{i}"], sum(values[f"p{j}"] for j in range(1, 5))) for i in range(1, 5)]
    assert toy["output"] == toy["p"] == [str(x) for x in p] and toy["exact"] is True
    q = [Fraction(values[f"q{i}"], sum(values[f"q{j}"] for j in range(1, 5))) for i in range(1, 5)]
    assert Fraction(toy["beta"]) == sum(min(a, b) for a, b in zip(p, q)) and toy["rejected"] == (p != q)


@settings(max_examples=20, deadline=None)
@given(runs())
def test_a_changed_token_is_said(case):
    values, measured = case
    data = json.loads(json.dumps(measured["speculate"].data))
    data["speculative"]["ids"][-1] = 5 if data["speculative"]["ids"][-1] != 5 else 4
    words = LAB.answer_for(values, {"speculate": Measured("done", data=data)})["words"]
    n = len(data["plain"]["ids"])
    assert words[0]["claims"] == {"identical": False, "tokens": n, "first_difference": n - 1}
    assert f"at position {n - 1}" in words[0]["text"]


def test_waiting_absent_and_failed_runs_are_said_and_the_toy_still_shows():
    values = read(CONTROLS, {}, "inputs")
    cases = {
        "absent": {},
        "running": {"speculate": Measured("waiting", stage="running", done=5, total=48, unit="token",
                                          title="SmolLM2-135M-Instruct")},  # fmt: skip
        "failed": {"speculate": Measured("failed", message="The model is not installed.")},
    }
    for status, measured in cases.items():
        answer = LAB.answer_for(values, measured)
        status_line, toy = answer["words"]
        assert status_line["claims"]["status"] == ("waiting" if status == "running" else status)
        assert status_line["text"].startswith("SmolLM2 decodes your prompt twice, plainly and speculatively:")
        assert toy["claims"]["exact"] is True and answer["data"]["run"] is None
        assert [p["id"] for p in answer["pictures"]] == ["toy"]
    running = LAB.answer_for(values, cases["running"])["words"][0]["text"]
    assert running.endswith("running, 5 of 48 tokens done…")


def test_a_text_that_ends_at_its_first_token_needs_no_draft():
    values = read(CONTROLS, {"tokens": 8}, "inputs")
    data = {
        "prompt_ids": [1, 3], "stop_ids": [0], "texts": {"0": "", "1": " a", "3": "b"},
        "plain": {"ids": [0], "times": [0.1], "total_s": 0.1, "first_s": 0.1, "passes": 1},
        "speculative": {"ids": [0], "times": [0.1], "total_s": 0.1, "first_s": 0.1, "passes": 1,
                        "steps": [{"first": 0, "proposed": [], "argmax": [], "accepted": 0, "seconds": 0.0,
                                   "passes": 0}]},
    }  # fmt: skip
    words = LAB.answer_for(values, {"speculate": Measured("done", data=data)})["words"]
    assert words[1]["text"] == "The first token ended the text at once: no pass was left to draft for."
    assert words[1]["claims"]["passes"] == 0 and words[2]["claims"]["passes"] == 1
