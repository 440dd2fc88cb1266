"""tiled_attention(): FlashAttention-2 forward, generic and NumPy paths, against plain attention."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine import attention
from attnlab.engine.fast.tiled import tiled_attention


def _lse(res):
    return res.trace["max"][..., 0] + np.log(np.where(res.fully_masked, 1.0, res.trace["sum"][..., 0]))


@pytest.mark.parametrize("block_q,block_k", [(1, 1), (7, 5), (64, 64), (1000, 1000), (16, None)])
@pytest.mark.parametrize("causal", [None, "top_left", "bottom_right"])
def test_both_backends_match_plain_attention(rng, block_q, block_k, causal):
    q, k, v = (
        rng.standard_normal((2, 3, 97, 59)),
        rng.standard_normal((2, 3, 56, 59)),
        rng.standard_normal((2, 3, 56, 15)),
    )
    plain = attention(q, k, v, causal=causal, return_trace=True)
    for backend in ("generic", "numpy"):
        res = tiled_attention(q, k, v, causal=causal, block_q=block_q, block_k=block_k, backend=backend)
        assert res.output.shape == (2, 3, 97, 15) and res.logsumexp.shape == (2, 3, 97)
        rel = np.max(np.abs(res.output - plain.output)) / np.max(np.abs(plain.output))
        assert rel <= (3e-15 if backend == "generic" else 3e-14), (backend, rel)
        np.testing.assert_array_equal(res.fully_masked, plain.fully_masked)
        live = ~plain.fully_masked
        np.testing.assert_allclose(res.logsumexp[live], _lse(plain)[live], rtol=1e-14, atol=1e-14)


def test_float32_paths_agree_with_the_float64_reference(rng):
    q, k, v = (rng.standard_normal((4, 300, 64)) for _ in range(3))
    ref = attention(q, k, v, causal="top_left").output
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    plain32 = attention(q32, k32, v32, causal="top_left").output
    err_plain = np.max(np.abs(plain32 - ref))
    for backend in ("generic", "numpy"):
        res = tiled_attention(q32, k32, v32, causal="top_left", block_q=32, block_k=48, backend=backend)
        assert res.output.dtype == np.float32 and res.logsumexp.dtype == np.float32
        err = np.max(np.abs(res.output - ref))
        # PyTorch's fp32 tolerance; FlashAttention's rule: within a few times the plain fp32 error
        assert err <= 1e-5 and err <= 4 * err_plain, (backend, err, err_plain)


def test_numpy_path_recomputes_rows_whose_bound_was_loose():
    """A long key with a tiny score makes the Cauchy-Schwarz bound far too big for every query."""
    q = np.array([[10.0, 0.0], [0.0, 10.0]])
    k = np.array([[0.0, 50.0], [1.0, 0.0], [2.0, 0.0]])
    v = np.array([[1.0], [2.0], [3.0]])
    plain = attention(q, k, v, scale=1.0)
    for dtype in (np.float64, np.float32):
        res = tiled_attention(*(a.astype(dtype) for a in (q, k, v)), scale=1.0, backend="numpy")
        np.testing.assert_allclose(res.output, plain.output, rtol=1e-6 if dtype == np.float32 else 1e-15)
        assert np.all(np.isfinite(res.logsumexp))


def test_fully_masked_rows_in_both_backends(rng):
    q, k, v = rng.standard_normal((10, 4)), rng.standard_normal((4, 4)), rng.standard_normal((4, 3))
    plain = attention(q, k, v, causal="bottom_right")  # L > S: the first 6 queries see nothing
    for backend in ("generic", "numpy"):
        res = tiled_attention(q, k, v, causal="bottom_right", block_q=4, block_k=3, backend=backend)
        assert res.fully_masked.tolist() == [True] * 6 + [False] * 4
        assert np.all(res.output[:6] == 0.0) and np.all(np.isneginf(res.logsumexp[:6]))
        np.testing.assert_allclose(res.output, plain.output, atol=1e-15)


def test_threads_do_not_change_the_numbers(rng):
    q, k, v = (rng.standard_normal((8, 130, 16)) for _ in range(3))
    one = tiled_attention(q, k, v, causal="top_left", block_q=32, block_k=None, threads=1, backend="numpy")
    two = tiled_attention(q, k, v, causal="top_left", block_q=32, block_k=None, threads=2, backend="numpy")
    np.testing.assert_array_equal(one.output, two.output)


def test_generic_path_on_every_namespace(xp, to_xp, to_np, rng):
    q, k, v = (
        rng.standard_normal((2, 23, 15)),
        rng.standard_normal((2, 56, 15)),
        rng.standard_normal((2, 56, 7)),
    )
    real = rng.random((2, 56)) < 0.8
    ref = attention(q, k, v, causal="bottom_right", key_padding_mask=real)
    res = tiled_attention(
        to_xp(q),
        to_xp(k),
        to_xp(v),
        causal="bottom_right",
        key_padding_mask=to_xp(real),
        block_q=8,
        block_k=16,
    )
    assert type(res.output) is type(to_xp(q))
    np.testing.assert_allclose(to_np(res.output), ref.output, rtol=0, atol=1e-14)


def test_bad_arguments(rng):
    q = np.ones((4, 2))
    with pytest.raises(ValueError, match="block_q must be a positive int, not 0"):
        tiled_attention(q, q, q, block_q=0)
    with pytest.raises(ValueError, match="block_k must be a positive int, not 2.5"):
        tiled_attention(q, q, q, block_k=2.5)
    with pytest.raises(ValueError, match="backend='cuda'"):
        tiled_attention(q, q, q, backend="cuda")
    with pytest.raises(ValueError, match="causal='diagonal' is not an alignment"):
        tiled_attention(q, q, q, causal="diagonal")
    with pytest.raises(ValueError, match=r"key_padding_mask has shape \(3,\)"):
        tiled_attention(q, q, q, key_padding_mask=np.ones(3, bool))
    with pytest.raises(ValueError, match=r"q has shape \(4, 2\) and k has shape \(4, 3\)"):
        tiled_attention(q, np.ones((4, 3)), q)
    import array_api_strict as xs

    with pytest.raises(ValueError, match="backend='numpy' needs NumPy arrays"):
        tiled_attention(xs.asarray(q), xs.asarray(q), xs.asarray(q), backend="numpy")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])  # float32: the compiled preparation
@pytest.mark.parametrize("backend", ["generic", "numpy"])
@pytest.mark.parametrize("field", ["q", "k", "v"])
def test_nan_and_inf_are_refused(rng, backend, field, dtype):
    arrays = {
        "q": rng.standard_normal((3, 40, 8)).astype(dtype),
        "k": rng.standard_normal((3, 50, 8)).astype(dtype),
        "v": rng.standard_normal((3, 50, 4)).astype(dtype),
    }
    arrays[field][2, 7, 1] = np.inf if field == "v" else np.nan
    shape = ", ".join(map(str, arrays[field].shape))
    with pytest.raises(ValueError, match=rf"{field} of shape \({shape}\) has 1 NaN or infinite entry"):
        tiled_attention(arrays["q"], arrays["k"], arrays["v"], backend=backend, threads=2)


def test_leading_dimensions_broadcast_in_both_backends(rng):
    q = rng.standard_normal((3, 10, 8))  # broadcast against k and v's (2, 1, ...)
    k, v = rng.standard_normal((2, 1, 12, 8)), rng.standard_normal((2, 1, 12, 5))
    real = rng.random((2, 1, 12)) < 0.8
    plain = attention(q, k, v, causal="top_left", key_padding_mask=real)
    for backend in ("generic", "numpy"):
        res = tiled_attention(
            q, k, v, causal="top_left", key_padding_mask=real, block_q=4, block_k=5, backend=backend
        )
        assert res.output.shape == (2, 3, 10, 5)
        np.testing.assert_allclose(res.output, plain.output, rtol=0, atol=1e-14)
        np.testing.assert_array_equal(res.fully_masked, plain.fully_masked)


@pytest.mark.parametrize("backend", ["generic", "numpy"])
def test_working_memory_is_tiles_not_the_score_matrix(rng, backend):
    """tracemalloc sees NumPy's allocations: plain attention holds L x S arrays, tiled does not."""
    import tracemalloc

    n, d = 2048, 16
    q, k, v = (rng.standard_normal((1, n, d)) for _ in range(3))
    score_matrix = n * n * 8  # one float64 L x S array: 32 MiB

    def extra_peak(run):
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        run()
        return tracemalloc.get_traced_memory()[1] - before

    tracemalloc.start()
    try:
        plain_peak = extra_peak(lambda: attention(q, k, v, causal="top_left"))
        tiled_peak = extra_peak(
            lambda: tiled_attention(q, k, v, causal="top_left", block_q=128, block_k=128, backend=backend)
        )
    finally:
        tracemalloc.stop()
    assert plain_peak > 3 * score_matrix
    assert tiled_peak < score_matrix / 8  # q, k, v copies, output and a few 128 x 128 tiles


