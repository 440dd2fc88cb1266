"""Opening a model from disk: ``attnlab.load(PATH)`` on folders and GGUF files of every family.

What a loaded model offers (the hooks API, generation, stop tokens, its chat form), the weights
as stored (16-bit folders on their own numbers, shards and split GGUFs giving the same bits),
the settings a file leaves out (the family's defaults, as transformers and llama.cpp take them),
and every refusal: an unknown family, a setting attnlab would not compute exactly, a broken file,
impossible shapes, a model too large for the machine, a path that is no model. Each refusal is
one line naming the path, and nothing is loaded.
"""

from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest
from hfhooks import close, hf_model

import attnlab
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.hooks import block_names
from attnlab.models import file_errors
from attnlab.models.chat import ChatTemplate, NoChat
from attnlab.models.families import checkpoint, store
from attnlab.models.families.errors import (
    BadModel,
    BadSetting,
    ImpossibleShapes,
    MissingShard,
    MissingTensor,
    NotAModel,
    TensorShape,
    TooLarge,
    UnknownFamily,
    UnsupportedSetting,
)
from attnlab.models.model import Decoder, Encoder
from familykit import RECIPES

pytestmark = pytest.mark.models

TEXT = "The quick brown fox jumps over the lazy dog. 42 and 3.14!"


GONE = object()  # a config change that removes the key (None writes null)


def copy(families, name: str, tmp_path, *, config=None, drop=()):
    """A copy of ``name``'s folder in ``tmp_path`` with ``config`` changes (:data:`GONE` removes a key)."""
    folder = tmp_path / name
    shutil.copytree(families.folder(name), folder)
    if config:
        c = json.loads((folder / "config.json").read_text())
        for key, value in config.items():
            if value is GONE:
                c.pop(key, None)
            else:
                c[key] = value
        (folder / "config.json").write_text(json.dumps(c))
    for file in drop:
        (folder / file).unlink()
    return folder


def one_line(error: BaseException, path) -> str:
    text = str(error)
    assert "\n" not in text and text.startswith(str(path)), text
    return text


# -- what a loaded model is and offers ---------------------------------------------------------------


def test_attnlab_load_opens_a_folder_as_its_family_on_the_path_asked(families):
    folder = families.folder("qwen2")
    model = attnlab.load(folder)
    assert isinstance(model, Decoder) and model.name == "qwen2" and model.source == folder
    assert model.arch.family == "qwen2" and model.path == "float32"  # a float32 file: float32, auto
    a, mlp = model.weights.blocks[0].attn, model.weights.blocks[0].mlp
    assert isinstance(a.w_q, np.ndarray) and not a.w_q.flags.writeable
    # by rows, q|k|v and gate|up side by side in one read-only array each: one product a group
    assert a.w_q.base is a.w_k.base is a.w_v.base and a.w_q.base.flags.c_contiguous
    assert not a.w_q.base.flags.writeable and mlp.w_gate.base is mlp.w_up.base
    assert a.w_o.flags.c_contiguous and mlp.w_down.flags.c_contiguous
    from safetensors.numpy import load_file

    stored_q = load_file(str(folder / "model.safetensors"))["model.layers.0.self_attn.q_proj.weight"]
    assert a.w_q.tobytes() == np.ascontiguousarray(stored_q.T).tobytes()  # the file's numbers, laid out
    stored = attnlab.load(str(folder), weights="stored")
    assert stored.path == "stored" and isinstance(stored.weights.blocks[0].attn.w_q, QuantMatrix)
    wide = model.with_path("float64")
    assert wide.path == "float64" and wide.dtype == np.float64 and wide.forward([5, 6]).dtype == np.float64
    close(wide.forward(model.to_tokens(TEXT)), model.forward(model.to_tokens(TEXT)), rel=2e-6)
    with pytest.raises(FieldError) as error:
        attnlab.load(folder, weights="q8")
    assert error.value.loc == ("weights",) and "'stored'" in str(error.value) and "'q8'" in str(error.value)


