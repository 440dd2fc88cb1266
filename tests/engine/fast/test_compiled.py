"""The compiled float32 block kernel (engine/fast/compiled.py): its 2^x, and tiled attention through it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine import attention
from attnlab.engine.fast import compiled
from attnlab.engine.fast import tiles as fast
from attnlab.engine.fast.tiled import tiled_attention

# scores the kernel gets: |s| <= the no-shift bound (30 natural units) in log2 units, plus rounding
REACH = 44.0


def _spy(monkeypatch):
    """Route fast's compiled kernel through a recorder; return the list of (first, end) rows it did."""
    real = compiled.kernel()
    assert real is not None, compiled.reason()
    calls = []

    def recording(*args):
        calls.append((args[5], args[6]))  # i0, i1 after qs, k, v, weights, weighted
        return real.attend(*args)

    monkeypatch.setattr(fast, "_compiled_kernel", lambda: real._replace(attend=recording))
    return calls


def _numpy_code_only(monkeypatch):
    monkeypatch.setattr(fast, "_compiled_kernel", lambda: None)


def test_the_kernel_builds_here():
    """numba is a dependency and NumPy's wheel ships the OpenBLAS it calls: no silent fallback."""
    assert compiled.kernel() is not None, compiled.reason()
    assert compiled.reason() == ""


def test_exp2_is_within_one_ulp_over_the_range_the_kernel_uses():
    halves = np.arange(-REACH, REACH) + 0.5  # where n = floor(x + 1/2) changes
    x = np.concatenate([
        np.linspace(-REACH, REACH, 4_000_001),
        halves, np.nextafter(halves, -np.inf), np.nextafter(halves, np.inf), np.arange(-REACH, REACH + 1),
    ]).astype(np.float32)  # fmt: skip
    s, sums = x.copy(), np.empty(1, np.float32)
    compiled._exp2_rows(s, 1, s.size, s.size, np.ones(1, np.float32), False, sums, True)
    # The reference is float64: whatever SIMD path NumPy's float64 exp2 takes on this CPU, its
    # error (a few float64 ulps, checked against Python's pow below) is ~1e-9 of a float32 ulp.
    # The bound is a property of our code alone, not relative to NumPy's float32 exp2, whose
    # accuracy depends on the CPU (0.50 ulp on one machine, 1.0 on another).
    exact = np.exp2(x.astype(np.float64))
    sample = np.linspace(0, x.size - 1, 20_001).astype(int)
    pow_ = np.array([2.0 ** float(t) for t in x[sample]])
    assert np.max(np.abs(exact[sample] - pow_) / pow_) <= 4 * np.finfo(np.float64).eps
    ulp = np.ldexp(1.0, np.frexp(exact)[1] - 24)  # float32's ulp in the exact value's binade
    ulps = np.abs(s.astype(np.float64) - exact) / ulp
    assert ulps.max() <= 1.0, (ulps.max(), x[np.argmax(ulps)])  # 0.94-0.95 on the CPUs seen


def test_prepare_heads_scales_q_and_bounds_every_score(rng):
    shapes = ((3, 37, 11), (3, 23, 11), (3, 23, 5))
    q32, k32, v32 = (rng.standard_normal(shape).astype(np.float32) for shape in shapes)
    qs, bound = np.empty_like(q32), np.empty((3, 37), np.float32)
    assert compiled.kernel().prepare(q32, k32, v32, np.float32(0.3), qs, bound)
    np.testing.assert_array_equal(qs, q32 * np.float32(0.3))
    scores = np.einsum("hld,hsd->hls", qs.astype(np.float64), k32.astype(np.float64))
    expected = np.linalg.norm(qs.astype(np.float64), axis=-1) * np.linalg.norm(k32, axis=-1).max(-1)[:, None]
    np.testing.assert_allclose(bound, expected, rtol=1e-6)
    assert np.all(np.abs(scores).max(-1) <= bound * (1 + 1e-6))  # Cauchy-Schwarz


@pytest.mark.parametrize(("field", "bad"), [("q", np.nan), ("q", -np.inf), ("k", np.nan), ("k", np.inf),
                                            ("v", np.nan), ("v", np.inf)])  # fmt: skip
