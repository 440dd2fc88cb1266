"""`attnlab kv-cache` through the real entry point: a model's cache at N tokens in the lab's words, JSON,
a live SmolLM2 run's measured caches, refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnlab.lab.connections.kv import command
from attnlab.models.labs.facts import shapes

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))
# every command reads the model's shapes from its own files (the registry reads no per-model constant)
pytestmark = pytest.mark.models


def run(*args: str) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, "kv-cache", *args], capture_output=True, text=True, timeout=300)


def test_the_cache_at_n_tokens_in_the_labs_words():
    done = run("--tokens", "1024")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [s["text"] for s in command.size_words(shapes("smollm2"), 1024, 2)]
    assert lines[3] == "Bytes of K and V"
    assert lines[5].split() == ["MHA", "9", "69,120", "70,778,880"]
    assert lines[6].split() == ["the", "model's", "own", "3", "23,040", "23,592,960"]


def test_json_for_another_model_and_precision():
    done = run("--model", "minilm", "--tokens", "5", "--bytes", "4", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out == {"model": shapes("minilm"), **command.sizes(shapes("minilm"), 5, 4)}
    assert out["at_tokens"] == {"mha": 92_160, "gqa": 92_160, "mqa": 7_680}


@pytest.mark.parametrize(
    "args,error",
    [
        (("--tokens", "0"),
         "attnlab: error: --tokens must be from 1 to 1,000,000 tokens in the cache, not 0"),
        (("Hi", "--tokens", "65"),
         "attnlab: error: --tokens must be from 1 to 64 new tokens to write, not 65"),
        (("--model", "nope"), "attnlab: error: --model 'nope' is unknown; use one of minilm, smollm2"),
        (("Hi", "--model", "minilm"),
         "attnlab: error: minilm is an encoder: it does not predict text; use --model smollm2"),
    ],
)  # fmt: skip
def test_refusals_are_one_line(args, error):
    done = run(*args)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.strip() == error


@pytest.mark.models
def test_a_live_run_measures_its_caches():
    done = run("The capital of France is", "--tokens", "3", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["counted"]["tokens"] == [5, 6, 7, 8] and out["counted"]["equal"] is True
    assert out["counted"]["measured"] == [30 * 3 * 64 * 2 * 4 * n for n in (5, 6, 7, 8)]
    words = run("The capital of France is", "--tokens", "3").stdout.splitlines()
    g = command.live(shapes("smollm2"), out["run"])
    assert words[:2] == [s["text"] for s in g.sentences()] and words[3] == "SmolLM2's caches, step by step"
