"""The programs' shared pieces, run here: each gives the bits of the engine code it mirrors.

The pieces are program text; each test runs the pieces it checks (our own text, never input)
in a namespace with the constants a program defines, on random arrays of SmolLM2's shapes,
and compares with the engine's fast path (its NumPy steps, and its compiled steps where they
run here) bit for bit. The fused multiply-add emulation is checked against exact rational
arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnlab.engine.fast.decode import _product, steps
from attnlab.engine.layers import RMSNormParams
from attnlab.engine.positions import RoPE
from attnlab.lab.realmodel.program import pieces

SHAPE = {"N_HEAD": 9, "N_KV_HEAD": 3, "GROUP": 3, "D_HEAD": 64, "D_MODEL": 576, "D_FF": 1536, "EPS": 1e-5,
         "ROPE_BASE": 100000.0}  # fmt: skip
KERNELS = steps.kernels()


def run(*texts: str) -> dict:
    names = {"np": np, "math": math, **SHAPE}
    for text in texts:
        exec(text, names)  # noqa: S102 - the pieces are our own program text
    return names


def same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


float32s = st.floats(width=32, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(float32s, float32s, float32s)
def test_fma32_rounds_a_times_b_plus_c_once_to_the_nearest_float32(a, b, c):
    fma32 = run(pieces.FMA)["fma32"]
    with np.errstate(over="ignore"):  # a sum past float32's range is no rounding to check
        got = fma32(np.float32([a]), np.float32([b]), np.float32([c]))[0]
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
    fma32 = run(pieces.FMA)["fma32"]
    a = np.float32([1 + 2**-12])  # a * a = 1 + 2^-11 + 2^-24: the last bit is lost unless fused
    fused = fma32(a, a, np.float32([-1.0]))[0]
    assert float(fused) == 2**-11 + 2**-24
    assert float(a[0] * a[0] - np.float32(1)) == 2**-11


def test_fma32_does_not_round_twice():
    """a · b + c = 1 + 2^-23 + 2^-24 - 2^-70: just below a float32 midpoint, so it rounds down to 1 + 2^-23.
    Rounded to float64 first, it lands on the midpoint, whose tie goes up to 1 + 2^-22: round to odd
    avoids it."""
    fma32 = run(pieces.FMA)["fma32"]
    a, b, c = np.float32([2**-24 * (1 + 2**-23)]), np.float32([1 - 2**-23]), np.float32([1 + 2**-23])
    assert float(fma32(a, b, c)[0]) == 1 + 2**-23
    assert float((a.astype(np.float64) * b + c).astype(np.float32)[0]) == 1 + 2**-22  # rounded twice


@pytest.mark.parametrize("rows", [5, 40])
def test_rms16_and_the_products_give_the_fast_paths_bits(rows):
    names = run(pieces.SMOLLM_FAST)
    rng = np.random.default_rng(rows)
    x = (rng.standard_normal((rows, 576)) * 3).astype(np.float32)
    weight = rng.standard_normal(576).astype(np.float32)
    norm = RMSNormParams(weight, 1e-5)
    assert same(names["rms16_numpy"](x, weight), steps.rms(x, norm, None))
    if KERNELS is not None:
        assert same(names["rms16"](x, weight), steps.rms(x, norm, KERNELS))
    for width in (960, 576, 3072):
        w = rng.standard_normal((576, width)).astype(np.float32)
        assert same(names["product"](x, w), _product(x, w))


@pytest.mark.parametrize(("n", "compiled"), [(9, True), (9, False), (70, True)])
def test_each_attention_variant_gives_the_fast_paths_bits(n, compiled):
    if compiled and KERNELS is None:
        pytest.skip(f"attnlab's compiled steps do not run here: {steps.reason()}")
    names = run(pieces.ROPE, *pieces.fast_pieces(n, compiled))
    rng = np.random.default_rng(n)
    qkv = (rng.standard_normal((n, 960)) * 2).astype(np.float32)
    rope = RoPE(head_dim=64, base=100000.0, convention="interleaved")
    qk = steps.rotate_qk(rope, qkv, 12, 64, np.arange(n), KERNELS if compiled else None)
    assert same(names["rotate_qk"](qkv, n), qk)
    keys = qk[:, 9:].transpose(1, 0, 2)
    values = qkv[:, 768:].reshape(n, 3, 64).transpose(1, 0, 2)
    weights, _, side = steps.attend(qk, 9, keys, values, 3, np.float32(0.125), KERNELS if compiled else None)
    w, z = names["attend"](qk, keys, values)
    assert same(w, weights) and same(z, side)


def test_the_fast_block_keeps_silu_in_the_engines_order():
    names = run(pieces.ROPE, *pieces.fast_pieces(4, KERNELS is not None))
    rng = np.random.default_rng(3)
    gate_up = (rng.standard_normal((20, 3072)) * 4).astype(np.float32)
    assert same(names["silu_up"](gate_up), steps.gated(gate_up, 1536, None))