def test_prepare_heads_sees_nan_and_inf(rng, field, bad):
    arrays = {"q": rng.standard_normal((2, 9, 4)), "k": rng.standard_normal((2, 7, 4)),
              "v": rng.standard_normal((2, 7, 3))}  # fmt: skip
    arrays = {name: a.astype(np.float32) for name, a in arrays.items()}
    arrays[field][1, 3, 2] = bad
    qs, bound = np.empty_like(arrays["q"]), np.empty((2, 9), np.float32)
    assert not compiled.kernel().prepare(arrays["q"], arrays["k"], arrays["v"], np.float32(1.0), qs, bound)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("limit0", "first"), [(3, True), (-2, False), (10**6, True)])
def test_exp2_rows_masks_weights_and_sums(rng, weighted, limit0, first):
    """Row r keeps columns c < limit0 + r (the rest become exact zeros) and adds sum_c w_c p_rc."""
    n_rows, cols = 6, 37
    x = rng.uniform(-REACH, REACH, (n_rows, cols)).astype(np.float32)
    w = (rng.random(cols) < 0.7).astype(np.float32)
    s, sums = x.ravel().copy(), np.full(n_rows, 2.5, np.float32)
    compiled._exp2_rows(s, n_rows, cols, limit0, w, weighted, sums, first)
    kept = np.arange(cols)[None, :] < limit0 + np.arange(n_rows)[:, None]
    p = np.where(kept, np.exp2(x.astype(np.float64)), 0.0)
    got = s.reshape(n_rows, cols)
    assert np.all(got[~kept] == 0.0)
    np.testing.assert_allclose(got[kept], p[kept], rtol=2e-7, atol=0)
    expected = (p * (w if weighted else 1.0)).sum(axis=1) + (0.0 if first else 2.5)
    np.testing.assert_allclose(sums, expected, rtol=2e-6, atol=0)


@pytest.mark.parametrize("block_q,block_k", [(1, 1), (7, 5), (64, 64), (16, None), (512, 512)])
@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
@pytest.mark.parametrize("padded", [False, True])
def test_tiled_float32_through_the_kernel(rng, monkeypatch, block_q, block_k, causal, padded):
    """Every block goes through the kernel; it agrees with float64 attention and with the NumPy code."""
    shapes = ((2, 3, 97, 59), (2, 3, 56, 59), (2, 3, 56, 15))
    q, k, v = (rng.standard_normal(shape) for shape in shapes)
    real = None
    if padded:
        real = rng.random((2, 1, 56)) < 0.7
        real[1] = False  # the second batch element: every key is padding, every row fully masked
    exact = attention(q, k, v, causal=causal, key_padding_mask=real, return_trace=True)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    plain32 = attention(q32, k32, v32, causal=causal, key_padding_mask=real).output
    kwargs = dict(causal=causal, key_padding_mask=real, block_q=block_q, block_k=block_k, backend="numpy")
    _numpy_code_only(monkeypatch)
    numpy_code = tiled_attention(q32, k32, v32, **kwargs)
    calls = _spy(monkeypatch)
    res = tiled_attention(q32, k32, v32, **kwargs)
    assert len(calls) == 6 * -(-97 // block_q)  # (batch x head) x query blocks: none left to NumPy
    assert res.output.dtype == np.float32 and res.output.shape == (2, 3, 97, 15)
    err = np.max(np.abs(res.output - exact.output))
    err_plain = np.max(np.abs(plain32 - exact.output))
    assert err <= 1e-5 and err <= 4 * err_plain, (err, err_plain)  # FlashAttention's float32 rule
    assert np.max(np.abs(res.output - numpy_code.output)) <= 2e-6
    np.testing.assert_array_equal(res.fully_masked, exact.fully_masked)
    live = ~exact.fully_masked
    assert np.all(res.output[~live] == 0.0) and np.all(np.isneginf(res.logsumexp[~live]))
    lse = exact.trace["max"][..., 0] + np.log(np.where(live, exact.trace["sum"][..., 0], 1.0))
    np.testing.assert_allclose(res.logsumexp[live], lse[live], rtol=2e-6, atol=2e-6)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 40), st.integers(1, 9), st.integers(1, 9),
    st.sampled_from([0.001, 1.0, 3.0]), st.sampled_from([None, "top_left", "bottom_right"]),
    st.integers(1, 16), st.one_of(st.none(), st.integers(1, 16)), st.booleans(), st.integers(1, 2),
)  # fmt: skip
def test_float32_tiled_matches_float64_attention(seed, L, S, d, dv, mag, causal, bq, bk, padded, threads):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, L, d)) * mag, rng.standard_normal((2, S, d)) * mag
    v = rng.standard_normal((2, S, dv))
    real = rng.random((2, S)) < 0.7 if padded else None
    exact = attention(q, k, v, causal=causal, key_padding_mask=real, return_trace=True)
    res = tiled_attention(*(a.astype(np.float32) for a in (q, k, v)), causal=causal, key_padding_mask=real,
                          block_q=bq, block_k=bk, threads=threads, backend="numpy")  # fmt: skip
    # float32 rounding of q and k moves each score by ~eps * |score|
    span = np.abs(v).max() * max(1.0, np.abs(exact.trace["scores"]).max())
    assert np.max(np.abs(res.output - exact.output)) <= 2e-6 * span
    np.testing.assert_array_equal(res.fully_masked, exact.fully_masked)


