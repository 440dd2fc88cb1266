"""`attnlab heads` and `attnlab generate` (cli/models.py) through the real entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.lab.realmodel.kinds import KINDS
from attnlab.models import files

pytestmark = pytest.mark.models

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))


def _missing(shipped) -> str | None:
    try:
        files.locate(shipped)
    except files.ModelNotInstalled as error:
        return str(error)
    return None


MINILM_MISSING, SMOLLM2_MISSING = _missing(files.MINILM), _missing(files.SMOLLM2)
needs_minilm = pytest.mark.skipif(bool(MINILM_MISSING), reason=str(MINILM_MISSING))
needs_smollm2 = pytest.mark.skipif(bool(SMOLLM2_MISSING), reason=str(SMOLLM2_MISSING))


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    return subprocess.run([ATTNLAB, *args], capture_output=True, text=True, timeout=180, env=env)


def other_blas_threads() -> dict:
    """The environment with a BLAS thread count unlike this process's: the numbers must not care."""
    from attnlab.engine.threads import blas_threads

    n = "2" if blas_threads() == {1} else "1"
    return {**os.environ, "OPENBLAS_NUM_THREADS": n, "OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n}


@needs_minilm
def test_heads_table_for_one_head():
    done = run("heads", "The cat sat on the mat.", "--model", "minilm", "--layer", "2", "--head", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "all-MiniLM-L6-v2: 9 tokens, layer 2 of 0..5"
    assert lines[1].startswith("head 5 of 0..11: a ")
    header = lines[3].split()
    assert header[:3] == ["query", "\\", "key"]
    assert header[3:12] == ["0:[CLS]", "1:the", "2:cat", "3:sat", "4:on", "5:the", "6:mat", "7:.", "8:[SEP]"]
    rows = lines[4:13]
    assert [r.split()[0] for r in rows] == header[3:12]


@needs_minilm
def test_heads_json_equals_the_models_own_trace():
    from attnlab.models.registry import get_model

    args = ("heads", "The cat sat on the mat.", "--layer", "2", "--head", "5", "--json")
    done = run(*args, env=other_blas_threads())
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["model"] == "minilm" and data["layer"] == 2 and data["head"] == 5
    assert data["tokens"][:3] == ["[CLS]", "the", "cat"]
    ours = get_model("minilm").trace("The cat sat on the mat.").weights[2, 5]
    # the same bits: the forward pass holds BLAS to one thread in every process (engine/threads.py)
    np.testing.assert_array_equal(np.array(data["weights"], dtype=np.float32), ours)
    # the table's top source for each query is that row's largest share
    table = run("heads", "The cat sat on the mat.", "--layer", "2", "--head", "5").stdout
    for i, line in enumerate(table.splitlines()[4:13]):
        top = line.split()[-2]
        assert top == f"{int(np.argmax(ours[i]))}:{data['tokens'][int(np.argmax(ours[i]))]}"


@needs_minilm
def test_heads_summary_of_a_layer_lists_every_head():
    done = run("heads", "The cat sat on the mat.", "--layer", "0")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = "head kind (score) previous first induction duplicate breadth KV head"
    assert lines[1].split() == header.split()
    assert [line.split()[0] for line in lines[2:14]] == [str(h) for h in range(12)]
    # each head's kind with the score that names it: "first-token 61%", "focused 0.51"
    assert all(line.split()[1] in KINDS for line in lines[2:14])


@needs_minilm
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--layer", "6"], "layer 6 does not exist; minilm has layers 0..5"),
        (["--head", "12"], "head 12 does not exist; minilm has heads 0..11"),
        (["--model", "gpt9"], "model 'gpt9' is unknown; use one of minilm, smollm2"),
        (["--layer", "two"], "argument --layer: invalid int value: 'two'"),
    ],
)
def test_heads_refuses_bad_arguments_in_one_line(args, message):
    done = run("heads", "The cat sat.", *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == f"attnlab: error: {message}"


def test_heads_refuses_empty_text():
    done = run("heads", "   ")
    assert done.returncode == 2
    assert done.stderr.strip() == "attnlab: error: text is empty: type a sentence to look at"


def test_generate_refuses_an_encoder():
    done = run("generate", "Hello", "--model", "minilm")
    assert done.returncode == 2
    assert "minilm is an encoder" in done.stderr


@needs_smollm2
def test_generate_json_gives_tokens_why_it_stopped_and_timings(smollm2):
    done = run(
        "generate", "Once upon a time", "--model", "smollm2", "--max-new-tokens", "6", "--json", "--no-chat"
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert set(body) == {"tokens", "stopped", "timings"}
    ids = list(smollm2.generate_ids(smollm2.encode("Once upon a time"), max_new_tokens=6))
    assert [t["id"] for t in body["tokens"]] == ids and body["stopped"] == "length"
    assert "".join(t["text"] for t in body["tokens"]) == smollm2.decode(ids)
    timings = body["timings"]
    assert set(timings) == {"load_s", "prefill_s", "decode_s"}
    assert all(isinstance(v, float) and v >= 0 for v in timings.values())


@needs_smollm2
def test_generate_streams_the_greedy_continuation(smollm2):
    command = [
        ATTNLAB,
        "generate",
        "Once upon a time",
        "--model",
        "smollm2",
        "--max-new-tokens",
        "20",
        "--no-chat",
    ]
    env = other_blas_threads()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        chunks = []
        while chunk := os.read(proc.stdout.fileno(), 4096):
            chunks.append(chunk)
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=180) == 0, err
    out = b"".join(chunks).decode()
    ids = smollm2.encode("Once upon a time")
    expected = smollm2.decode(list(smollm2.generate_ids(ids, max_new_tokens=20)))
    assert out == "Once upon a time" + expected + "\n"
    # it arrived piece by piece, not all at the end: a busy machine may let pieces pile up in the
    # pipe between two reads, so only ask that the first read did not get everything
    assert len(chunks) >= 2
    assert err.strip() == "[length]"


@needs_smollm2
def test_generate_answers_a_question_as_a_chat_turn_with_chat(smollm2):
    """An instruct model: --chat wraps the question in the chat template, as the page's chat choice."""
    from attnlab.models.chat import user_turn

    question = "What is the capital of France?"
    done = run("generate", question, "--max-new-tokens", "8", "--json", "--chat")
    assert done.returncode == 0, done.stderr
    ids = list(smollm2.generate_ids(smollm2.encode(user_turn(question)), max_new_tokens=8))
    assert [t["id"] for t in json.loads(done.stdout)["tokens"]] == [
        i for i in ids if i not in smollm2.stop_ids
    ]
    raw = run("generate", question, "--max-new-tokens", "8")  # the default: continue the text
    assert raw.returncode == 0, raw.stderr
    if raw.stdout.strip() == question:  # the model ended its turn at once: the hint says what to do
        assert "add --chat to ask it a question." in raw.stderr


@needs_smollm2
def test_generate_continues_the_text_by_default(smollm2):
    """No template by default: "The capital of France is" goes on with " Paris", the likeliest next token."""
    text = "The capital of France is"
    done = run("generate", text, "--max-new-tokens", "3", "--json")
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)["tokens"][0]
    assert first["text"] == " Paris"
    assert first["id"] == int(np.argmax(smollm2.logits(smollm2.encode(text))[-1]))