@pytest.mark.parametrize("name", [*RECIPES, "qwen2-K", "gpt2-Q4_1", "gemma2-Q5_0"])
def test_every_loaded_model_has_the_hooks_api(families, name):
    file = families.gguf(*name.split("-")) if "-" in name else families.folder(name)
    model = attnlab.load(file)
    ids = model.to_tokens(TEXT)
    assert ids == model.tokenizer.encode(TEXT).ids
    pieces = model.to_str_tokens(TEXT)
    assert len(pieces) == len(ids) and pieces == model.to_str_tokens(ids)
    n = block_names(1)
    out, cache = model.run_with_cache(TEXT, names=[n.z, n.attn_out])
    assert set(cache) == {n.z, n.attn_out}
    assert cache[n.z].shape == (len(ids), model.arch.n_head, model.arch.d_head)

    def zero_head_0(z, hook):
        z = z.copy()
        z[:, 0] = 0.0
        return z

    ablated, seen = model.run_with_cache(TEXT, fwd_hooks=[(n.z, zero_head_0)], names=[n.z])
    assert np.all(seen[n.z][:, 0] == 0) and not np.allclose(ablated, out)
    assert np.array_equal(model.run_with_hooks(TEXT, fwd_hooks=[(n.z, zero_head_0)]), ablated)
    assert np.array_equal(model.run_with_hooks(TEXT), out)
    if isinstance(model, Decoder):
        assert out.shape == (len(ids), model.arch.d_vocab)
        pieces = list(model.generate(TEXT, max_new_tokens=5))
        assert 1 <= len(pieces) <= 5 and pieces[-1].finish in ("length", "end_of_turn")
        new = [p.id for p in pieces if p.finish != "end_of_turn"]
        assert "".join(p.text for p in pieces) == model.decode(new)
    else:
        assert isinstance(model, Encoder) and out.shape == (model.arch.d_model,)
        np.testing.assert_allclose(np.linalg.norm(model.encode([TEXT, "hello"]), axis=1), 1.0, rtol=1e-6)


STOPS = {  # each decoder's end of sequence and end-of-turn tokens
    "smollm2": {"<|im_end|>", "<|endoftext|>"},
    "llama3": {"<|eot_id|>", "<|end_of_text|>"},
    "mistral": {"</s>"},
    "qwen2": {"<|im_end|>", "<|endoftext|>"},
    "qwen3": {"<|im_end|>", "<|endoftext|>"},
    "phi3": {"<|end|>", "<|endoftext|>"},
    "gemma": {"<eos>", "<end_of_turn>"},
    "gemma2": {"<eos>", "<end_of_turn>"},
    "gemma3": {"<eos>", "<end_of_turn>"},
    "gpt2": {"<|endoftext|>"},
}


@pytest.mark.parametrize("name", list(STOPS))
def test_a_decoder_stops_at_its_end_of_sequence_and_end_of_turn_tokens(families, name):
    model = attnlab.load(families.folder(name))
    assert {model.tokenizer.id_to_token(i) for i in model.stop_ids} == STOPS[name]


def test_a_ggufs_stop_tokens_and_chat_come_from_its_metadata(families):
    folder, gguf = attnlab.load(families.folder("qwen2")), attnlab.load(families.gguf("qwen2", "Q8_0"))
    assert gguf.stop_ids == folder.stop_ids and gguf.path == "stored"
    assert isinstance(gguf.chat, ChatTemplate) and gguf.chat.source == RECIPES["qwen2"].template
    turn = [{"role": "user", "content": "Hi"}]
    assert gguf.chat_prompt(turn) == folder.chat_prompt(turn)


@pytest.mark.parametrize("name", ["smollm2", "qwen3", "gemma"])
def test_the_chat_prompt_is_transformers_apply_chat_template(families, name):
    from transformers import AutoTokenizer

    model = attnlab.load(families.folder(name))
    turn = [{"role": "user", "content": "What is attention?"}]
    want = AutoTokenizer.from_pretrained(str(families.folder(name))).apply_chat_template(
        turn, tokenize=False, add_generation_prompt=True)  # fmt: skip
    assert model.chat_prompt(turn) == want


