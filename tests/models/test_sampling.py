"""Token choice (models/sampling.py): greedy, temperature, top-k, top-p, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.models.sampling import Sampling, pick, shares

LOGITS = np.array([2.0, 1.0, 0.5, -1.0, 3.0])


def test_greedy_is_the_arg_max_and_ties_go_to_the_lowest_id():
    rng = Sampling().generator()
    assert pick(LOGITS, Sampling(), rng) == 4
    assert pick(np.array([1.0, 5.0, 5.0]), Sampling(), rng) == 1


def test_temperature_one_without_cuts_is_the_softmax():
    p = shares(LOGITS, Sampling(temperature=1.0))
    e = [math.exp(x - 3.0) for x in LOGITS]
    np.testing.assert_allclose(p, [x / sum(e) for x in e], rtol=1e-15)


def test_top_k_keeps_the_k_likeliest():
    p = shares(LOGITS, Sampling(temperature=1.0, top_k=2))
    assert set(np.flatnonzero(p)) == {0, 4}
    e0, e4 = math.exp(2.0), math.exp(3.0)
    assert p[4] == pytest.approx(e4 / (e0 + e4), rel=1e-14)


def test_top_p_keeps_the_smallest_set_reaching_p():
    full = shares(LOGITS, Sampling(temperature=1.0))
    order = np.argsort(-full)
    # the likeliest alone holds < 0.7, the two likeliest >= 0.7: exactly those two stay
    assert full[order[0]] < 0.7 <= full[order[0]] + full[order[1]]
    p = shares(LOGITS, Sampling(temperature=1.0, top_p=0.7))
    assert set(np.flatnonzero(p)) == set(order[:2])


@settings(max_examples=60, deadline=None)
@given(
    logits=st.lists(st.floats(-30, 30), min_size=1, max_size=40),
    temperature=st.floats(0.05, 5.0),
    top_k=st.integers(0, 45),
    top_p=st.floats(0.01, 1.0),
)
def test_shares_are_a_distribution_within_the_cuts(logits, temperature, top_k, top_p):
    x = np.array(logits)
    p = shares(x, Sampling(temperature=temperature, top_k=top_k, top_p=top_p))
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(p >= 0)
    assert p[int(np.argmax(x))] > 0, (logits, temperature, top_k, top_p)  # the likeliest survives
    if top_k:
        assert np.count_nonzero(p) <= max(top_k, np.sum(x == np.sort(x)[-min(top_k, x.size)]))


def test_a_seed_repeats_the_draws():
    s = Sampling(temperature=1.0, seed=11)
    a = [pick(LOGITS, s, rng) for rng in [s.generator()] for _ in range(20)]
    b = [pick(LOGITS, s, rng) for rng in [s.generator()] for _ in range(20)]
    assert a == b and len(set(a)) > 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"temperature": -1.0}, "temperature"),
        ({"temperature": math.inf}, "temperature"),
        ({"temperature": "hot"}, "temperature"),
        ({"top_k": -2}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"top_k": True}, "top_k"),
        ({"top_p": 1.5}, "top_p"),
        ({"top_p": math.nan}, "top_p"),
    ],
)
def test_bad_settings_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        Sampling(**kwargs)