def test_numpy_path_raises_far_negative_exponents_harmlessly():
    """Scores 100 below the bound are raised to the float32 floor (exp(-80)): no visible change."""
    q = np.array([[10.0, 0.0], [0.0, 1.0]])
    k = np.array([[5.0, 0.0], [-5.0, 0.0], [0.0, 0.5]])  # row 0: s - bound = 0, -100, -50
    v = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    plain = attention(q, k, v, scale=1.0)
    for dtype, tol in ((np.float32, 2e-7), (np.float64, 1e-15)):
        res = tiled_attention(*(a.astype(dtype) for a in (q, k, v)), scale=1.0, backend="numpy")
        np.testing.assert_allclose(res.output, plain.output, rtol=0, atol=tol)


def test_concurrent_calls_do_not_share_scratch_space(rng):
    from concurrent.futures import ThreadPoolExecutor

    inputs = [tuple(rng.standard_normal((2, 300, 16)) for _ in range(3)) for _ in range(6)]
    expected = [attention(*qkv, causal="top_left").output for qkv in inputs]
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda qkv: tiled_attention(*qkv, causal="top_left").output, inputs))
    for got, want in zip(results, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)


@pytest.mark.parametrize("backend", ["generic", "numpy"])
def test_overflowing_scores_get_attention_s_error(rng, backend):
    q, k, v = (rng.standard_normal((2, 40, 8)).astype(np.float32) for _ in range(3))
    with pytest.raises(ValueError, match="overflowed to infinity") as plain:
        attention(q * 1e20, k * 1e20, v)
    with pytest.raises(ValueError, match="overflowed to infinity") as tiled:
        tiled_attention(q * 1e20, k * 1e20, v, block_q=16, block_k=8, backend=backend)
    assert str(tiled.value) == str(plain.value)