def test_a_model_without_a_chat_template_has_no_chat(families):
    model = attnlab.load(families.folder("gpt2"))
    assert model.chat == NoChat(reason="none") and model.chat_template is None
    with pytest.raises(FieldError) as error:
        model.chat_prompt([{"role": "user", "content": "Hi"}])
    assert error.value.loc == ("messages",) and "gpt2 has no chat template" in str(error.value)


# -- weights as stored -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_16_bit_folder_runs_on_its_own_numbers_widened_exactly(families, dtype):
    import torch

    folder = families.folder("smollm2", dtype)
    model = attnlab.load(folder)
    assert model.path == "stored"  # auto: the file's 16-bit numbers
    w_q = model.weights.blocks[0].attn.w_q
    assert isinstance(w_q, QuantMatrix) and w_q.fmt == {"bfloat16": "BF16", "float16": "F16"}[dtype]
    hf = hf_model(folder)  # transformers widens to float32 on loading: exactly
    want = hf.model.layers[0].self_attn.q_proj.weight.detach().numpy().T
    assert np.array_equal(w_q.values(), want)
    widened = attnlab.load(folder, weights="float32")
    assert np.array_equal(widened.weights.blocks[0].attn.w_q, want)
    ids = model.to_tokens(TEXT)
    with torch.no_grad():
        logits = hf(torch.tensor([ids])).logits[0].numpy()
    close(model.forward(ids), logits)
    close(widened.forward(ids), logits)


def test_a_sharded_folder_is_the_single_files_model_bit_for_bit(families):
    sharded = families.sharded("qwen2")
    assert len(list(sharded.glob("*.safetensors"))) > 1
    one, many = attnlab.load(families.folder("qwen2")), attnlab.load(sharded)
    ids = one.to_tokens(TEXT)
    assert one.forward(ids).tobytes() == many.forward(ids).tobytes()


def test_a_shard_the_index_lists_that_is_missing_is_refused(families, tmp_path):
    folder = tmp_path / "sharded"
    shutil.copytree(families.sharded("qwen2"), folder)
    last = sorted(folder.glob("model-*.safetensors"))[-1]
    last.unlink()
    with pytest.raises(MissingShard) as error:
        attnlab.load(folder)
    assert error.value.shard == last.name and last.name in one_line(error.value, folder)


def test_a_split_gguf_is_the_whole_file_bit_for_bit(families, tmp_path):
    whole, first = families.gguf("qwen2", "Q8_0"), families.split_gguf("qwen2", "Q8_0")
    assert first.name.endswith("-00001-of-" + first.name[-10:])
    a, b = attnlab.load(whole), attnlab.load(first)
    ids = a.to_tokens(TEXT)
    assert a.forward(ids).tobytes() == b.forward(ids).tobytes()
    parts = sorted(first.parent.glob("*.gguf"))
    lonely = tmp_path / "split"
    lonely.mkdir()
    shutil.copy(parts[0], lonely / parts[0].name)
    with pytest.raises(MissingShard, match=parts[1].name):
        attnlab.load(lonely / parts[0].name)


# -- GGUF files of the other architectures -----------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["llama3", "mistral", "qwen3", "phi3", "gemma", "gemma3"])
def test_a_gguf_of_each_architecture_is_what_llama_cpp_reads_from_it(families, name):
    import torch
    from ggufkit import HF_SEMANTICS, write

    model = attnlab.load(write(families, name, "F32"))
    hf = hf_model(families.folder(name), **HF_SEMANTICS[name])
    ids = model.to_tokens(TEXT)
    logits, cache = model.run_with_cache(ids, names=lambda n: n.endswith("hook_pattern"))
    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_attentions=True)
    close(logits, out.logits[0].numpy(), what=name)
    for layer, a in enumerate(out.attentions):
        close(cache[block_names(layer).pattern], a[0].numpy(), what=f"{name} layer {layer}")
    quantised = write(families, name, "Q8_0")
    stored, widened = attnlab.load(quantised), attnlab.load(quantised, weights="float32")
    close(stored.forward(ids), widened.forward(ids), rel=2e-6, what=f"{name} Q8_0")


