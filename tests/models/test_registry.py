"""One registry: a spec per model, shipped or found, its facts read from its own files.

A fake tiny spec, registered here, appears in the API, schema, jobs and CLI. The models found in a
fake Hugging Face cache (tests/hubkit.py) are entries too, with their shapes and limits read from
their config or GGUF header; a path given on this computer becomes an entry; a path given to the
API's checks is refused by name.
"""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from attnlab import cli
from attnlab.models import registry, toy
from attnlab.models.families.checkpoint import open_path
from attnlab.models.jobs.line import Jobs
from attnlab.web.app import create_app
from attnlab.web.realmodel import line
from hubkit import GGUF, GPT2, QWEN2, SHORT, SHORT_CONTEXT

WAIT_S = 60  # a bound on a hang only


@pytest.fixture
def toy_spec(monkeypatch):
    spec = registry.register(toy.toy_spec("toy"))
    jobs = Jobs(process=False)  # the registry's own loader and tokenizer: nothing else knows "toy"
    monkeypatch.setattr(line, "JOBS", jobs)
    yield spec
    jobs.shutdown()
    registry.unregister("toy")


def test_the_shipped_models_are_entries_of_their_families_known_without_their_files():
    assert registry.names()[:2] == registry.shipped() == ("minilm", "smollm2")
    s, m = registry.spec("smollm2"), registry.spec("minilm")
    assert (s.family, s.origin, s.architecture, s.generates, s.instruct) == ("llama", "shipped", "decoder",
                                                                            True, True)  # fmt: skip
    assert (m.family, m.architecture, m.generates) == ("bert", "encoder", False)
    assert registry.decoders()[0] == "smollm2"
    with pytest.raises(ValueError, match=r"^model 'gpt9' is unknown; use one of minilm, smollm2$"):
        registry.spec("gpt9")


@pytest.mark.models
def test_the_shipped_models_shapes_and_caps_come_from_their_files():
    s, m = registry.spec("smollm2"), registry.spec("minilm")
    assert (s.n_layer, s.n_head, s.n_kv_head, s.d_head) == (30, 9, 3, 64)
    assert s.kv_groups == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert s.facts().shapes.context == 8192 and s.max_tokens == 256  # the lab's cap is the smaller
    assert (m.n_layer, m.n_head, m.d_head, m.facts().shapes.context, m.max_tokens) == (6, 12, 32, 256, 256)
    assert s.chat and not m.chat and s.facts().dtype == "Q4_1"


def test_a_name_is_cut_with_its_quotes_and_a_path_is_named_as_a_path():
    with pytest.raises(ValueError) as error:
        registry.spec("x" * 100)
    assert str(error.value).startswith("model '" + "x" * 39 + "…' is unknown")
    with pytest.raises(ValueError) as error:
        registry.check_name("/home/me/models/Qwen2.5-0.5B")
    assert str(error.value).startswith("model '/home/me/models/Qwen2.5-0.5B' is a path on the server; "
                                       "the page opens models by name: one of minilm, smollm2")  # fmt: skip


def test_found_models_are_entries_with_facts_from_their_headers(found_models, families):
    assert registry.names() == ("minilm", "smollm2", GPT2, QWEN2, SHORT, GGUF)  # found: by name
    assert set(registry.decoders()) == {"smollm2", GGUF, QWEN2, GPT2, SHORT}
    q = registry.spec(QWEN2)
    assert (q.family, q.origin, q.title, q.found.parameters, q.found.dtype, q.chat) == (
        "qwen2", "hf-cache", QWEN2, 149248, "float32", True)  # fmt: skip
    a = open_path(families.folder("qwen2")).arch
    assert (q.n_layer, q.n_head, q.n_kv_head, q.d_head) == (a.n_layer, a.n_head, a.n_kv_head, a.d_head)
    assert q.max_tokens == min(256, a.n_ctx) == 128
    g = registry.spec(GGUF)
    assert (g.family, g.found.dtype, g.n_layer, g.chat) == ("llama", "Q8_0", 2, True)
    assert not registry.spec(GPT2).chat and registry.spec(GPT2).facts().shapes.norm == "layer"
    assert [s.name for s in registry.scan().skipped] == ["tiny/broken"]


def test_limits_come_from_the_models_config(found_models):
    short = registry.spec(SHORT)
    assert short.facts().shapes.context == SHORT_CONTEXT and short.max_tokens == SHORT_CONTEXT
    from attnlab.models.jobs.texts import check_tokens

    over = rf"is \d+ tokens long for {SHORT}; .* at most {SHORT_CONTEXT} tokens"
    with pytest.raises(ValueError, match=over):
        check_tokens(SHORT, "word " * 40)


def test_a_found_model_loads_once_through_its_path(found_models):
    model = registry.get_model(QWEN2)
    assert model is registry.get_model(QWEN2) and model.name == QWEN2 and model.arch.family == "qwen2"
    assert registry.counter(QWEN2).tokens("Hello world") == model.to_str_tokens("Hello world")
    trace = model.trace("Hello world")
    assert trace.model == QWEN2 and trace.tokens == registry.token_strings(QWEN2, "Hello world")


