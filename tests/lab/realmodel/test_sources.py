"""Words for where models come from (lab/realmodel/sources.py): each sentence states its reason's facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnlab.lab.realmodel import sources
from attnlab.models import discover

# One of every reason discover gives, with the values a real scan puts in them.
EXAMPLES = [
    discover.MissingShard(shard="model-00002-of-00003.safetensors", index="model.safetensors.index.json"),
    discover.MissingTensor(
        tensor="model.layers.3.mlp.up_proj.weight", shard="model-00001-of-00002.safetensors"
    ),
    discover.UnknownFamily(family="mamba"),
    discover.UnknownFamily(family=None),
    discover.Truncated(file="model.safetensors", size=1_048_576, needed=2_621_440),
    discover.DanglingLink(file="model.safetensors", target="../../blobs/4f2a9c"),
    discover.NoTokenizer(),
    discover.UnreadTokenizer(tokenizer="t5"),
    discover.NoConfig(),
    discover.NoSafetensors(files=("pytorch_model.bin",)),
    discover.NoSafetensors(),
    *(
        discover.BadFile(file="x.gguf", problem=problem, detail="detail")
        for problem in discover.BAD_FILE_PROBLEMS
    ),
]


def test_every_kind_of_reason_has_an_example_here():
    assert {type(r) for r in EXAMPLES} == set(discover.REASONS)


@pytest.mark.parametrize("reason", EXAMPLES, ids=lambda r: f"{r.kind}")
def test_each_reason_is_one_sentence_naming_its_facts(reason):
    words = sources.why(reason)
    assert words.endswith(".") and "\n" not in words and "None" not in words
    for fact, value in sources.claims(reason).items():
        assert value in words, (fact, value, words)


def test_the_numbers_are_the_labs_counts():
    words = sources.why(discover.Truncated(file="model.safetensors", size=1, needed=2_621_440))
    assert words == (
        "model.safetensors is cut short: it has 1 byte and its header needs at least 2,621,440 bytes."
    )
    assert sources.claims(discover.Truncated(file="a", size=1, needed=2_621_440)) == {
        "file": "a",
        "size": "1 byte",
        "needed": "2,621,440 bytes",
    }


def test_an_unknown_family_names_itself_and_every_known_one():
    assert sources.why(discover.UnknownFamily(family="mamba", known=("bert", "llama"))) == (
        "its family, mamba, is not one attnlab runs; it runs bert, llama."
    )
    assert sources.why(discover.UnknownFamily(family=None, known=("llama",))) == (
        "its files name no family, which is not one attnlab runs; it runs llama."
    )


@given(
    file=st.text(min_size=1, max_size=30).filter(str.strip),
    size=st.integers(0, 10**12),
    extra=st.integers(1, 10**12),
)
def test_any_truncation_is_worded_with_its_own_numbers(file, size, extra):
    reason = discover.Truncated(file=file, size=size, needed=size + extra)
    words = sources.why(reason)
    assert words.startswith(f"{file} is cut short: it has {size:,} byte")
    assert words.endswith(f"at least {size + extra:,} {'byte' if size + extra == 1 else 'bytes'}.")


def test_a_reason_without_words_is_an_error_not_silence():
    class Odd(discover.Reason):
        kind = "odd"

    with pytest.raises(ValueError, match="no words for the reason 'odd'"):
        sources.why(Odd())


def test_a_found_model_in_one_line():
    assert sources.found("tiny/qwen2", "qwen2", 149_248, "float32", True) == (
        "tiny/qwen2: qwen2, 149,248 parameters, float32, chat"
    )
    assert sources.found("x.gguf", "gpt2", 1, "Q8_0", False) == "x.gguf: gpt2, 1 parameter, Q8_0"
    assert sources.skipped("tiny/x", discover.NoConfig()) == (
        "tiny/x is skipped: it has safetensors weights but no config.json to say what model they are."
    )


def test_chat_words():
    assert sources.no_chat("tiny/gpt2", "none") == (
        "tiny/gpt2 has no chat template, so it has no chat: it continues the text you give it."
    )
    assert sources.no_chat("m", "unreadable", "unexpected '}'", 2) == (
        "m's chat template does not compile (line 2): unexpected '}'. It continues text instead."
    )
    assert sources.template_refused("System role not supported") == (
        "is refused by the model's chat template: System role not supported"
    )
