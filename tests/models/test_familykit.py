"""The tiny models (tests/familykit.py): what each has on, that transformers reads them, same bytes.

Other tests take these models as their subjects, so what the kit promises is checked here:
every family's options as its docstring lists them, every GGUF read by transformers with
``gguf_file=`` (the F32 one equal to the folder, the quantised ones equal to gguf's own
dequantisation), and the same files from a fresh process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from familykit import GGUF_FAMILIES, GGUF_KINDS, RECIPES, digest

pytestmark = pytest.mark.oracle


def _load(path: Path, **kwargs):
    import torch
    from transformers import AutoModel, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    causal = "gguf_file" in kwargs or RECIPES[path.name.split("-")[0]].causal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        maker = AutoModelForCausalLM if causal else AutoModel
        return maker.from_pretrained(str(path), dtype=torch.float32, **kwargs).eval()


def test_each_family_has_its_options_on(families):
    c = {name: _load(families.folder(name)).config for name in RECIPES}
    assert c["smollm2"].num_key_value_heads == 2 and c["smollm2"].tie_word_embeddings
    assert c["llama3"].rope_parameters["rope_type"] == "llama3" and c["llama3"].num_key_value_heads == 1
    assert not c["llama3"].tie_word_embeddings
    assert c["mistral"].sliding_window == 4
    assert c["qwen2"].tie_word_embeddings and c["qwen3"].head_dim == 32 != 64 // 4
    assert c["gemma"].num_key_value_heads == 1 and c["gemma"].hidden_activation == "gelu_pytorch_tanh"
    g2 = c["gemma2"]
    assert (g2.attn_logit_softcapping, g2.final_logit_softcapping, g2.sliding_window) == (50.0, 30.0, 4)
    assert g2.layer_types == ["sliding_attention", "full_attention", "sliding_attention"]
    assert g2.query_pre_attn_scalar == g2.head_dim == 256
    g3 = c["gemma3"]
    assert g3.query_pre_attn_scalar == 16 != g3.head_dim
    assert {k: v["rope_theta"] for k, v in g3.rope_parameters.items()} == {
        "sliding_attention": 10000.0,
        "full_attention": 1000000.0,
    }
    assert c["gpt2"].n_positions == 1024 and c["gpt2"].activation_function == "gelu_new"
    assert c["roberta"].pad_token_id == 1 and c["distilbert"].model_type == "distilbert"
    for name, config in c.items():
        layers = getattr(config, "num_hidden_layers", None) or getattr(config, "n_layer", None)
        assert layers in (2, 3) and getattr(config, "hidden_size", getattr(config, "dim", None)) == 64, name


def test_the_weights_and_their_modules_are_what_the_families_need(families):
    qwen2 = dict(_load(families.folder("qwen2")).named_parameters())
    assert "model.layers.0.self_attn.q_proj.bias" in qwen2
    assert "model.layers.0.self_attn.o_proj.bias" not in qwen2
    qwen3 = dict(_load(families.folder("qwen3")).named_parameters())
    assert qwen3["model.layers.0.self_attn.q_norm.weight"].shape == (32,)
    phi3 = dict(_load(families.folder("phi3")).named_parameters())
    assert phi3["model.layers.0.self_attn.qkv_proj.weight"].shape == (3 * 64, 64)
    assert phi3["model.layers.0.mlp.gate_up_proj.weight"].shape == (2 * 256, 64)
    gemma = dict(_load(families.folder("gemma")).named_parameters())
    norm = gemma["model.layers.0.input_layernorm.weight"].detach().numpy()
    assert abs(norm.mean()) < 0.1  # stored as w, used as 1 + w
    smollm2 = dict(_load(families.folder("smollm2")).named_parameters())
    assert abs(smollm2["model.layers.0.input_layernorm.weight"].detach().numpy().mean() - 1) < 0.1


def test_the_low_precision_folders_hold_the_float32_values_rounded(families):
    import torch

    full = dict(_load(families.folder("smollm2")).named_parameters())
    for dtype in ("bfloat16", "float16"):
        folder = families.folder("smollm2", dtype)
        assert json.loads((folder / "config.json").read_text())["dtype"] == dtype
        model = _load(folder)  # widened to float32 on loading: exactly
        for name, p in model.named_parameters():
            assert torch.equal(p, full[name].to(getattr(torch, dtype)).float()), (dtype, name)


@pytest.mark.parametrize("name", GGUF_FAMILIES)
def test_transformers_reads_every_gguf_and_the_f32_one_is_the_folder(families, name):
    import torch
    from gguf import GGUFReader
    from gguf.quants import dequantize

    folder = families.model(name)[0].state_dict()
    ids = torch.tensor([[1, 5, 9, 17, 33, 65]])
    for kind in GGUF_KINDS:
        path = families.gguf(name, kind)
        model = _load(path.parent, gguf_file=path.name)
        logits = model(ids).logits
        assert torch.isfinite(logits).all() and logits.shape == (1, 6, model.config.vocab_size), kind
        loaded = model.state_dict()
        if kind == "F32":
            for key, value in folder.items():
                if name == "gemma2" and key.endswith("norm.weight"):  # stored as 1 + w, read as (1 + w) - 1
                    assert torch.allclose(loaded[key], value, rtol=0, atol=2**-23), key
                else:
                    assert torch.equal(loaded[key], value), key
        if kind == "K":  # the random blocks, read by gguf's own dequantisation
            reader = GGUFReader(str(path))
            downs = [t for t in reader.tensors if t.name.endswith("ffn_down.weight")]
            assert [t.tensor_type.name for t in downs] == ["Q4_K", "Q5_K", "Q6_K"][: len(downs)]
            for t in downs:
                layer = int(t.name.split(".")[1])
                ends = ("down_proj.weight", "mlp.c_proj.weight")
                key = next(k for k in loaded if f".{layer}." in k and k.endswith(ends))
                values = dequantize(t.data, t.tensor_type).reshape(tuple(reversed(t.shape.tolist())))
                if name == "gpt2":  # Conv1D: transformers transposes back
                    values = values.T
                np.testing.assert_array_equal(loaded[key].numpy(), values)
                assert 0.05 < np.abs(values).max() < 20


def test_a_fresh_process_builds_the_same_bytes(families, tmp_path):
    program = (
        "import sys; sys.path.insert(0, 'tests')\n"
        "from pathlib import Path\n"
        "import familykit as k\n"
        f"f = k.Families(Path({str(tmp_path)!r}))\n"
        "print(k.digest(f.folder('gemma2')), k.digest(f.folder('bert')))\n"
        "print(k.digest(f.gguf('gpt2', 'Q4_1').parent))\n"
    )
    root = Path(__file__).resolve().parents[2]
    run = [sys.executable, "-c", program]
    done = subprocess.run(run, cwd=root, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    here = [digest(families.folder("gemma2")), digest(families.folder("bert"))]
    gguf = families.gguf("gpt2", "Q4_1")
    lonely = tmp_path / "here"
    lonely.mkdir()
    (lonely / gguf.name).write_bytes(gguf.read_bytes())
    there = done.stdout.split()
    assert there[:2] == here
    assert there[2] == digest(lonely)