def test_a_ggufs_settings_come_from_its_metadata_and_the_familys_defaults(families):
    from ggufkit import write

    llama3 = attnlab.load(write(families, "llama3")).arch
    assert llama3.rope_pairs == "interleaved" and llama3.rope_scaling.kind == "factors"
    assert len(llama3.rope_scaling.factors) == llama3.d_head // 2 and max(llama3.rope_scaling.factors) == 8.0
    assert attnlab.load(write(families, "mistral")).arch.sliding_window is None  # llama.cpp runs none
    g3 = attnlab.load(write(families, "gemma3")).arch  # no local base, no layer pattern in the file
    assert (g3.rope_base, g3.rope_base_local, g3.local_layers, g3.sliding_window) == (1e6, 1e4, (0, 1, 2), 4)
    assert g3.attn_scale == 1 / np.sqrt(32) and g3.qk_norm and g3.post_norms
    g2 = attnlab.load(families.gguf("gemma2", "F32")).arch
    assert (g2.local_layers, g2.attn_softcap, g2.final_softcap, g2.sliding_window) == ((0, 2), 50.0, 30.0, 4)
    assert g2.embed_scale == 8.0 and g2.rope_pairs == "half"


# -- settings a file leaves out ---------------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("name", "left_out", "check"),
    [
        ("gemma3", {"layer_types": GONE, "rope_parameters": GONE, "sliding_window_pattern": GONE},
         lambda a: (a.local_layers, a.rope_base, a.rope_base_local) == ((0, 1, 2), 1e6, 1e4)),
        ("smollm2", {"rms_norm_eps": GONE, "rope_parameters": GONE, "num_key_value_heads": 2},
         lambda a: (a.norm_eps, a.rope_base) == (1e-6, 10000.0)),
        ("gemma2", {"layer_types": GONE, "attn_logit_softcapping": GONE, "final_logit_softcapping": GONE},
         lambda a: (a.local_layers, a.attn_softcap, a.final_softcap) == ((0, 2), 50.0, 30.0)),
        ("gemma2", {"attn_logit_softcapping": None, "final_logit_softcapping": None},  # written null: none
         lambda a: (a.attn_softcap, a.final_softcap, a.local_layers) == (None, None, (0, 2))),
        ("mistral", {"sliding_window": None}, lambda a: a.sliding_window is None),
        ("mistral", {"sliding_window": GONE}, lambda a: (a.sliding_window, a.local_layers) == (4096, None)),
        ("llama3", {"rope_parameters": GONE, "rope_theta": 500000.0,
                    "rope_scaling": {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                     "high_freq_factor": 4.0, "original_max_position_embeddings": 64}},
         lambda a: a.rope_scaling.kind == "llama3" and a.rope_base == 500000.0),
        ("gpt2", {"n_inner": GONE, "layer_norm_epsilon": GONE},
         lambda a: (a.d_ff, a.norm_eps) == (256, 1e-5)),
    ],
)  # fmt: skip
def test_a_setting_the_file_leaves_out_takes_the_familys_default_as_transformers_does(
    families, tmp_path, name, left_out, check
):
    import torch

    folder = copy(families, name, tmp_path, config=left_out)
    model = attnlab.load(folder)
    assert check(model.arch), model.arch
    ids = model.to_tokens(TEXT)
    with torch.no_grad():
        want = hf_model(folder)(torch.tensor([ids])).logits[0].numpy()
    close(model.forward(ids), want, what=name)


# -- refusals ------------------------------------------------------------------------------------------


def test_a_family_not_on_the_list_is_refused_with_its_name_and_the_list(families, tmp_path):
    folder = copy(families, "qwen2", tmp_path, config={"model_type": "mamba"})
    with pytest.raises(UnknownFamily) as error:
        attnlab.load(folder)
    text = one_line(error.value, folder)
    assert "'mamba'" in text and error.value.known == checkpoint.KNOWN
    assert all(f in text for f in ("gemma3", "gpt2", "phi3", "qwen3", "roberta", "distilbert"))
    unnamed = copy(families, "gpt2", tmp_path / "x", config={"model_type": GONE})
    with pytest.raises(UnknownFamily, match="names no family"):
        attnlab.load(unnamed)


