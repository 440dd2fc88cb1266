"""The paged KV cache reads back the same keys and values, bit for bit, wherever its blocks landed."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.paged import PagedKVCache


def test_two_sequences_interleave_in_the_pool():
    cache = PagedKVCache(num_blocks=4, block_size=2)
    a = np.arange(3.0).reshape(3, 1, 1)
    b = -np.arange(1.0, 3.0).reshape(2, 1, 1)
    cache.append(0, a[:2], a[:2])  # block 0
    cache.append(1, b, b)  # block 1
    cache.append(0, a[2:], a[2:])  # block 2
    assert cache.tables == {0: [0, 2], 1: [1]} and cache.owner == [0, 1, 0, -1]
    assert cache.waste(0) == 1 and cache.waste(1) == 0
    np.testing.assert_array_equal(cache.read(0)[0], a)
    np.testing.assert_array_equal(cache.read(1)[1], b)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.tuples(st.integers(0, 3), st.integers(1, 40)), min_size=1, max_size=30),
    st.sampled_from([1, 4, 16]),
)
def test_every_sequence_reads_back_what_was_appended(seed, appends, block_size):
    rng = np.random.default_rng(seed)
    cache = PagedKVCache(
        num_blocks=4 * 30 * 40 // block_size + 4, block_size=block_size, n_kv_head=2, head_dim=3
    )
    written: dict[int, list[np.ndarray]] = {}
    for seq, n in appends:
        k, v = rng.standard_normal((2, n, 2, 3))
        cache.append(seq, k, v)
        written.setdefault(seq, []).append((k, v))
    for seq, parts in written.items():
        k, v = cache.read(seq)
        np.testing.assert_array_equal(k, np.concatenate([p[0] for p in parts]))
        np.testing.assert_array_equal(v, np.concatenate([p[1] for p in parts]))
        assert 0 <= cache.waste(seq) < block_size
    used = [b for table in cache.tables.values() for b in table]
    assert len(used) == len(set(used))  # no block is shared


def test_a_full_pool_and_bad_shapes_are_refused():
    cache = PagedKVCache(num_blocks=1, block_size=2, n_kv_head=1, head_dim=1)
    with pytest.raises(FieldError) as err:
        cache.append(0, np.zeros((3, 1, 1)), np.zeros((3, 1, 1)))
    assert err.value.loc == ("k",)
    with pytest.raises(FieldError) as err:
        cache.append(0, np.zeros((1, 2, 1)), np.zeros((1, 2, 1)))
    assert err.value.loc == ("k",)
