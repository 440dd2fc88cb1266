"""The compiled loops in NumPy (engine/fast/decode/numpy_kernels.py): each gives the kernel's bits.

Every function runs on the same arrays as its kernel (kernels.py, where numba compiles it) and is
compared byte for byte; the fused multiply-add is checked against exact rational arithmetic.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnlab.engine.fast.decode import numpy_kernels as nk
from attnlab.engine.fast.decode import steps


@pytest.fixture
def kernels():
    k = steps.kernels()
    if k is None:
        pytest.skip(f"attnlab's compiled steps do not run here: {steps.reason()}")
    return k


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(float32s, float32s, float32s)
def test_fma32_rounds_a_times_b_plus_c_once_to_the_nearest_float32(a, b, c):
    with np.errstate(over="ignore"):  # a sum past float32's range is no rounding to check
        got = nk.fma32(np.float32([a]), np.float32([b]), np.float32([c]))[0]
    assume(np.isfinite(got) and abs(got) < np.finfo(np.float32).max)
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    error = abs(Fraction(float(got)) - exact)
    for toward in (-np.inf, np.inf):
        neighbour = np.nextafter(got, np.float32(toward))
        if np.isfinite(neighbour):
            other = abs(Fraction(float(neighbour)) - exact)
            assert error <= other
            if error == other:  # a tie goes to the even mantissa
                assert int(np.float32(got).view(np.int32)) % 2 == 0


def test_fma32_is_not_a_product_then_a_sum():
    a = np.float32([1 + 2**-12])  # a * a = 1 + 2^-11 + 2^-24: the last bit is lost unless fused
    assert float(nk.fma32(a, a, np.float32([-1.0]))[0]) == 2**-11 + 2**-24
    assert float(a[0] * a[0] - np.float32(1)) == 2**-11


def test_fma32_does_not_round_twice():
    """a · b + c = 1 + 2^-23 + 2^-24 - 2^-70: just below a float32 midpoint, so it rounds down to 1 + 2^-23.
    Rounded to float64 first, it lands on the midpoint, whose tie goes up to 1 + 2^-22: round to odd
    avoids it."""
    a, b, c = np.float32([2**-24 * (1 + 2**-23)]), np.float32([1 - 2**-23]), np.float32([1 + 2**-23])
    assert float(nk.fma32(a, b, c)[0]) == 1 + 2**-23
    assert float((a.astype(np.float64) * b + c).astype(np.float32)[0]) == 1 + 2**-22  # rounded twice


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("d", "with_weight"), [(576, True), (96, False), (37, True)])
def test_rms_rows_gives_the_kernels_bits(rng, kernels, dtype, d, with_weight):
    """Whole lines of 16 and a tail (37 = 2 · 16 + 5), float32 and float64, with and without γ."""
    x = (rng.standard_normal((9, d)) * rng.uniform(0.01, 100, (9, 1))).astype(dtype)
    weight = rng.standard_normal(d).astype(dtype) if with_weight else np.empty(0, dtype)
    got, want = np.empty_like(x), np.empty_like(x)
    nk.rms_rows(x, weight, dtype(1e-5), got)
    kernels.rms_rows(x, weight, dtype(1e-5), want)
    assert same(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("half", [True, False])
def test_rotate_heads_gives_the_kernels_bits(rng, kernels, dtype, half):
    qkv = (rng.standard_normal((6, 12 * 64 + 3 * 64)) * 3).astype(dtype)
    angles = np.arange(6)[:, None] * rng.uniform(0, 1, 32)[None, :]
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    got, want = np.empty((6, 12, 64), dtype), np.empty((6, 12, 64), dtype)
    nk.rotate_heads(qkv, 12, 64, cos, sin, half, got)
    kernels.rotate_heads(qkv, 12, 64, cos, sin, half, want)
    assert same(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_silu_gives_the_kernels_bits_edges_included(rng, kernels, dtype):
    gate_up = (rng.standard_normal((5, 96)) * 8).astype(dtype)
    gate_up[0, :9] = [0.0, -0.0, 1e-30, -1e-30, 90.0, -90.0, -200.0, 200.0, np.nan]
    got, want = np.empty((5, 48), dtype), np.empty((5, 48), dtype)
    nk.silu_start(gate_up, 48, got)
    kernels.silu_start(gate_up, 48, want)
    assert same(got, want)
    np.exp(got, out=got)
    np.exp(want, out=want)
    nk.silu_finish(gate_up, 48, got)
    kernels.silu_finish(gate_up, 48, want)
    nan = np.isnan(want)  # NaN stays NaN (its sign and payload are no number's bits)
    assert np.array_equal(np.isnan(got), nan) and nan.sum() == 1
    assert same(got[~nan], want[~nan])


@pytest.mark.parametrize(("n", "s"), [(1, 1), (1, 9), (9, 9), (5, 12), (23, 23)])
def test_the_attention_loops_give_the_kernels_bits(rng, kernels, n, s):
    """Scores (raw, and less each row's maximum), the rows normalised, the values mixed: a prompt
    (n = s), a decoding step on a cache (n < s), GQA with 3 query heads a KV head."""
    n_head, n_kv, d = 9, 3, 64
    qk = (rng.standard_normal((n, n_head + n_kv, d)) * 2).astype(np.float32)
    k = (rng.standard_normal((n_kv, s, d)) * 2).astype(np.float32)
    v = rng.standard_normal((n_kv, s, d)).astype(np.float32)
    scale = np.float32(0.125)
    for name in ("raw_scores", "scores"):
        got, want = np.empty((n_head, n, s), np.float32), np.empty((n_head, n, s), np.float32)
        assert getattr(nk, name)(qk, n_head, k, 3, scale, got) is True
        assert getattr(kernels, name)(qk, n_head, k, 3, scale, want) is True
        assert same(got, want)
    np.exp(got, out=got)
    np.exp(want, out=want)
    normalized, side = got.copy(), np.empty((n, n_head * d), np.float32)
    nk.normalize(normalized)
    kernels.normalize(want)
    assert same(normalized, want)
    expected = np.empty_like(side)
    nk.mix_rows(normalized, v, 3, side)
    kernels.mix_rows(want, v, 3, expected)
    assert same(side, expected)
    both = np.empty_like(side)
    nk.mix(got, v, 3, both)  # normalize, then mix_rows
    assert same(both, expected) and same(got, want)


def test_a_score_that_overflows_is_refused_as_the_kernel_refuses_it(kernels):
    qk = np.full((2, 2, 16), 3e19, np.float32)
    k = np.full((1, 2, 16), 3e19, np.float32)
    w = np.empty((1, 2, 2), np.float32)
    assert nk.scores(qk, 1, k, 1, np.float32(1.0), w) is False
    assert kernels.scores(qk, 1, k, 1, np.float32(1.0), np.empty_like(w)) is False


def test_the_mix_is_a_chain_of_fused_multiply_adds_not_a_plain_sum():
    """One row, one lane: w = (1, 1 + 2^-12), v = (-1, 1 + 2^-12): -1, then fused -1 + w1 · v1 keeps the
    product's last bit (2^-24), which a rounded product would lose."""
    w = np.float32([[[1.0, 1 + 2**-12]]])
    v = np.zeros((1, 2, 16), np.float32)
    v[0, :, 0] = [-1.0, 1 + 2**-12]
    out = np.empty((1, 16), np.float32)
    nk.mix_rows(w, v, 1, out)
    assert float(out[0, 0]) == 2**-11 + 2**-24
