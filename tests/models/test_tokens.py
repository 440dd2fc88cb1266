"""Tokenizers from a folder and from a GGUF's own vocabulary (models/tokens.py), against transformers.

The oracle is transformers' ``AutoTokenizer`` on the same files: ``from_pretrained(folder)`` and
``from_pretrained(folder, gguf_file=...)``. The files are the tiny models of every family
(tests/familykit.py) and the shipped SmolLM2 GGUF.

One split differs on purpose: a GGUF whose ``tokenizer.ggml.pre`` is "smollm" splits digits one by one
before GPT-2's split, as SmolLM's own tokenizer.json and llama.cpp do; transformers' GGUF loader does
not know the name and splits as GPT-2, which differs only where spaces run into a digit ("  0").
Its oracle is transformers on the model's own tokenizer.json, and the one difference is pinned below.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlab.models import tokens
from attnlab.models.gguf_file import GGUFFile
from familykit import CORPUS, GGUF_FAMILIES, RECIPES, SAMPLES, TOKENIZER_GGUFS

# Text a tokenizer must keep whole or split right: special tokens, spaces, bytes it has no piece for.
SPECIAL_TEXTS = [
    "<|im_start|>user\nHi<|im_end|>\n",
    "<start_of_turn>user\nhello<end_of_turn>",
    "<s>[INST] hi [/INST]</s>",
    "<|user|>\nhey<|end|><|assistant|>",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "<unk> <pad> <bos> <eos> [CLS] [SEP] <mask>",
    "  two leading spaces",
    "x  y   z    w",
    "\u0000\u0001 control bytes \u007f",
]
TEXTS = SAMPLES + SPECIAL_TEXTS + CORPUS[:12]

# Any text: letters of several scripts, digits, punctuation, spaces and newlines, emoji.
any_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.lists(
    st.sampled_from(list("ab 1\n\t.'▁<>|") + ["<s>", "<|im_end|>", "  ", "hello", "12"]), max_size=12
).map("".join)


def _hf(path, **kwargs):
    pytest.importorskip("transformers", reason="the oracle needs transformers (see scripts/test.sh)")
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # third-party deprecation notices are not our failures
        return AutoTokenizer.from_pretrained(str(path), **kwargs)


def _same(ours: tokens.ModelTokenizer, theirs, texts) -> None:
    for text in texts:
        expected = theirs(text)["input_ids"]
        assert ours.ids(text) == expected, text
        assert ours.tokenizer.decode(expected, skip_special_tokens=False) == theirs.decode(expected), text


class Pairs(dict):
    """name -> (ours, transformers'), shown short in hypothesis's reports."""

    def __repr__(self) -> str:
        return f"<tokenizers of {', '.join(self)}>"


def _oracle_of(families, name: str):
    """transformers on the same GGUF; for the "smollm" split, on the model's own tokenizer.json."""
    if RECIPES[name].vocab.gguf_pre in tokens.DIGITS_FIRST:
        return _hf(families.folder(name))
    path = families.tokenizer_gguf(name)
    return _hf(path.parent, gguf_file=path.name)


@pytest.fixture(scope="module")
def gguf_pairs(families):
    """name -> (ours from the tokenizer GGUF, transformers' from the same file)."""
    read = lambda name: tokens.from_gguf(GGUFFile(families.tokenizer_gguf(name)).metadata)  # noqa: E731
    return Pairs((name, (read(name), _oracle_of(families, name))) for name in TOKENIZER_GGUFS)


@pytest.fixture(scope="module")
def folder_pairs(families):
    """name -> (ours from the folder, transformers' from the same folder)."""
    return Pairs(
        (name, (tokens.from_folder(families.folder(name)), _hf(families.folder(name)))) for name in RECIPES
    )


@pytest.mark.oracle
@pytest.mark.parametrize("name", TOKENIZER_GGUFS)
def test_a_ggufs_vocabulary_gives_transformers_ids(gguf_pairs, name):
    ours, theirs = gguf_pairs[name]
    _same(ours, theirs, TEXTS)
    assert ours.bos == theirs.bos_token and ours.eos == theirs.eos_token
    assert ours.add_bos == (theirs("a")["input_ids"][0] == theirs.bos_token_id)


@pytest.mark.oracle
@pytest.mark.parametrize("name", GGUF_FAMILIES)
def test_a_model_ggufs_vocabulary_gives_transformers_ids(families, name):
    path = families.gguf(name, "Q8_0")
    _same(tokens.from_gguf(GGUFFile(path).metadata), _oracle_of(families, name), TEXTS)


@pytest.mark.oracle
def test_smollm_splits_digits_first_as_its_own_tokenizer_where_transformers_gguf_loader_does_not(families):
    path = families.tokenizer_gguf("smollm2")
    ours = tokens.from_gguf(GGUFFile(path).metadata)
    own, loader = _hf(families.folder("smollm2")), _hf(path.parent, gguf_file=path.name)
    spaces, zero = ours.id_of("ĠĠ"), ours.id_of("0")
    assert ours.ids("  0") == own("  0")["input_ids"] == [spaces, zero]  # "  " then "0"
    assert loader("  0")["input_ids"] == [ours.id_of("Ġ"), ours.id_of("Ġ"), zero]  # GPT-2's " " + " 0"
    assert ours.ids("a 0 1") == loader("a 0 1")["input_ids"]  # one space before a digit: the same


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(RECIPES))
def test_a_folders_tokenizer_gives_transformers_ids(folder_pairs, name):
    ours, theirs = folder_pairs[name]
    _same(ours, theirs, TEXTS)
    assert (ours.bos, ours.eos) == (theirs.bos_token, theirs.eos_token)


