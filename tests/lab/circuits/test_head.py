"""What a head reads and writes, in words: its group, and the largest product before and after RoPE."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sharekit import check_set

from attnlab.lab.circuits.head import group_words, head_view


def test_the_group_sentence_names_the_heads_that_share_keys_and_values():
    assert group_words(18, 6, 2, (6, 7, 8)) == {
        "text": "Query head 6 of layer 18 reads KV head 2, whose keys and values query heads 6, 7 and 8 "
        "share (grouped-query attention). The products below are this head's own queries with that "
        "shared key.",
        "claims": {"kv_head": 2, "group": [6, 7, 8]},
    }
    assert group_words(2, 1, 1, (1,))["text"] == (
        "Query head 1 of layer 2 has its own keys and values: no other head shares them."
    )


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8), st.data())
def test_the_rope_sentence_names_the_largest_products(n, data):
    dots = st.floats(-50, 50, allow_nan=False)
    before = np.array(data.draw(st.lists(dots, min_size=n * n, max_size=n * n))).reshape(n, n)
    after = np.array(data.draw(st.lists(dots, min_size=n * n, max_size=n * n))).reshape(n, n)
    q = data.draw(st.integers(0, n - 1))
    allowed = np.tril(np.ones((n, n), dtype=bool))
    weights = allowed / allowed.sum(axis=1, keepdims=True)  # each query's row a softmax row: it sums to 1
    reads = SimpleNamespace(layer=3, head=4, kv_head=1, group=(3, 4, 5), dots_before=before, dots_after=after,
                            weights=weights, allowed=allowed, scale=0.125, q=np.zeros((n, 64)))  # fmt: skip
    v = head_view(reads, None, query=q, tokens=[f"w{i}" for i in range(n)], texts=None, rotated=True)
    seen = list(range(q + 1))
    c = v["rope_words"]["claims"]
    assert c["top_before"] == min(seen, key=lambda j: (-before[q, j], j))
    assert c["top_after"] == min(seen, key=lambda j: (-after[q, j], j))
    assert [k["index"] for k in v["keys"]] == seen
    assert [k["before"] for k in v["keys"]] == before[q, : q + 1].tolist()
    assert v["no_writes"]["claims"] == {"writes": False} and v["writes"] is None
    check_set([k["weight_display"] for k in v["keys"]], weights[q, : q + 1].tolist())  # they add up to 100
    assert v["scale_words"]["claims"] == {"scale": 0.125, "d_head": 64}