def test_discovery_offers_the_families_that_open():
    from attnlab.models import discover

    assert discover.KNOWN == checkpoint.KNOWN
    assert set(discover.FAMILIES) == set(checkpoint.CONFIG_FAMILIES)


@pytest.mark.parametrize(
    ("name", "config", "key", "value"),
    [
        ("llama3", {"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0}},
         "rope_parameters.rope_type", "yarn"),
        ("phi3", {"rope_parameters": {"rope_type": "default", "rope_theta": 1e4,
                                      "partial_rotary_factor": 0.5}},
         "partial_rotary_factor", 0.5),
        ("gpt2", {"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx", True),
        ("smollm2", {"hidden_act": "mish"}, "hidden_act", "mish"),
        ("bert", {"position_embedding_type": "relative_key"}, "position_embedding_type", "relative_key"),
        ("gemma3", {"use_bidirectional_attention": True}, "use_bidirectional_attention", True),
    ],
)  # fmt: skip
def test_a_setting_attnlab_would_not_compute_exactly_is_refused_by_name(families, tmp_path, name, config, key,
                                                                        value):  # fmt: skip
    folder = copy(families, name, tmp_path, config=config)
    with pytest.raises(UnsupportedSetting) as error:
        attnlab.load(folder)
    assert (error.value.key, error.value.value) == (key, value)
    assert key in one_line(error.value, folder) and repr(value) in str(error.value)


@pytest.mark.parametrize(
    ("config", "error", "words"),
    [
        ({"num_attention_heads": 3, "head_dim": GONE}, ImpossibleShapes,
         "hidden_size 64 does not split into num_attention_heads 3 equal heads"),
        ({"num_key_value_heads": 3}, ImpossibleShapes, "num_attention_heads 4 query heads do not share "
                                                       "num_key_value_heads 3 KV heads evenly"),
        ({"head_dim": 15}, ImpossibleShapes, "head_dim 15 is odd"),
        ({"num_hidden_layers": 0}, BadSetting,
         "num_hidden_layers is 0; it must be a whole number of at least 1"),
        ({"hidden_size": "64"}, BadSetting, "hidden_size is '64'"),
        ({"rms_norm_eps": -1}, BadSetting, "rms_norm_eps is -1"),
        ({"vocab_size": GONE}, BadModel, "does not give vocab_size"),
        ({"num_hidden_layers": 3}, MissingTensor, "no tensor 'model.layers.2.self_attn.q_proj.weight'"),
        ({"intermediate_size": 128}, TensorShape, "(256, 64), but the settings make it (128, 64)"),
    ],
)  # fmt: skip
def test_a_config_with_impossible_shapes_is_refused_in_one_line(families, tmp_path, config, error, words):
    folder = copy(families, "smollm2", tmp_path, config=config)
    with pytest.raises(error) as raised:
        attnlab.load(folder)
    assert words in one_line(raised.value, raised.value.path)
    assert str(folder) in raised.value.path


def test_a_truncated_safetensors_file_is_refused_and_nothing_loads(families, tmp_path):
    folder = copy(families, "qwen2", tmp_path)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1000])
    with pytest.raises(file_errors.Truncated) as error:
        attnlab.load(folder)
    assert "is cut short" in one_line(error.value, weights)


def test_a_tensor_whose_byte_count_does_not_fit_its_shape_is_refused(families, tmp_path):
    folder = copy(families, "qwen2", tmp_path)
    weights = folder / "model.safetensors"
    raw = weights.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    header["model.norm.weight"]["shape"] = [65]  # 64 float32 numbers stored
    text = json.dumps(header).encode()
    weights.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n :])
    with pytest.raises(file_errors.TensorBytesMismatch) as error:
        attnlab.load(folder)
    assert "'model.norm.weight'" in one_line(error.value, weights)


