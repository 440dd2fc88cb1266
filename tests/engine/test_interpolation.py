"""Position interpolation: s = 1 is plain RoPE, and position p under s rotates as p / s does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.interpolation import interpolated_angles, rotate_interpolated
from attnlab.engine.positions import RoPE


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([2, 8, 64]),
    st.integers(1, 8),
    st.sampled_from(["half", "interleaved"]),
)
def test_plain_at_one_and_a_division_otherwise(seed, d, s, convention):
    rope = RoPE(d, convention=convention)
    x = np.random.default_rng(seed).standard_normal((5, d))
    positions = np.arange(0, 5 * s, s)  # multiples of s: p / s is a whole position
    np.testing.assert_array_equal(
        rotate_interpolated(rope, x, np.arange(5), 1.0), rope.apply(x, np.arange(5))
    )
    np.testing.assert_allclose(
        rotate_interpolated(rope, x, positions, float(s)), rope.apply(x, np.arange(5)), rtol=0, atol=1e-12
    )


def test_angles_and_the_factor():
    rope = RoPE(4)
    np.testing.assert_array_equal(interpolated_angles(rope, [2], 4.0), [[0.5, 0.5 * 0.01]])
    with pytest.raises(FieldError) as err:
        interpolated_angles(rope, [1], 0.5)
    assert err.value.loc == ("factor",)
