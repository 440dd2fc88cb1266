"""``attnlab kv-cache``'s words: any registered model's cache at N tokens, each claim recomputed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import assert_page_words

from attnlab.lab.connections.kv import command
from shipped_shapes import SHAPES


def shapes(model: str) -> dict:
    """The model's shapes as ``models.labs.facts.shapes`` gives them (recorded: no model package)."""
    return dict(SHAPES[model])


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["smollm2", "minilm"]), st.integers(1, 1_000_000), st.sampled_from([1, 2, 4]))
def test_every_claim(model, tokens, bytes_each):
    facts = shapes(model)
    first, second = command.size_words(facts, tokens, bytes_each)
    for s in (first, second):
        assert_page_words(s["text"])
    L, q, kv, d = facts["layers"], facts["query_heads"], facts["kv_heads"], facts["head_dim"]
    assert first["claims"] == {"layers": L, "query_heads": q, "kv_heads": kv, "head_dim": d}
    unit = 2 * L * d * bytes_each * tokens
    assert second["claims"]["bytes"] == {"mha": unit * q, "gqa": unit * kv, "mqa": unit}
    assert second["claims"]["mha_already"] == (kv == q)
    assert f"= {unit * kv:,} bytes" in second["text"]
    rows = command.size_table(facts, tokens, bytes_each)["rows"]
    assert [r[3] for r in rows] == [f"{unit * q:,}", f"{unit * kv:,}", f"{unit:,}"]


def test_smollm2_at_1024_tokens():
    first, second = command.size_words(shapes("smollm2"), 1024, 2)
    assert (
        first["text"]
        == "SmolLM2-135M-Instruct: 30 layers; 9 query heads share 3 key/value heads, of 64 numbers each."
    )
    assert second["text"] == (
        "At 1,024 tokens of 16-bit numbers its KV cache holds 2 × 30 × 3 × 64 × 2 × 1,024 = 23,592,960 bytes "
        "(23.6 MB). With a key/value head for each query head (MHA) it would hold 70.8 MB; with one shared "
        "by all (MQA), 7.9 MB."
    )


@pytest.mark.parametrize(
    "value,new,refused",
    [
        (1, False, None),
        (1_000_000, False, None),
        (0, False, "--tokens must be from 1 to 1,000,000 tokens in the cache, not 0"),
        (64, True, None),
        (65, True, "--tokens must be from 1 to 64 new tokens to write, not 65"),
    ],
)
def test_tokens_refused(value, new, refused):
    assert command.tokens_refused(value, new=new) == refused
