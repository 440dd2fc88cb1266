"""The sliding-window mask: a causal band of ``window`` keys, and what it changes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.attention import attention, causal_mask
from attnlab.engine.errors import FieldError
from attnlab.engine.window import sliding_window_mask, window_start


def test_a_window_of_three_over_five():
    assert sliding_window_mask(5, 3).astype(int).tolist() == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],
        [0, 1, 1, 1, 0],
        [0, 0, 1, 1, 1],
    ]
    assert [window_start(i, 3) for i in range(5)] == [0, 0, 0, 1, 2]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_rows_inside_the_window_keep_causal_attention_and_a_wide_window_is_causal(n, window, seed):
    mask = sliding_window_mask(n, window)
    assert mask.sum(axis=1).tolist() == [min(i + 1, window) for i in range(n)]
    if window >= n:
        np.testing.assert_array_equal(mask, causal_mask(n, n, "top_left"))
    q, k, v = np.random.default_rng(seed).standard_normal((3, n, 3))
    windowed = attention(q, k, v, mask=mask).output
    causal = attention(q, k, v, causal="top_left").output
    np.testing.assert_array_equal(windowed[:window], causal[:window])  # same keys, same bits


@pytest.mark.parametrize("n,window,loc", [(0, 2, ("n",)), (3, 0, ("window",)), (3, True, ("window",))])
def test_refuses_what_is_no_window(n, window, loc):
    with pytest.raises(FieldError) as err:
        sliding_window_mask(n, window)
    assert err.value.loc == loc