def test_a_gguf_tensor_of_a_type_no_product_reads_is_refused_by_name(families):
    from ggufkit import write

    path = write(families, "smollm2", "F32", down="Q2_K")
    with pytest.raises(file_errors.UnreadableTensorType) as error:
        attnlab.load(path)
    assert (error.value.tensor, error.value.type_name) == ("blk.0.ffn_down.weight", "Q2_K")
    text = one_line(error.value, path)
    assert "is stored as Q2_K, which attnlab cannot read exactly" in text and "Q4_K, Q5_K, Q6_K" in text


def test_a_gguf_with_a_wrong_magic_is_refused(families, tmp_path):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"GGML" + families.gguf("gpt2", "Q8_0").read_bytes()[4:])
    with pytest.raises(file_errors.NotGGUF) as error:
        attnlab.load(bad)
    assert "is not a GGUF file" in one_line(error.value, bad)


def test_a_gguf_of_an_unknown_architecture_is_refused_with_the_list(tmp_path):
    import gguf

    path = tmp_path / "mamba.gguf"
    writer = gguf.GGUFWriter(str(path), "mamba")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(UnknownFamily) as error:
        attnlab.load(path)
    text = one_line(error.value, path)
    assert "'mamba' model (general.architecture)" in text
    assert "gemma3, gpt2, llama, phi3, qwen2, qwen3" in text


def test_a_model_too_large_for_the_machine_is_refused_with_the_numbers(families, tmp_path, monkeypatch):
    fake = tmp_path / "meminfo"
    fake.write_text("MemTotal:            100 kB\nMemFree:              50 kB\n")
    monkeypatch.setattr(store, "MEMINFO", fake)
    folder = families.folder("gpt2")
    with pytest.raises(TooLarge) as error:
        attnlab.load(folder, weights="float64")
    e = error.value
    assert (e.total, e.share, e.weights) == (102_400, store.RAM_SHARE, "float64")
    params = sum(int(np.prod(store.SafetensorsStore(folder, "float32", path="x").shape(n)))
                 for n in store.SafetensorsStore(folder, "float32", path="x").names())  # fmt: skip
    assert e.needed == 8 * params
    text = one_line(e, folder)
    assert f"{e.needed:,} bytes" in text and "50% of this machine's" in text and "float64 path" in text
    fake.write_text(f"MemTotal: {8 * params // 1024 * 3} kB\n")  # room for its weights: it opens
    assert attnlab.load(folder, weights="float64").path == "float64"


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda d: d / "nowhere", "missing"),
        (lambda d: (d / "notes.txt").write_text("hi") and d / "notes.txt", "not_a_model"),
        (lambda d: d, "no_config"),
    ],
)
def test_a_path_that_is_no_model_is_refused_naming_what_it_lacks(tmp_path, make, problem):
    path = make(tmp_path)
    with pytest.raises(NotAModel) as error:
        attnlab.load(path)
    assert error.value.problem == problem
    assert "give a folder with config.json, *.safetensors and tokenizer.json, or a .gguf file" in one_line(
        error.value, path)  # fmt: skip


@pytest.mark.parametrize(("drop", "problem"), [(("tokenizer.json",), "no_tokenizer"),
                                               (("model.safetensors",), "no_weights")])  # fmt: skip
def test_a_folder_without_its_tokenizer_or_weights_is_refused(families, tmp_path, drop, problem):
    folder = copy(families, "gpt2", tmp_path, drop=drop)
    with pytest.raises(NotAModel) as error:
        attnlab.load(folder)
    assert error.value.problem == problem and one_line(error.value, folder)


def test_a_name_that_is_no_model_and_no_path_is_refused_naming_both_kinds():
    with pytest.raises(FieldError) as error:
        attnlab.load("gpt5")
    assert error.value.loc == ("model",)
    assert "'gpt5', which is neither a model name (" in str(error.value) and "smollm2" in str(error.value)
    assert "nor a folder or .gguf file on disk" in str(error.value)
