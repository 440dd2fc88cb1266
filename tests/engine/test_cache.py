"""KVCache: growing keys and values for one layer."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine import KVCache, new_caches


def test_cache_refuses_mismatched_shapes():
    cache = KVCache()
    cache.append(np.ones((2, 3, 4)), np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"k has shape \(3, 1, 4\); the cache holds \(2, 3, 4\)"):
        cache.append(np.ones((3, 1, 4)), np.ones((3, 1, 4)))
    keys, values = cache.append(np.zeros((2, 1, 4)), np.zeros((2, 1, 4)))
    assert keys.shape == (2, 4, 4) and len(cache) == 4 and "length=4" in repr(cache)


def test_new_caches_are_independent():
    a, b = new_caches(2)
    a.append(np.ones((1, 2, 3)), np.ones((1, 2, 3)))
    assert (a.length, b.length) == (2, 0) and b.keys is None


def test_numpy_cache_grows_in_place_and_matches_concatenation(rng):
    cache = KVCache()
    ks = [rng.standard_normal((2, 3, n, 4)).astype(np.float32) for n in (5, 1, 1, 70, 1, 200)]
    vs = [rng.standard_normal((2, 3, n, 6)).astype(np.float32) for n in (5, 1, 1, 70, 1, 200)]
    held = []
    for i, (k, v) in enumerate(zip(ks, vs)):
        keys, values = cache.append(k, v)
        np.testing.assert_array_equal(keys, np.concatenate(ks[: i + 1], axis=-2))
        np.testing.assert_array_equal(values, np.concatenate(vs[: i + 1], axis=-2))
        assert keys.dtype == values.dtype == np.float32
        held.append((keys, keys.copy()))
    assert cache.length == 278 and cache.keys.shape == (2, 3, 278, 4)
    for view, copy in held:  # earlier views still show exactly their tokens
        np.testing.assert_array_equal(view, copy)
    # a step that fits the buffer writes in place: no new buffer, the old views share it
    before = cache.append(ks[1], vs[1])[0]
    after = cache.append(ks[2], vs[2])[0]
    assert np.shares_memory(before, after)


def test_cache_mixes_dtypes_like_concatenation():
    cache = KVCache()
    cache.append(np.ones((1, 2, 3), np.float32), np.ones((1, 2, 3), np.float32))
    keys, values = cache.append(np.full((1, 1, 3), 0.1), np.full((1, 1, 3), 0.1))
    assert keys.dtype == values.dtype == np.float64
    assert keys[0, 2].tolist() == [0.1] * 3 and keys[0, 0].tolist() == [1.0] * 3


def test_non_numpy_cache_concatenates():
    import array_api_strict as xs

    cache = KVCache()
    cache.append(xs.ones((1, 2, 3)), xs.ones((1, 2, 3)))
    keys, _ = cache.append(xs.zeros((1, 1, 3)), xs.zeros((1, 1, 3)))
    assert keys.shape == (1, 3, 3) and isinstance(keys, type(xs.ones(1)))
    np.testing.assert_array_equal(np.from_dlpack(keys)[0, :, 0], [1.0, 1.0, 0.0])


def test_truncate_drops_the_last_tokens_and_the_next_append_writes_after_the_rest(rng):
    cache, fresh = KVCache(), KVCache()
    k, v = rng.standard_normal((2, 9, 4)), rng.standard_normal((2, 9, 4))
    cache.append(k, v)
    cache.truncate(6)  # three rejected drafts go
    assert cache.length == 6 and np.array_equal(cache.keys, k[:, :6])
    fresh.append(k[:, :6], v[:, :6])
    k2, v2 = rng.standard_normal((2, 1, 4)), rng.standard_normal((2, 1, 4))
    keys, values = cache.append(k2, v2)
    want_k, want_v = fresh.append(k2, v2)
    assert np.array_equal(keys, want_k) and np.array_equal(values, want_v) and cache.length == 7
    cache.truncate(0)
    assert cache.length == 0
    with pytest.raises(ValueError, match="length is 1; the cache holds 0 tokens"):
        cache.truncate(1)