@needs_smollm2
def test_logits_json_gives_token_id_logit_and_p_as_the_model_computes_them(smollm2):
    from attnlab.models.sampling import Sampling, cut

    text = "The capital of France is"
    done = run("logits", text, "--model", "smollm2", "--top", "5", "--temperature", "0.7", "--top-k", "40",
               "--top-p", "0.9", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    ids = smollm2.encode(text)
    logits = smollm2.logits(ids)[-1]
    c = cut(logits, Sampling(temperature=0.7, top_k=40, top_p=0.9))
    order = np.argsort(-logits.astype(np.float64), kind="stable")[:5]
    assert [e["id"] for e in body["entries"]] == order.tolist()
    assert [set(e) for e in body["entries"]] == [{"token", "id", "logit", "p", "p_model"}] * 5
    assert [e["logit"] for e in body["entries"]] == [float(logits[i]) for i in order]
    assert [e["p"] for e in body["entries"]] == [float(c.p[i]) for i in order]
    assert body["entries"][0]["token"] == " Paris" and body["position"] == len(ids) - 1
    assert [r["control"] for r in body["removed"]] == ["temperature", "top_k", "top_p"]
    assert body["removed"][1]["count"] == 49152 - 40


@needs_smollm2
def test_logits_at_a_position_and_in_words(smollm2):
    done = run("logits", "The capital of France is", "--top", "3", "--position", "2")
    assert done.returncode == 0, done.stderr
    first = "After token 2 ␣of (of a 49,152-token vocabulary), the likeliest next tokens are:"
    assert done.stdout.startswith(first)
    assert "In the text the next token is ␣France, at rank" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "minilm"], "minilm is an encoder: it does not predict text; use --model smollm2"),
        (["--top", "0"], "--top 0 is out of range; use 1..100"),
        (["--top-p", "0"], "top_p must be in (0, 1], got 0.0"),
        (["--temperature", "-1"], "temperature must be >= 0, got -1.0"),
    ],
)
def test_logits_refuses_bad_arguments_in_one_line(args, message):
    done = run("logits", "The cat sat.", *args)
    assert done.returncode == 2
    assert done.stderr.strip() == f"attnlab: error: {message}"
