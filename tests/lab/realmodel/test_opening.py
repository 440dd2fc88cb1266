"""The words for a model on disk that cannot be opened: one line each, from the path, every fact in it."""

from __future__ import annotations

import pytest

from attnlab.lab.realmodel import opening

PATH = "/models/My Model/model.gguf"


def test_not_a_model_says_what_the_path_lacks_and_what_is_read():
    for problem, words in (("missing", "is not there"), ("no_config", "has no config.json"),
                           ("no_tokenizer", "has no tokenizer.json"), ("no_weights", "has no *.safetensors"),
                           ("not_a_model", "is neither a folder nor a .gguf file")):  # fmt: skip
        text = opening.not_a_model(PATH, problem)
        assert text.startswith(f"{PATH} {words}") and "\n" not in text
        assert text.endswith("a folder with config.json, *.safetensors and tokenizer.json, or a .gguf file")


def test_an_unknown_family_names_itself_where_the_file_names_it_and_the_list():
    text = opening.unknown_family(PATH, "mamba", "general.architecture", ("gpt2", "llama"))
    assert text == f"{PATH} is a 'mamba' model (general.architecture); attnlab runs gpt2, llama"
    text = opening.unknown_family(PATH, None, "config.json's model_type", ("bert",))
    assert text == f"{PATH} names no family (config.json's model_type is missing); attnlab runs bert"


def test_settings_are_named_with_their_values_and_what_they_must_be():
    assert opening.bad_setting(PATH, "num_hidden_layers", 0, "a whole number of at least 1") == (
        f"{PATH}: num_hidden_layers is 0; it must be a whole number of at least 1")  # fmt: skip
    assert opening.unsupported_setting(PATH, "rope_scaling.rope_type", "yarn", ("default", "linear")) == (
        f"{PATH}: rope_scaling.rope_type is 'yarn', which attnlab does not run exactly; "
        "it runs default, linear")  # fmt: skip
    assert opening.missing_setting(PATH, "hidden_size") == f"{PATH} does not give hidden_size, which the " \
                                                            "model's shapes need"  # fmt: skip


def test_impossible_shapes_carry_their_numbers():
    detail = opening.heads_do_not_divide("hidden_size", 2304, "num_attention_heads", 7)
    assert detail == "hidden_size 2,304 does not split into num_attention_heads 7 equal heads"
    assert opening.impossible_shapes(PATH, detail) == f"{PATH} describes impossible shapes: {detail}"
    detail = opening.groups_do_not_divide("heads", 9, "kv", 2)
    assert detail == "heads 9 query heads do not share kv 2 KV heads evenly"
    assert opening.odd_rotary_head("head_dim", 15).startswith("head_dim 15 is odd")


def test_tensors_are_named_with_their_shapes():
    text = opening.tensor_shape(PATH, "blk.0.ffn_up.weight", (11008, 4096), (5504, 4096))
    assert text == f"{PATH}: tensor 'blk.0.ffn_up.weight' has shape (11,008, 4,096), but the settings " \
                   "make it (5,504, 4,096)"  # fmt: skip
    assert "'output_norm.weight'" in opening.missing_tensor(PATH, "output_norm.weight")
    shard, index = "model-00002-of-00002.safetensors", "model.safetensors.index.json"
    assert opening.missing_shard(PATH, shard, index) == (
        f"{PATH}: {index} lists weights in {shard}, which is not there; the download did not finish")


@pytest.mark.parametrize(("needed", "total", "shown"), [(3 * 2**30, 4 * 2**30, ("3.0 GiB", "4.0 GiB")),
                                                        (1_500_000, 2_000_000, ("1.4 MiB", "1.9 MiB")),
                                                        (3000, 4096, ("2.9 KiB", "4.0 KiB"))])
def test_a_model_too_large_says_its_bytes_the_share_and_the_memory(needed, total, shown):
    text = opening.too_large(PATH, "float32", needed, total, 0.5)
    assert text.startswith(f"{PATH} needs {shown[0]} ({needed:,} bytes) for its weights on the float32 path")
    assert f"more than 50% of this machine's {shown[1]}" in text and "\n" not in text


def test_a_name_that_is_no_model_names_both_kinds():
    assert opening.unknown_model("gpt5", ("minilm", "smollm2")) == (
        "is 'gpt5', which is neither a model name (minilm, smollm2) nor a folder or .gguf file on disk")
    assert opening.no_chat("gpt2").startswith("cannot be a chat: gpt2 has no chat template")
    assert opening.unread_tokenizer(PATH, "bert", ("gpt2", "llama")) == (
        f"{PATH} holds a 'bert' tokenizer, which attnlab does not read; it reads gpt2, llama")
