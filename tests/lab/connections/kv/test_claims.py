"""Every sentence of the KV-cache lab is true of its numbers (hypothesis), on the registry's SmolLM2 shapes
as the server passes them in; without them, the paged cache alone."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims
from synthetic import shapes_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.kv import CONTROLS, LAB
from attnlab.lab.connections.kv.walk import MAX_LEN


@st.composite
def inputs(draw) -> dict:
    given = {
        "tokens": draw(st.integers(1, 8192)),
        "precision": draw(st.sampled_from(["1", "2", "4"])),
        "requests": draw(st.integers(1, 8)),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


@settings(max_examples=40, deadline=None)
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer(v, shapes_measured())
    per_token, at, paged, waste = page_claims(answer)
    b = int(v["precision"])
    assert per_token["per_token"] == {
        "mha": 2 * 30 * 9 * 64 * b,
        "gqa": 2 * 30 * 3 * 64 * b,
        "mqa": 2 * 30 * 64 * b,
    }
    assert per_token["ratio"] == 3 and per_token["per_token"]["gqa"] == 23_040 * b // 2
    assert at["bytes"] == {k: x * v["tokens"] for k, x in per_token["per_token"].items()}
    lengths = [int(n) for n in np.random.default_rng(v["seed"]).integers(1, MAX_LEN + 1, v["requests"])]
    tables = list(paged["tables"].values())
    assert [len(t) for t in tables] == [-(-n // 16) for n in lengths]
    assert sorted(b for t in tables for b in t) == list(
        range(sum(len(t) for t in tables))
    )  # the pool, each once
    assert paged["identical"] == [True] * v["requests"] and "exactly" in answer["words"][2]["text"]
    assert waste["paged"] == [len(t) * 16 - n for t, n in zip(tables, lengths)]
    assert all(0 <= x <= waste["bound"] == 15 for x in waste["paged"])
    assert waste["contiguous"] == [256 - n for n in lengths]


def test_without_the_registrys_shapes_only_the_paged_cache():
    v = read(CONTROLS, {}, "inputs")
    answer = LAB.answer(v, {})
    assert [p["id"] for p in answer["pictures"]] == ["pool", "waste"]
    assert answer["words"][0]["text"] == (
        "The cache's size uses SmolLM2's shapes from the model registry: this runs where the lab is served "
        "(attnlab serve); called on its own, the lab has no model to ask."
    )
    assert (
        "sizes" not in answer["data"]
        and answer["data"]["lengths"] == LAB.answer(v, shapes_measured())["data"]["lengths"]
    )
