"""The metrics on numbers worked by hand, and the next-token view's probabilities."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.models.circuits import metrics
from attnlab.models.sampling import Sampling, cut


def test_probabilities_are_the_next_token_views_p_model():
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((3, 50)) * 4).astype(np.float32)
    p = metrics.probabilities(logits)
    assert p.dtype == np.float64 and p.shape == (3, 50)
    for row, mine in zip(logits, p, strict=True):
        np.testing.assert_allclose(mine, cut(row, Sampling(temperature=1.0)).p_model, rtol=1e-15, atol=0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-15)


def test_position_loss_is_minus_log_p_of_the_next_token():
    logits = np.array([[0.0, math.log(3.0)], [math.log(2.0), 0.0], [5.0, 5.0]])
    loss = metrics.position_loss(logits, [1, 1, 0])
    assert loss.shape == (2,)  # the last position has no next token in the text
    assert loss[0] == pytest.approx(-math.log(3 / 4), abs=1e-15)  # position 0 -> token 1: p = 3/4
    assert loss[1] == pytest.approx(-math.log(2 / 3), abs=1e-15)  # position 1 -> token 0: p = 2/3


def test_fraction_recovered_is_zero_at_corrupt_one_at_clean_and_nan_without_a_gap():
    assert metrics.fraction_recovered(-3.0, 5.0, -3.0) == 0.0
    assert metrics.fraction_recovered(5.0, 5.0, -3.0) == 1.0
    assert metrics.fraction_recovered(1.0, 5.0, -3.0) == 0.5
    np.testing.assert_array_equal(metrics.fraction_recovered(np.array([-3.0, 9.0]), 5.0, -3.0), [0.0, 1.5])
    assert math.isnan(metrics.fraction_recovered(1.0, 2.0, 2.0))


def test_logit_difference_and_cosine():
    assert metrics.logit_difference(np.float32(2.5), np.float32(-1.25)) == 3.75
    assert metrics.cosine([3.0, 4.0], [4.0, 3.0]) == pytest.approx(24 / 25, abs=1e-16)
    assert metrics.cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    np.testing.assert_allclose(metrics.cosine(np.eye(2), np.eye(2)[::-1]), [0.0, 0.0])


def test_ranks_put_ties_on_the_lower_id():
    logits = np.array([[1.0, 3.0, 3.0, 0.0, 2.0]])
    assert metrics.ranked(logits, 3).tolist() == [[1, 2, 4]]
    assert metrics.rank_of(logits, 2).tolist() == [1]  # id 1 ties with it and comes first
    assert metrics.rank_of(logits, 1).tolist() == [0]
    assert metrics.rank_of(logits, 3).tolist() == [4]


def test_kl_divergence_in_nats():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.5, 0.25])
    assert metrics.kl_divergence(p, q) == pytest.approx(0.5 * math.log(2.0), abs=1e-16)
    assert metrics.kl_divergence(p, p) == 0.0
