"""The router: top-k of a softmax over experts, renormalised; load and importance over a batch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.moe import route, softmax_rows


def test_a_worked_token():
    logits = [[np.log(4.0), np.log(3.0), np.log(2.0), np.log(1.0)]]  # p = 0.4, 0.3, 0.2, 0.1
    r = route(logits, 2)
    np.testing.assert_allclose(r.probs, [[0.4, 0.3, 0.2, 0.1]], rtol=1e-15)
    assert r.top.tolist() == [[0, 1]]
    np.testing.assert_allclose(r.kept, [0.7], rtol=1e-15)
    np.testing.assert_allclose(r.gates, [[4 / 7, 3 / 7, 0.0, 0.0]], rtol=1e-15)
    assert r.load.tolist() == [1, 1, 0, 0]


def test_ties_go_to_the_lower_index():
    assert route([[1.0, 2.0, 2.0, 2.0]], 2).top.tolist() == [[1, 2]]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 20), st.integers(1, 12), st.data())
def test_gates_are_the_top_k_renormalised(seed, n, experts, data):
    k = data.draw(st.integers(1, experts))
    logits = np.random.default_rng(seed).standard_normal((n, experts)) * 3
    r = route(logits, k)
    np.testing.assert_allclose(r.probs, softmax_rows(logits))
    np.testing.assert_allclose(r.gates.sum(axis=1), 1.0, rtol=1e-14)
    assert ((r.gates > 0).sum(axis=1) <= k).all()
    for i in range(n):
        kept = sorted(r.top[i].tolist())
        dropped = [e for e in range(experts) if e not in kept]
        assert all(r.probs[i][a] >= r.probs[i][b] for a in kept for b in dropped)  # the k largest
        np.testing.assert_allclose(r.gates[i][kept], r.probs[i][kept] / r.probs[i][kept].sum(), rtol=1e-14)
    assert r.load.sum() == n * k
    np.testing.assert_allclose(r.importance, r.probs.sum(axis=0))
    if k == experts:
        np.testing.assert_allclose(r.gates, r.probs, rtol=1e-14)  # keeping every expert changes nothing


@pytest.mark.parametrize("k", [0, 5, True, 1.0])
def test_k_must_be_a_count_of_experts(k):
    with pytest.raises(FieldError) as err:
        route([[0.0, 1.0, 2.0, 3.0]], k)
    assert err.value.loc == ("k",)
