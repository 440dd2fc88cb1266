"""The runs a worker keeps: computed once per key, least recently used out first under the byte cap."""

from __future__ import annotations

import pytest

from attnlab.models.circuitviews.kept import Kept, cache_of


def test_a_run_is_computed_once_and_the_oldest_leaves_first():
    kept = Kept(cap=10)
    made = []

    def compute(name):
        return lambda: made.append(name) or name

    assert kept.get(("a",), compute("a"), lambda v: 4) == "a"
    assert kept.get(("a",), compute("a again"), lambda v: 4) == "a" and made == ["a"]
    kept.get(("b",), compute("b"), lambda v: 4)
    kept.get(("a",), compute("a"), lambda v: 4)  # a is now the newest
    kept.get(("c",), compute("c"), lambda v: 4)  # 12 bytes: b, the least recently used, leaves
    assert kept.get(("b",), compute("b2"), lambda v: 4) == "b2" and made == ["a", "b", "c", "b2"]
    big = Kept(cap=1)
    big.get(("x",), compute("x"), lambda v: 100)
    assert len(big) == 1 and big.bytes == 100  # the newest stays, even alone over the cap


@pytest.mark.models
def test_the_same_text_on_the_same_model_is_one_run(minilm):
    kept = Kept()
    ids = minilm.tokenize(["A kept run."]).ids[0].tolist()
    first = cache_of(minilm, ids, kept=kept)
    assert cache_of(minilm, ids, kept=kept) is first and len(kept) == 1
    arrays = (first.resid, first.mid, first.z, first.attn_out, first.mlp_out, first.pooled)
    assert kept.bytes == sum(a.nbytes for a in arrays)