def test_numpy_path_redoes_rows_whose_bound_overflowed(rng):
    """|q|^2 overflows float32 while every score stays finite: those rows are computed exactly."""
    q, k, v = (rng.standard_normal((2, 30, 8)).astype(np.float32) for _ in range(3))
    q[0, 3:7] *= 1e19  # |q| ~ 3e19: |q|^2 > 3.4e38, the bound |q| max|k| overflows
    k *= 1e-19
    fast = tiled_attention(q, k, v, block_q=8, block_k=16, backend="numpy")
    exact = attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    assert np.isfinite(fast.output).all() and np.isfinite(fast.logsumexp).all()
    np.testing.assert_allclose(fast.output, exact.output, rtol=0, atol=2e-6)


@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
@pytest.mark.parametrize(("n_q", "n_k"), [(1100, 1300), (1300, 1100)])
def test_default_tiles_split_the_causal_diagonal_exactly(rng, causal, n_q, n_k):
    """Blocks of 512 rows: full tiles left of the diagonal, then 128-row pieces up to their keys."""
    q, k = rng.standard_normal((2, n_q, 24)), rng.standard_normal((2, n_k, 24))
    v = rng.standard_normal((2, n_k, 5))
    plain = attention(q, k, v, causal=causal)
    res = tiled_attention(q, k, v, causal=causal)
    np.testing.assert_array_equal(res.fully_masked, plain.fully_masked)
    assert np.max(np.abs(res.output - plain.output)) <= 3e-14 * np.max(np.abs(plain.output))


@pytest.mark.parametrize(("dtype", "factor", "tol"), [(np.float32, 20.0, 3e-6), (np.float64, 120.0, 1e-13)])
def test_numpy_path_shifts_only_the_blocks_whose_bounds_are_large(rng, monkeypatch, dtype, factor, tol):
    """Small bounds: scores used unshifted; large ones: shifted by the bound. Both exact, no row redone.

    The second block's rows point along the longest key (the first, which every row sees),
    so their top score is near the bound and beyond what exp can take unshifted (88 in
    float32, 709 in float64).
    """
    from attnlab.engine.fast import tiles as fast

    def no_redo(*args):
        raise AssertionError("a row was redone exactly")

    monkeypatch.setattr(fast, "_rescue", no_redo)
    q, k, v = (rng.standard_normal((2, 40, 8)) for _ in range(3))
    norms = np.linalg.norm(k, axis=-1)
    k[:, 0] *= 1.2 * norms.max(axis=-1, keepdims=True) / norms[:, :1]
    q[:, 8:16] = factor * k[:, :1] + 0.1 * rng.standard_normal((2, 8, 8))
    scale = 8**-0.5
    bounds = np.linalg.norm(q * scale, axis=-1) * np.linalg.norm(k, axis=-1).max(axis=-1, keepdims=True)
    per_block = bounds.reshape(2, 5, 8).max(axis=-1)
    limit = fast._NO_SHIFT[np.dtype(dtype)]
    assert (per_block[:, 1] > limit).all() and (np.delete(per_block, 1, axis=1) <= limit).all()
    exact = attention(q, k, v, causal="bottom_right", return_trace=True)
    assert (exact.trace["max"][:, 8:16] > np.log(np.finfo(dtype).max)).all()
    res = tiled_attention(*(a.astype(dtype) for a in (q, k, v)), causal="bottom_right",
                          block_q=8, block_k=16, backend="numpy")  # fmt: skip
    np.testing.assert_allclose(res.output, exact.output, rtol=0, atol=tol)
    lse = exact.trace["max"][..., 0] + np.log(exact.trace["sum"][..., 0])
    np.testing.assert_allclose(res.logsumexp, lse, rtol=tol, atol=0)


def test_numpy_path_redoes_rows_whose_weighted_values_overflow(rng):
    """p v summed over keys can pass float32's range while the weighted average cannot."""
    q, k = (rng.standard_normal((1, 64, 8)).astype(np.float32) for _ in range(2))
    v = np.full((1, 64, 8), 3e37, np.float32)
    v[..., 1::2] *= -1.0
    fast = tiled_attention(q, k, v, block_q=16, block_k=64, backend="numpy")
    exact = attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    assert np.isfinite(fast.output).all()
    np.testing.assert_allclose(fast.output, exact.output, rtol=1e-5, atol=0)
