"""What the labs ask of a model without running it: the registry's shapes, and SmolLM2's RoPE from its GGUF,
which is the RoPE the loaded model runs."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.errors import FieldError
from attnlab.models import registry
from attnlab.models.labs.facts import rope, shapes
from shipped_shapes import SHAPES


@pytest.mark.models  # the shapes are read from the model's own files
@pytest.mark.parametrize("name", ["smollm2", "minilm"])
def test_shapes_are_the_registrys(name):
    s = registry.spec(name)
    assert shapes(name) == {
        "model": name, "title": s.title, "called": s.called, "architecture": s.architecture,
        "layers": s.n_layer, "query_heads": s.n_head, "kv_heads": s.n_kv_head, "head_dim": s.d_head,
    } == SHAPES[name]  # what the labs' tests record (tests/lab/connections/synthetic.py)  # fmt: skip


def test_a_found_models_shapes_are_read_from_its_config(found_models):
    from hubkit import QWEN2

    assert shapes(QWEN2) == {"model": QWEN2, "title": QWEN2, "called": QWEN2, "architecture": "decoder",
                             "layers": 2, "query_heads": 4, "kv_heads": 2, "head_dim": 16}  # fmt: skip


def test_an_unknown_model_is_refused_at_model():
    with pytest.raises(FieldError) as err:
        shapes("nope")
    assert err.value.loc == ("model",)


@pytest.mark.models
def test_smollm2s_rope_is_the_one_the_model_runs(smollm2):
    facts = rope("smollm2")
    frequencies = facts.pop("frequencies")
    assert facts == {
        "model": "smollm2", "title": "SmolLM2-135M-Instruct", "called": "SmolLM2", "source": "gguf",
        "base": 100000.0, "head_dim": 64, "context": 8192, "convention": "interleaved", "scaling": None,
    }  # fmt: skip
    from attnlab.engine.forward import _rope

    turns = _rope(smollm2.arch)  # the RoPE the forward rotates with
    assert (turns.base, turns.head_dim, turns.convention) == (
        facts["base"],
        facts["head_dim"],
        facts["convention"],
    )
    assert smollm2.arch.n_ctx == facts["context"] and facts["head_dim"] == registry.spec("smollm2").d_head
    np.testing.assert_array_equal(
        turns.inverse_frequencies, facts["base"] ** (-2.0 * np.arange(32) / 64)
    )
    assert frequencies == [float(f) for f in turns.inverse_frequencies]


@pytest.mark.parametrize("which", ["qwen2 folder", "smollm2 gguf", "llama3 folder"])
def test_any_models_rope_is_the_one_it_runs(families, which):
    from attnlab.engine.forward import _rope
    from attnlab.models.families.checkpoint import open_path

    name, kind = which.split()
    path = families.folder(name) if kind == "folder" else families.gguf(name, "F32")
    entry = registry.resolve(str(path))
    try:
        facts = rope(entry)
        turns = _rope(open_path(path).arch)  # the RoPE the loaded model's forward rotates with
        assert facts["frequencies"] == [float(f) for f in turns.inverse_frequencies]
        assert (facts["convention"], facts["source"]) == (
            {"folder": ("half", "safetensors"), "gguf": ("interleaved", "gguf")}[kind])  # fmt: skip
        assert facts["scaling"] == ("llama3" if name == "llama3" else None)
    finally:
        registry.unregister(entry)


def test_a_model_without_rope_is_refused_at_model(families):
    entry = registry.resolve(str(families.folder("gpt2")))
    try:
        with pytest.raises(FieldError) as err:
            rope(entry)
        assert err.value.loc == ("model",) and "does not rotate its queries and keys" in err.value.problem
    finally:
        registry.unregister(entry)
