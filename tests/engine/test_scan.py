"""The selective scan equals its lower-triangular matrix (<= 1e-12), worked and random."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.scan import SelectiveSSM, scan_matrix, selective_scan, step_sizes

ONE = SelectiveSSM(rates=(1.0,), b=(1.0,), c=(1.0,), w=0.0, beta=0.0)  # Δ = softplus(0) = ln 2 at every step


def test_a_one_entry_scan_by_hand():
    x = [1.0, 2.0]
    dt = math.log(2.0)
    a = math.exp(-dt)  # 1/2
    r = selective_scan(x, ONE)
    np.testing.assert_allclose(r.steps, [dt, dt], rtol=1e-15)
    np.testing.assert_allclose(r.output, [dt * 1.0, a * dt + dt * 2.0], rtol=1e-15)
    np.testing.assert_allclose(scan_matrix(x, ONE), [[dt, 0.0], [a * dt, dt]], rtol=1e-15)


ssms = st.builds(
    lambda n, seed: SelectiveSSM(
        rates=tuple(float(r) for r in np.random.default_rng(seed).uniform(0.05, 3.0, n)),
        b=tuple(float(r) for r in np.random.default_rng(seed + 1).standard_normal(n)),
        c=tuple(float(r) for r in np.random.default_rng(seed + 2).standard_normal(n)),
        w=float(np.random.default_rng(seed + 3).standard_normal()),
        beta=float(np.random.default_rng(seed + 4).standard_normal()),
    ),
    st.integers(1, 6),
    st.integers(0, 2**31),
)


@settings(max_examples=60, deadline=None)
@given(ssms, st.integers(0, 2**32 - 1), st.integers(1, 40))
def test_the_recurrence_equals_the_matrix(ssm, seed, n):
    x = np.random.default_rng(seed).standard_normal(n)
    r, m = selective_scan(x, ssm), scan_matrix(x, ssm)
    assert np.max(np.abs(m @ x - r.output)) <= 1e-12 * max(1e-300, np.max(np.abs(r.output)))
    assert np.all(np.triu(m, 1) == 0.0)
    _, decays = step_sizes(x, ssm)
    assert np.all((decays > 0) & (decays < 1))


def test_the_matrix_depends_on_the_input():
    x = np.array([0.5, -1.0, 2.0])
    ssm = SelectiveSSM(rates=(1.0, 2.0), b=(1.0, 0.5), c=(1.0, -1.0), w=1.5, beta=0.0)
    assert not np.allclose(scan_matrix(x, ssm), scan_matrix(2 * x, ssm))  # selective: M moves with x


def test_refusals():
    with pytest.raises(FieldError) as err:
        SelectiveSSM(rates=(1.0, -1.0), b=(1.0, 1.0), c=(1.0, 1.0))
    assert err.value.loc == ("rates",)
    with pytest.raises(FieldError) as err:
        selective_scan([[1.0]], ONE)
    assert err.value.loc == ("x",)
