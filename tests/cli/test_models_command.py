"""Any model on the command line: ``attnlab models``, ``--model PATH``, ``--models-dir DIR``, refusals.

The models are the tiny ones of every family (tests/familykit.py), in a fake Hugging Face cache
(tests/hubkit.py) or given by their path. Every command that runs a model takes ``--model`` as a
name or a path; what it prints is the model's own numbers (checked against the model opened
directly). A path that is no model, or a broken file, is refused in one line with status 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab import cli
from attnlab.models import registry
from attnlab.models.families.checkpoint import open_path
from hubkit import GPT2, QWEN2, SHORT, SHORT_CONTEXT

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))


@pytest.fixture
def run(capsys):
    """``attnlab ARGS`` in this process: (status, stdout, stderr); path entries it made are removed after."""
    before = set(registry.names())

    def call(*args: str) -> tuple[int, str, str]:
        status = cli.main(list(args))
        out = capsys.readouterr()
        return status, out.out, out.err

    yield call
    for name in set(registry.names()) - before:
        registry.unregister(name)


@pytest.mark.models  # the list reads the shipped models' headers too
def test_models_lists_what_was_found_and_what_was_skipped(found_models, run):
    status, out, err = run("models")
    lines = out.splitlines()
    assert status == 0 and err == ""
    assert lines[0] == "6 models attnlab can open; 1 file skipped:"
    assert lines[1] == "  minilm: bert, 22,713,728 parameters, mixed (shipped with attnlab)"
    assert lines[2] == "  smollm2: llama, 134,515,008 parameters, Q4_1, chat (shipped with attnlab)"
    assert "  tiny/qwen2: qwen2, 149,248 parameters, float32, chat (in the Hugging Face cache)" in lines
    assert "  tiny/gpt2: gpt2, 191,296 parameters, float32 (in the Hugging Face cache)" in lines
    assert ("  tiny/smollm2-gguf/smollm2-Q8_0.gguf: llama, 148,800 parameters, Q8_0, chat "
            "(in the Hugging Face cache)") in lines  # fmt: skip
    assert lines[-2].startswith("  tiny/broken is skipped: model.safetensors.index.json lists weights in ")
    assert lines[-1] == f"Searched the Hugging Face cache, {found_models}. Nothing is downloaded."


@pytest.mark.models
def test_models_json_is_the_same_list(found_models, run):
    status, out, _ = run("models", "--json")
    body = json.loads(out)
    by_name = {m["name"]: m for m in body["models"]}
    assert status == 0 and list(by_name)[:2] == ["minilm", "smollm2"]
    assert by_name[QWEN2] == {
        "name": QWEN2, "title": QWEN2, "family": "qwen2", "architecture": "decoder", "origin": "hf-cache",
        "parameters": 149248, "dtype": "float32", "chat": True, "installed": True,
        "path": str(found_models / "models--tiny--qwen2" / "snapshots" / ("0" * 40)),
        "text": "tiny/qwen2: qwen2, 149,248 parameters, float32, chat (in the Hugging Face cache)",
    }  # fmt: skip
    assert by_name["smollm2"]["path"] is None and by_name["smollm2"]["dtype"] == "Q4_1"
    [skipped] = body["skipped"]
    assert (skipped["name"], skipped["kind"]) == ("tiny/broken", "missing_shard")
    assert skipped["why"].startswith("tiny/broken is skipped: ")
    assert skipped["path"].endswith("snapshots/" + "0" * 40)
    assert body["searched"] == [str(found_models)]


def test_heads_takes_a_path_and_prints_the_models_own_attention(families, run):
    folder = str(families.folder("qwen2"))
    status, out, err = run("heads", "Hello world", "--model", folder, "--json", "--layer", "1", "--head", "2")
    assert status == 0, err
    body = json.loads(out)
    model = open_path(folder)
    _, cache = model.run_with_cache(model.to_tokens("Hello world"))
    want = np.asarray(cache["blocks.1.attn.hook_pattern"])[2]
    assert body["model"] == folder and body["tokens"] == model.to_str_tokens("Hello world")
    np.testing.assert_allclose(np.nan_to_num(np.array(body["weights"], dtype=float)), want, rtol=0, atol=1e-6)
    status, out, _ = run("heads", "Hello world", "--model", folder)
    assert status == 0 and out.splitlines()[0].startswith("qwen2")  # the model named by its folder


def test_logits_and_generate_take_a_gguf_path(families, run):
    path = str(families.gguf("gpt2", "F32"))
    model = open_path(path)
    status, out, err = run("logits", "Hello world", "--model", path, "--json", "--top", "3")
    assert status == 0, err
    logits = model.logits(model.to_tokens("Hello world"))[-1]
    top = [int(i) for i in np.argsort(-logits, kind="stable")[:3]]
    assert [e["id"] for e in json.loads(out)["entries"]] == top
    status, out, err = run("generate", "Hello", "--model", path, "--max-new-tokens", "5", "--json")
    assert status == 0, err
    greedy = [p.id for p in model.generate("Hello", max_new_tokens=5)]
    assert [t["id"] for t in json.loads(out)["tokens"]] == greedy


def test_a_model_without_a_chat_template_has_no_chat_on_the_command_line(families, run):
    status, _, err = run("generate", "Hello", "--model", str(families.folder("gpt2")), "--chat")
    assert status == 2 and err == (
        "attnlab: error: --chat is not offered: gpt2 has no chat template, so it has no chat; continue the "
        "text instead\n")  # fmt: skip


def test_kv_cache_takes_a_path_and_measures_its_caches(families, run):
    folder = str(families.folder("qwen2"))
    status, out, err = run("kv-cache", "--model", folder, "--tokens", "100", "--json")
    assert status == 0, err
    body = json.loads(out)
    a = open_path(folder).arch
    assert (body["model"]["layers"], body["model"]["kv_heads"]) == (a.n_layer, a.n_kv_head)
    assert body["per_token"]["gqa"] == 2 * a.n_layer * a.n_kv_head * a.d_head * 2
    status, out, err = run("kv-cache", "The cat", "--model", folder, "--tokens", "3", "--json")
    assert status == 0, err
    counted = json.loads(out)["counted"]
    assert counted["equal"] and counted["measured"] == counted["counted"]
    status, out, _ = run("kv-cache", "The cat", "--model", folder, "--tokens", "3")
    assert out.startswith("Live: qwen2 read your prompt")


def test_speculate_takes_a_model_and_gives_plain_greedys_tokens(families, run):
    path = str(families.folder("smollm2"))
    text = "one two three one two three one two"
    status, out, err = run("speculate", text, "--model", path, "--max-new-tokens", "6", "--json")
    assert status == 0, err
    body = json.loads(out)
    assert body["inputs"]["model"] == path
    model = open_path(path)
    greedy = [p.id for p in model.generate(text, max_new_tokens=6) if p.finish != "end_of_turn"]
    run = body["data"]["run"]
    assert run["identical"] and run["speculative_ids"] == run["plain_ids"] == greedy


def test_models_dir_offers_a_folders_models_by_name(families, tmp_path, run, monkeypatch):
    monkeypatch.setenv("ATTNLAB_MODELS_DIR", "")  # none (restored after the test)
    shutil.copytree(families.folder("gpt2"), tmp_path / "mine" / "gpt")
    status, out, err = run("heads", "Hello", "--model", "mine/gpt", "--models-dir", str(tmp_path), "--json")
    assert status == 0, err
    assert json.loads(out)["model"] == "mine/gpt"
    status, _, err = run("generate", "Hi", "--model", "mine/gpt", "--max-new-tokens", "2")
    assert status == 0, err  # the folder is still searched: ATTNLAB_MODELS_DIR, as a worker would inherit


def test_a_found_models_limit_is_its_own_context(found_models, run):
    status, _, err = run("generate", "word " * 40, "--model", SHORT, "--max-new-tokens", "2")
    assert status == 2 and f"at most {SHORT_CONTEXT} tokens" in err and SHORT in err
    status, out, err = run("heads", "Hello", "--model", GPT2, "--json")
    assert status == 0 and json.loads(out)["model"] == GPT2
    assert run("heads", "Hello", "--model", QWEN2)[0] == 0


@pytest.mark.parametrize("case", ["missing", "no_tokenizer", "truncated", "wrong_magic", "not_a_model"])
def test_a_path_that_cannot_be_opened_is_one_line(families, tmp_path, run, case):
    if case == "missing":
        path, said = tmp_path / "nothing", "is not there"
    elif case == "no_tokenizer":
        path = shutil.copytree(families.folder("qwen2"), tmp_path / "m")
        (path / "tokenizer.json").unlink()
        said = "has no tokenizer.json"
    elif case == "truncated":
        path = shutil.copytree(families.folder("qwen2"), tmp_path / "m")
        data = (path / "model.safetensors").read_bytes()
        (path / "model.safetensors").write_bytes(data[: len(data) // 2])
        said = "cannot be opened: model.safetensors is cut short"
    elif case == "wrong_magic":
        path = tmp_path / "x.gguf"
        path.write_bytes(b"NOPE" + bytes(100))
        said = "x.gguf"
    else:
        path = tmp_path / "weights.safetensors"
        path.write_bytes(b"\0" * 16)
        said = "is neither a folder nor a .gguf file"
    status, out, err = run("heads", "Hello", "--model", str(path))
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"attnlab: error: --model {path}") and said in err, err
    assert str(path) not in registry.names()  # nothing was registered, nothing loaded


def test_the_real_entry_point_takes_a_path(families):
    folder = str(families.folder("gpt2"))
    done = subprocess.run([ATTNLAB, "heads", "Hello world", "--model", folder, "--json"], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tokens"] == open_path(folder).to_str_tokens("Hello world")


def test_the_circuits_commands_take_a_path_through_the_shared_arguments(families, tmp_path, run):
    folder = str(families.folder("qwen2"))
    status, out, err = run("lens", "The cat sat on the", "--model", folder, "--json")
    assert status == 0, err
    model = open_path(folder)
    logits = model.logits(model.to_tokens("The cat sat on the"))[-1]
    assert json.loads(out)["answer"]["id"] == int(np.argmax(logits))
    texts = tmp_path / "texts.jsonl"
    texts.write_text('{"text": "The cat sat on the mat. The cat sat."}\n')
    status, out, err = run("census", "--model", folder, "--texts", str(texts), "--workers", "1")
    assert status == 0, err  # its worker process opens the path too
    assert out.startswith("qwen2: every head's scores over 1 text")


def test_serve_takes_models_dir_for_the_page_and_its_worker(monkeypatch, tmp_path):
    from attnlab.cli import build_parser
    from attnlab.cli.modelargs import prepare

    monkeypatch.setenv("ATTNLAB_MODELS_DIR", "")  # none (restored after the test)
    args = build_parser().parse_args(["serve", "--models-dir", str(tmp_path), "--no-browser"])
    prepare(args)
    assert registry.models_dir() == tmp_path  # in the environment: the worker process inherits it
    monkeypatch.setenv("ATTNLAB_MODELS_DIR", "")
    args = build_parser().parse_args(["--models-dir", str(tmp_path), "--port", "0"])  # plain `attnlab`
    prepare(args)
    assert registry.models_dir() == tmp_path
