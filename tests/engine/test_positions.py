"""Sinusoidal and learned positions, and RoPE in both pair layouts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.engine import RoPE, embed, learned_positions, sinusoidal_positions


def test_sinusoidal_table_follows_the_paper():
    pe = sinusoidal_positions(50, 7)
    assert pe.shape == (50, 7) and pe.dtype == np.float64
    for p in (0, 1, 17, 49):
        for col in range(7):
            i = col // 2
            angle = p / 10000.0 ** (2 * i / 7)
            expected = math.sin(angle) if col % 2 == 0 else math.cos(angle)
            assert pe[p, col] == pytest.approx(expected, abs=1e-15)
    np.testing.assert_array_equal(sinusoidal_positions(3, 7, offset=17), pe[17:20])
    small_base = sinusoidal_positions(4, 4, base=100.0)
    assert small_base[3, 2] == pytest.approx(math.sin(3 / 10.0), abs=1e-15)


def test_sinusoidal_on_another_namespace():
    import array_api_strict as xs

    pe = sinusoidal_positions(5, 6, like=xs.zeros(1, dtype=xs.float32))
    assert pe.dtype == xs.float32
    np.testing.assert_allclose(np.from_dlpack(pe), sinusoidal_positions(5, 6), atol=1e-7)


def test_learned_positions_are_rows_of_the_table(rng):
    table = rng.standard_normal((10, 4))
    np.testing.assert_array_equal(learned_positions(table, [3, 0, 3]), table[[3, 0, 3]])
    ids = np.array([[1, 2], [9, 0]])
    assert embed(table, ids).shape == (2, 2, 4)
    with pytest.raises(ValueError, match=r"positions range over \[0, 10\]; the table has rows 0..9"):
        learned_positions(table, [0, 10])
    with pytest.raises(ValueError, match="ids must be integers"):
        embed(table, np.array([0.5]))


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_rope_scores_depend_on_relative_position_only(rng, convention):
    rope = RoPE(8, base=500.0, convention=convention)
    q, k = rng.standard_normal(8), rng.standard_normal(8)

    def score(p, r):
        return float(rope.apply(q[None], [p])[0] @ rope.apply(k[None], [r])[0])

    assert score(5, 2) == pytest.approx(score(105, 102), abs=1e-11)
    assert score(0, 7) == pytest.approx(score(30, 37), abs=1e-11)
    assert score(5, 2) != pytest.approx(score(5, 3), abs=1e-3)


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_rope_rotates_pairs_preserving_norms(rng, convention):
    rope = RoPE(6, convention=convention)
    x = rng.standard_normal((2, 5, 6))
    y = rope.apply(x, np.arange(5))
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), atol=1e-14)
    np.testing.assert_array_equal(y[:, 0], x[:, 0])  # position 0: no rotation


def test_rope_worked_rotation_in_both_layouts():
    theta = 3 * 10.0 ** (-2 * 1 / 4)  # position 3, pair 1 of head_dim 4, base 10
    x = np.array([1.0, 2.0, 3.0, 4.0])
    half = RoPE(4, base=10.0, convention="half").apply(x[None], [3])[0]
    # half pairs (0, 2) and (1, 3); pair 1 is (2.0, 4.0)
    assert half[1] == pytest.approx(2 * math.cos(theta) - 4 * math.sin(theta), abs=1e-15)
    assert half[3] == pytest.approx(4 * math.cos(theta) + 2 * math.sin(theta), abs=1e-15)
    inter = RoPE(4, base=10.0, convention="interleaved").apply(x[None], [3])[0]
    # interleaved pairs (0, 1) and (2, 3); pair 1 is (3.0, 4.0)
    assert inter[2] == pytest.approx(3 * math.cos(theta) - 4 * math.sin(theta), abs=1e-15)
    assert inter[3] == pytest.approx(3 * math.sin(theta) + 4 * math.cos(theta), abs=1e-15)


def test_the_two_layouts_are_a_permutation_apart(rng):
    """Interleaved RoPE on x equals half RoPE on x with its coordinates de-interleaved."""
    x = rng.standard_normal((7, 10))
    perm = np.concatenate([np.arange(0, 10, 2), np.arange(1, 10, 2)])  # 0 2 4 6 8 1 3 5 7 9
    inter = RoPE(10, convention="interleaved").apply(x, np.arange(7))
    half = RoPE(10, convention="half").apply(x[:, perm], np.arange(7))
    np.testing.assert_allclose(inter[:, perm], half, atol=1e-15)


def test_rope_on_every_namespace(xp, to_xp, to_np, rng):
    x = rng.standard_normal((3, 5, 8))
    for convention in ("half", "interleaved"):
        rope = RoPE(8, convention=convention)
        np.testing.assert_allclose(
            to_np(rope.apply(to_xp(x), list(range(5)))), rope.apply(x, np.arange(5)), rtol=0, atol=1e-15
        )


def test_bad_rope_settings():
    with pytest.raises(ValueError, match="even head_dim"):
        RoPE(5)
    with pytest.raises(ValueError, match=r"convention='neox'"):
        RoPE(4, convention="neox")
    with pytest.raises(ValueError, match="base must be positive"):
        RoPE(4, base=0.0)
    with pytest.raises(ValueError, match=r"x has shape \(2, 6\); RoPE was built for head_dim=4"):
        RoPE(4).apply(np.ones((2, 6)), [0, 1])
    with pytest.raises(ValueError, match="positions give 3 positions; x has 2 rows"):
        RoPE(4).apply(np.ones((2, 4)), [0, 1, 2])
