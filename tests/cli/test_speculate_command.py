"""`attnlab speculate TEXT` through the real entry point: SmolLM2's run in the lab's words, JSON, refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))
TEXT = "Alice: I like tea. Bob: I like tea. Carol: I like"


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, "speculate", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.models
def test_prints_the_runs_words_and_steps():
    done = run(TEXT, "--max-new-tokens", "8", "--ngram", "3", "--draft", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Speculative decoding: the same tokens in fewer passes"
    assert lines[2].startswith("Speculative decoding gave the same 8 tokens as plain greedy decoding")
    assert lines[3].startswith("Looking up the last 3 tokens earlier in the context")
    assert "Speculative decoding, step by step" in lines


@pytest.mark.models
def test_json_holds_the_input_and_the_runs_numbers():
    data = json.loads(run(TEXT, "--max-new-tokens", "6", "--json").stdout)
    assert {k: data["inputs"][k] for k in ("prompt", "tokens", "ngram", "draft")} == {
        "prompt": TEXT, "tokens": 6, "ngram": 2, "draft": 4,
    }  # fmt: skip
    run_ = data["data"]["run"]
    assert run_["identical"] is True and run_["replay_matches"] is True
    assert run_["plain_ids"] == run_["speculative_ids"] and len(run_["plain_ids"]) == 6


@pytest.mark.parametrize(
    "args,message",
    [
        (("x", "--ngram", "9"), "--ngram must be at most 4"),
        (("x", "--max-new-tokens", "2"), "--max-new-tokens must be at least 4"),
        (("",), "TEXT is empty: type a sentence to look at"),
    ],
)
def test_a_refused_value_is_one_line_and_status_2(args, message):
    done = run(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"attnlab: error: {message}\n"