@pytest.mark.oracle
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=any_text)
def test_any_text_gives_transformers_ids_from_every_gguf(gguf_pairs, text):
    for name, (ours, theirs) in gguf_pairs.items():
        assert ours.ids(text) == theirs(text)["input_ids"], (name, text)


@pytest.mark.oracle
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=any_text)
def test_any_text_gives_transformers_ids_from_every_folder(folder_pairs, text):
    for name, (ours, theirs) in folder_pairs.items():
        assert ours.ids(text) == theirs(text)["input_ids"], (name, text)


def test_the_flags_say_what_is_added(gguf_pairs, folder_pairs):
    # Llama 3 and SentencePiece-style models add BOS; byte-level ChatML models do not.
    llama3, gemma, qwen2 = folder_pairs["llama3"][0], gguf_pairs["gemma2"][0], gguf_pairs["qwen2"][0]
    assert llama3.add_bos and llama3.ids("hi")[0] == llama3.bos_id
    assert llama3.ids("hi")[1:] == llama3.ids("hi", specials=False)
    assert gemma.add_bos and gemma.ids("hi")[0] == gemma.bos_id == 2
    assert not qwen2.add_bos and qwen2.bos is None and qwen2.eos == "<|im_end|>"
    assert not llama3.add_eos and llama3.chat_template is not None
    bert = folder_pairs["bert"][0]  # [CLS] text [SEP] from tokenizer.json's own post-processor
    assert bert.ids("hi")[0] == bert.id_of("[CLS]") and bert.ids("hi")[-1] == bert.id_of("[SEP]")


def test_control_tokens_stay_whole_and_text_around_them_is_split(gguf_pairs):
    qwen2 = gguf_pairs["qwen2"][0]
    start, end = qwen2.id_of("<|im_start|>"), qwen2.id_of("<|im_end|>")
    ids = qwen2.ids("<|im_start|>user<|im_end|>")
    assert ids[0] == start and ids[-1] == end and len(ids) >= 3
    assert qwen2.ids("<|im_start") != [start]  # half a token is text


def test_a_sentencepiece_style_vocabulary_falls_back_to_bytes(gguf_pairs):
    mistral = gguf_pairs["mistral"][0]
    assert mistral.tokenizer.token_to_id("▁🦙") is None and mistral.tokenizer.token_to_id("🦙") is None
    ids = mistral.ids("🦙", specials=False)  # no piece for it: "▁", then its four UTF-8 bytes
    pieces = [mistral.tokenizer.id_to_token(i) for i in ids]
    assert pieces == ["▁", "<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"]
    assert mistral.tokenizer.decode(ids) == "🦙"


def test_phi3_puts_the_prefix_in_a_normalizer_so_leading_spaces_stay(gguf_pairs):
    phi3, mistral = gguf_pairs["phi3"][0], gguf_pairs["mistral"][0]
    spaces = lambda tok, text: "".join(tok.tokenizer.id_to_token(i) for i in tok.ids(text, specials=False))  # noqa: E731
    assert spaces(phi3, "  hi").startswith("▁▁▁")
    assert spaces(mistral, "  hi").startswith("▁▁") and not spaces(mistral, "  hi").startswith("▁▁▁")


