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
