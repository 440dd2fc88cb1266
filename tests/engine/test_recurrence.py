"""Causal linear attention: the masked matrix equals the recurrence (<= 1e-12), worked and random."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.recurrence import (
    feature_map,
    linear_attention_matrix,
    linear_attention_recurrent,
    multiply_adds,
)


def test_a_worked_pair_by_hand():
    q = [[0.0], [1.0]]
    k = [[0.0], [-1.0]]
    v = [[2.0], [4.0]]
    # φ(0) = 1, φ(1) = 2, φ(-1) = e^-1: row 1 weighs key 0 by 2·1 and key 1 by 2·e^-1
    m = linear_attention_matrix(q, k, v)
    e = np.exp(-1.0)
    np.testing.assert_allclose(m.weights, [[1.0, 0.0], [1 / (1 + e), e / (1 + e)]], rtol=1e-15)
    np.testing.assert_allclose(m.output[:, 0], [2.0, (2 + 4 * e) / (1 + e)], rtol=1e-15)
    r = linear_attention_recurrent(q, k, v)
    np.testing.assert_allclose(r.states[1], [[2.0 + 4 * e]], rtol=1e-15)  # S_2 = φ(k_0)v_0 + φ(k_1)v_1
    np.testing.assert_allclose(r.sums[1], [1 + e], rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 40),
    st.integers(1, 8),
    st.integers(1, 8),
    st.sampled_from([0.1, 1.0, 3.0]),
)
def test_the_matrix_equals_the_recurrence(seed, n, d, d_v, magnitude):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, n, d)) * magnitude
    v = rng.standard_normal((n, d_v))
    m, r = linear_attention_matrix(q, k, v), linear_attention_recurrent(q, k, v)
    assert np.max(np.abs(m.output - r.output)) <= 1e-12 * np.max(np.abs(m.output))
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0, rtol=1e-13)
    assert np.all(np.triu(m.weights, 1) == 0.0)  # causal: nothing above the diagonal
    mi, ri = (
        linear_attention_matrix(q, k, v, feature="identity", normalize=False),
        linear_attention_recurrent(q, k, v, feature="identity", normalize=False),
    )
    assert np.max(np.abs(mi.output - ri.output)) <= 1e-12 * max(1.0, np.max(np.abs(mi.output)))


def test_features_and_costs():
    x = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(feature_map(x), [np.exp(-2.0), 1.0, 4.0])
    np.testing.assert_array_equal(feature_map(x, "identity"), x)
    assert multiply_adds(4, 2, 3) == {"matrix": 10 * 5, "recurrence": 4 * 2 * 2 * 3}


@pytest.mark.parametrize(
    "kwargs,loc",
    [({"feature": "relu"}, ("feature",)), ({"feature": "identity"}, ("normalize",))],
)
def test_refusals_name_their_field(kwargs, loc):
    with pytest.raises(FieldError) as err:
        linear_attention_matrix([[1.0]], [[1.0]], [[1.0]], **kwargs)
    assert err.value.loc == loc


def test_shapes_are_checked():
    with pytest.raises(FieldError) as err:
        linear_attention_recurrent([[1.0, 2.0]], [[1.0]], [[1.0]])
    assert err.value.loc == ("k",)