def test_user_defined_tokens_stay_whole_and_are_not_special():
    metadata = {
        "general.architecture": "qwen2",
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "qwen2",
        "tokenizer.ggml.tokens": ["a", "b", "ab", "<think>", "<", ">", "t", "h", "i", "n", "k"],
        "tokenizer.ggml.token_type": [1, 1, 1, 4, 1, 1, 1, 1, 1, 1, 1],
        "tokenizer.ggml.merges": ["a b"],
    }
    tok = tokens.from_gguf(metadata)
    assert tok.ids("ab<think>a") == [2, 3, 0]
    assert tok.tokenizer.decode([2, 3, 0], skip_special_tokens=True) == "ab<think>a"  # not special


def test_merges_come_from_scores_best_first_and_splits_in_id_order():
    pieces = ["a", "b", "c", "ab", "bc", "abc"]
    scores = {"a": 0.0, "b": 0.0, "c": 0.0, "ab": -1.0, "bc": -2.0, "abc": -0.5}
    # abc (score -0.5) splits as a+bc and ab+c; equal scores put the longer left half first;
    # then ab (-1), then bc (-2); single letters have no split.
    assert tokens.merges_from_scores(pieces, scores) == [("ab", "c"), ("a", "bc"), ("a", "b"), ("b", "c")]
    # equal scores and equal lengths keep the id order of the halves (a stable sort)
    tied = tokens.merges_from_scores(["x", "y", "xy", "yx"], {"xy": -1.0, "yx": -1.0})
    assert tied == [("x", "y"), ("y", "x")]


def test_a_tokenizer_kind_we_do_not_read_is_named_with_the_ones_we_do():
    with pytest.raises(tokens.UnsupportedTokenizer) as caught:
        tokens.from_gguf({"tokenizer.ggml.model": "t5", "tokenizer.ggml.tokens": ["x"]})
    assert str(caught.value) == "tokenizer.ggml.model is 't5'; the ones read are gpt2, llama"
    assert caught.value.kind == "t5" and caught.value.known == ("gpt2", "llama")
    with pytest.raises(tokens.UnsupportedTokenizer, match="is None"):
        tokens.from_gguf({})


def test_a_folder_template_file_wins_over_the_config(families):
    qwen3 = tokens.from_folder(families.folder("qwen3"))  # its template is chat_template.jinja
    assert qwen3.chat_template == (families.folder("qwen3") / "chat_template.jinja").read_text()
    assert tokens.from_folder(families.folder("gpt2")).chat_template is None


def test_a_named_template_list_gives_the_default(tmp_path, families):
    import json
    import shutil

    folder = tmp_path / "named"
    shutil.copytree(families.folder("gpt2"), folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["chat_template"] = [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    assert tokens.from_folder(folder).chat_template == "D"


@pytest.mark.models
@pytest.mark.oracle
def test_the_shipped_smollm2_gguf_gives_transformers_ids():
    from attnlab.models import files

    try:
        path = files.smollm2_gguf()
    except files.ModelNotInstalled as error:
        pytest.skip(str(error))
    ours = tokens.from_gguf_file(path)
    theirs = _hf(path.parent, gguf_file=path.name)
    _same(ours, theirs, TEXTS + ["1234567890 + 42 = 1234567932", "Version 3.14.159, 2024-07-26"])
    assert ours.kind == "gpt2" and not ours.add_bos and ours.eos == "<|im_end|>"


@pytest.mark.parametrize("name", GGUF_FAMILIES)
def test_a_ggufs_tokenizer_is_read_from_its_header_whatever_its_tensor_types(families, name):
    k_quants = families.gguf(name, "K")  # Q4_K, Q5_K, Q6_K tensors: the header reader needs no kernel
    f32 = families.gguf(name, "F32")
    ours, reference = tokens.from_gguf_file(k_quants), tokens.from_gguf(GGUFFile(f32).metadata)
    for text in TEXTS:
        assert ours.ids(text) == reference.ids(text), text
    assert (ours.bos, ours.eos, ours.add_bos, ours.chat_template) == (
        reference.bos,
        reference.eos,
        reference.add_bos,
        reference.chat_template,
    )


def test_a_broken_gguf_is_unreadable_with_its_reason(tmp_path):
    from attnlab.models import discover

    (tmp_path / "x.gguf").write_bytes(b"GGML" + bytes(40))
    with pytest.raises(discover.Unreadable) as caught:
        tokens.from_gguf_file(tmp_path / "x.gguf")
    assert caught.value.reason == discover.BadFile(file="x.gguf", problem="bad_magic", detail=repr(b"GGML"))