def test_k_and_v_that_are_not_contiguous_take_the_numpy_code(rng, monkeypatch):
    q = rng.standard_normal((2, 50, 16)).astype(np.float32)
    kv = rng.standard_normal((2, 80, 32)).astype(np.float32)
    k, v = kv[:, ::2, :16], kv[:, 1::2, 16:]  # strided views
    calls = _spy(monkeypatch)
    res = tiled_attention(q, k, v, causal="top_left", block_q=16, block_k=16)
    assert calls == []
    exact = attention(*(a.astype(np.float64) for a in (q, k, v)), causal="top_left")
    np.testing.assert_allclose(res.output, exact.output, rtol=0, atol=2e-6)


def test_rows_whose_weighted_values_overflow_are_flagged_by_the_kernel(rng, monkeypatch):
    q, k = (rng.standard_normal((1, 64, 8)).astype(np.float32) for _ in range(2))
    v = np.full((1, 64, 8), 3e37, np.float32)
    v[..., 1::2] *= -1.0
    calls = _spy(monkeypatch)
    redone = []
    real_rescue = fast._rescue
    monkeypatch.setattr(fast, "_rescue", lambda rows, *a: (redone.extend(rows), real_rescue(rows, *a)))
    res = tiled_attention(q, k, v, block_q=16, block_k=64)
    assert len(calls) == 4 and redone  # the kernel did the blocks and sent rows to the exact code
    exact = attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    assert np.isfinite(res.output).all()
    np.testing.assert_allclose(res.output, exact.output, rtol=1e-5, atol=0)


def test_without_a_usable_blas_the_numpy_code_runs(rng, monkeypatch):
    monkeypatch.setattr(compiled, "_SGEMM_SYMBOLS", ("no_such_sgemm",))
    monkeypatch.setattr(compiled, "_kernel", None)
    monkeypatch.setattr(compiled, "_reason", "")
    assert compiled.kernel() is None
    assert "no 64-bit-integer cblas_sgemm" in compiled.reason()
    q, k, v = (rng.standard_normal((2, 40, 8)).astype(np.float32) for _ in range(3))
    res = tiled_attention(q, k, v, causal="top_left", block_q=16, block_k=16)
    exact = attention(*(a.astype(np.float64) for a in (q, k, v)), causal="top_left")
    np.testing.assert_allclose(res.output, exact.output, rtol=0, atol=2e-6)


def test_a_kernel_that_fails_its_self_check_is_not_used(rng, monkeypatch):
    """The check compares a small causal, padded block with NumPy before the kernel is handed out."""
    real = compiled._attend

    def off_by_a_little(*args):
        real(*args)
        args[-3][:] *= np.float32(1.001)  # the output rows

    monkeypatch.setattr(compiled, "_attend", off_by_a_little)
    monkeypatch.setattr(compiled, "_kernel", None)
    monkeypatch.setattr(compiled, "_reason", "")
    assert compiled.kernel() is None
    assert "disagrees with NumPy" in compiled.reason()
    q, k, v = (rng.standard_normal((1, 30, 8)).astype(np.float32) for _ in range(3))
    exact = attention(*(a.astype(np.float64) for a in (q, k, v)))
    np.testing.assert_allclose(tiled_attention(q, k, v).output, exact.output, rtol=0, atol=2e-6)