def test_attnlab_load_opens_a_found_model_by_name_and_any_model_by_path(found_models, families):
    import attnlab

    model = attnlab.load(QWEN2)
    assert model.name == QWEN2 and model is not registry.get_model(QWEN2)  # a fresh instance
    assert attnlab.load(families.folder("gpt2")).arch.family == "gpt2"


def test_the_found_models_follow_the_places_searched(found_models, monkeypatch, tmp_path):
    assert QWEN2 in registry.SPECS
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    assert registry.names() == ("minilm", "smollm2") and QWEN2 not in registry.SPECS


def test_a_models_folder_adds_its_models_and_a_taken_name_is_made_unique(found_models, families, tmp_path):
    import shutil

    shutil.copytree(families.folder("gpt2"), tmp_path / "smollm2")  # a folder named like a shipped model
    shutil.copytree(families.folder("qwen2"), tmp_path / "mine" / "qwen")
    registry.use_models_dir(tmp_path)
    assert {"smollm2@models-dir", "mine/qwen"} <= set(registry.names())
    assert registry.spec("smollm2").origin == "shipped"  # the shipped name stays the shipped model's
    assert registry.spec("smollm2@models-dir").family == "gpt2"


def test_a_path_on_this_computer_becomes_an_entry(families, tmp_path):
    folder = str(families.folder("gpt2"))
    try:
        assert registry.resolve(folder) == folder and registry.spec(folder).origin == "path"
        assert registry.title(folder) == "gpt2" and registry.spec(folder).family == "gpt2"
        assert registry.get_model(folder).arch.family == "gpt2"
        with pytest.raises(ValueError, match=r"^.*/nothing is not there; give a folder with config.json"):
            registry.resolve(str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match=r"is 'nope', which is neither a model name"):
            registry.resolve("nope")
    finally:
        registry.unregister(folder)


def test_a_registered_spec_is_described_by_the_api_and_listed_in_the_schema(toy_spec):
    with TestClient(create_app()) as client:
        by_name = {m["name"]: m for m in client.get("/api/models").json()["models"]}
        assert by_name["toy"]["title"] == "Toy decoder" and by_name["toy"]["generates"]
        about = client.get("/api/models/about", params={"model": "toy"}).json()
        assert (about["max_tokens"], about["n_layer"], about["n_head"], about["d_head"]) == (8, 2, 2, 4)
        schema = client.get("/api/openapi.json").json()["components"]["schemas"]
        assert "toy" in schema["TraceIn"]["properties"]["model"]["enum"]
        r = client.post("/api/models/toy/tokens", json={"text": "a b c"})
        assert r.json() == {"model": "toy", "count": 3, "cap": 8, "fits": True, "tokens": ["a", "b", "c"],
                            "shown": [{"label": t, "exact": t} for t in "abc"],
                            "message": "3 of 8 tokens"}  # fmt: skip


def test_a_registered_spec_runs_as_a_job_with_its_own_cap(toy_spec):
    with TestClient(create_app()) as client:
        r = client.post("/api/models/jobs", json={"model": "toy", "text": "a b c d e f g h i"})
        assert r.status_code == 422 and r.json()["detail"][0]["msg"].startswith(
            "Text is 9 tokens long for Toy decoder; the Real model view takes at most 8"  # its title
        )
        job = client.post("/api/models/jobs", json={"model": "toy", "text": "a b c d"}).json()
        deadline = time.monotonic() + WAIT_S
        while (job := client.get(f"/api/models/jobs/{job['id']}").json())["status"] != "done":
            assert time.monotonic() < deadline and job["status"] != "error", job
            time.sleep(0.01)
        assert job["stage_display"] == "Done: 2 layers" and job["result"]["has_logits"]
        nxt = client.get(f"/api/models/jobs/{job['id']}/next/3?top=3").json()
        assert [e["token"] for e in nxt["entries"]][0].startswith("w") and nxt["vocab"] == 16
        gen = client.post("/api/models/generate", json={"model": "toy", "prompt": "hi", "max_new_tokens": 2})
        assert gen.status_code == 202 and gen.json()["chat"] is False  # not an instruct model
        chat = client.post("/api/models/generate", json={"model": "toy", "prompt": "hi", "chat": True})
        assert chat.status_code == 422 and chat.json()["detail"][0]["msg"] == (
            "Ask it as a chat message is not offered: Toy decoder has no chat template, so it has no chat; "
            "continue the text instead")  # fmt: skip


def test_a_registered_spec_is_known_to_the_cli(toy_spec, capsys):
    assert cli.main(["heads", "a b c", "--model", "toy", "--json", "--layer", "1"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["model"] == "toy" and body["tokens"] == ["a", "b", "c"] and body["n_layer"] == 2
    assert cli.main(["generate", "hi", "--model", "toy", "--max-new-tokens", "2", "--json"]) == 0
    assert [t["text"] for t in json.loads(capsys.readouterr().out)["tokens"]] == [" w0", " w1"]
