"""Invariants of attention checked with hypothesis over shapes, masks and magnitudes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine import (
    AttentionParams,
    KVCache,
    RoPE,
    attention,
    multi_head_attention,
)
from attnlab.engine.fast.tiled import tiled_attention

SETTINGS = settings(max_examples=50, deadline=None)

dims = st.integers(1, 9)
seeds = st.integers(0, 2**32 - 1)
magnitudes = st.sampled_from([1e-3, 1.0, 5.0, 30.0])  # 30: logits in the hundreds
alignments = st.sampled_from([None, "top_left", "bottom_right"])


def _inputs(seed, batch, L, S, d, dv, magnitude):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, L, d)) * magnitude
    k = rng.standard_normal((batch, S, d)) * magnitude
    v = rng.standard_normal((batch, S, dv))
    return rng, q, k, v


@SETTINGS
@given(seeds, dims, dims, dims, dims, dims, magnitudes, alignments, st.floats(0.0, 0.9))
def test_rows_sum_to_one_and_blocked_weights_are_zero(seed, b, L, S, d, dv, mag, causal, p_block):
    rng, q, k, v = _inputs(seed, b, L, S, d, dv, mag)
    mask = rng.random((b, L, S)) >= p_block
    res = attention(q, k, v, mask=mask, causal=causal)
    allowed = mask if causal is None else mask & _causal(L, S, causal)
    assert np.all(res.weights[~allowed] == 0.0) and np.all(res.weights >= 0.0)
    sums = res.weights.sum(-1)
    live = allowed.any(-1)
    np.testing.assert_allclose(sums[live], 1.0, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(res.fully_masked, ~live)
    assert np.all(sums[~live] == 0.0) and np.all(res.output[~live] == 0.0)
    assert not np.isnan(res.output).any()
    # the output is a convex combination of the allowed values
    top, bottom = v.max(axis=1, keepdims=True), v.min(axis=1, keepdims=True)
    assert np.all(res.output[live] <= np.broadcast_to(top, res.output.shape)[live] + 1e-12)
    assert np.all(res.output[live] >= np.broadcast_to(bottom, res.output.shape)[live] - 1e-12)


def _causal(L, S, alignment):
    offset = 0 if alignment == "top_left" else S - L
    return np.arange(S)[None, :] <= np.arange(L)[:, None] + offset


@SETTINGS
@given(seeds, dims, dims, st.integers(2, 9), dims, dims, magnitudes)
def test_masked_keys_contents_do_not_matter(seed, b, L, S, d, dv, mag):
    rng, q, k, v = _inputs(seed, b, L, S, d, dv, mag)
    real = rng.random((b, S)) < 0.6
    real[:, 0] = True
    before = attention(q, k, v, key_padding_mask=real)
    k2, v2 = k.copy(), v.copy()
    k2[~real] = rng.standard_normal(k2[~real].shape) * 1e6
    v2[~real] = rng.standard_normal(v2[~real].shape) * 1e6
    after = attention(q, k2, v2, key_padding_mask=real)
    np.testing.assert_array_equal(after.output, before.output)
    np.testing.assert_array_equal(after.weights, before.weights)


@SETTINGS
@given(
    seeds,
    st.integers(1, 3),
    st.sampled_from([(4, 2), (6, 3), (6, 1), (8, 4), (3, 3)]),
    dims,
    dims,
    dims,
    alignments,
)
def test_gqa_equals_explicitly_repeated_kv_heads(seed, b, heads, L, S, d, causal):
    n_head, n_kv = heads
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, n_head, L, d))
    k, v = rng.standard_normal((b, n_kv, S, d)), rng.standard_normal((b, n_kv, S, d))
    mask = rng.random((b, n_head, L, S)) < 0.8
    group = n_head // n_kv
    grouped = attention(q, k, v, mask=mask, causal=causal, enable_gqa=True)
    repeated = attention(
        q, np.repeat(k, group, axis=1), np.repeat(v, group, axis=1), mask=mask, causal=causal
    )
    np.testing.assert_allclose(grouped.output, repeated.output, rtol=0, atol=1e-14)
    np.testing.assert_allclose(grouped.weights, repeated.weights, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(grouped.fully_masked, repeated.fully_masked)


@SETTINGS
@given(seeds, dims, dims, dims, dims, magnitudes)
def test_bottom_right_equals_top_left_when_square(seed, b, L, d, dv, mag):
    _, q, k, v = _inputs(seed, b, L, L, d, dv, mag)
    top = attention(q, k, v, causal="top_left")
    bottom = attention(q, k, v, causal="bottom_right")
    np.testing.assert_array_equal(top.output, bottom.output)
    np.testing.assert_array_equal(top.weights, bottom.weights)


@SETTINGS
@given(
    seeds,
    st.integers(1, 40),
    st.integers(1, 40),
    dims,
    dims,
    magnitudes,
    alignments,
    st.integers(1, 17),
    st.integers(1, 17),
    st.booleans(),
)
def test_tiled_equals_plain(seed, L, S, d, dv, mag, causal, block_q, block_k, padded):
    rng, q, k, v = _inputs(seed, 2, L, S, d, dv, mag)
    real = rng.random((2, S)) < 0.7 if padded else None
    plain = attention(q, k, v, causal=causal, key_padding_mask=real, return_trace=True)
    # rounding: exp(s - m) carries an absolute error of ~eps * |s| whatever the order, so the
    # bound grows with the largest score (logits in the hundreds at magnitude 30)
    span = np.abs(v).max() * max(1.0, np.abs(plain.trace["scores"]).max())
    lse_ref = plain.trace["max"][..., 0] + np.log(
        np.where(plain.fully_masked, 1.0, plain.trace["sum"][..., 0])
    )
    for backend, tol in (("generic", 4e-15), ("numpy", 2e-14)):
        tiled = tiled_attention(
            q, k, v, causal=causal, key_padding_mask=real, block_q=block_q, block_k=block_k, backend=backend
        )
        assert np.max(np.abs(tiled.output - plain.output)) <= tol * span, backend
        np.testing.assert_array_equal(tiled.fully_masked, plain.fully_masked)
        live = ~plain.fully_masked
        np.testing.assert_allclose(tiled.logsumexp[live], lse_ref[live], rtol=1e-13, atol=1e-12)
        assert np.all(np.isneginf(tiled.logsumexp[~live]))


@SETTINGS
@given(seeds, st.integers(1, 10), st.sampled_from([(2, 1), (4, 2), (2, 2)]), st.booleans())
def test_kv_cache_equals_full_recompute(seed, L, heads, use_rope):
    n_head, n_kv = heads
    rng = np.random.default_rng(seed)
    d_model, d_head = 8, 4
    params = AttentionParams(
        w_q=rng.standard_normal((d_model, n_head * d_head)),
        w_k=rng.standard_normal((d_model, n_kv * d_head)),
        w_v=rng.standard_normal((d_model, n_kv * d_head)),
        w_o=rng.standard_normal((n_head * d_head, d_model)),
        b_q=rng.standard_normal(n_head * d_head),
    )
    rope = RoPE(d_head, base=100.0, convention="interleaved") if use_rope else None
    x = rng.standard_normal((2, L, d_model))
    kwargs = dict(n_head=n_head, n_kv_head=n_kv, causal="bottom_right", rope=rope)
    full = multi_head_attention(x, params, **kwargs)
    cache = KVCache()
    steps = [multi_head_attention(x[:, i : i + 1], params, cache=cache, **kwargs) for i in range(L)]
    np.testing.assert_allclose(
        np.concatenate([s.output for s in steps], axis=1), full.output, rtol=0, atol=1e-12
    )
    assert cache.length == L
    last = steps[-1].weights[..., 0, :]  # the last token's weights over every key
    np.testing.assert_allclose(last, full.weights[..., -1, :], rtol=0, atol=1e-14)


@SETTINGS
@given(seeds, dims, st.integers(2, 9), dims, dims, magnitudes)
def test_permuting_keys_with_values_changes_nothing(seed, b, L, S, d, mag):
    rng, q, k, v = _inputs(seed, b, L, S, d, d, mag)
    real = rng.random((b, S)) < 0.8
    perm = rng.permutation(S)
    before = attention(q, k, v, key_padding_mask=real)
    after = attention(q, k[:, perm], v[:, perm], key_padding_mask=real[:, perm])
    np.testing.assert_allclose(after.output, before.output, rtol=0, atol=1e-13 * max(1.0, np.abs(v).max()))
    np.testing.assert_allclose(after.weights, before.weights[..., perm], rtol=0, atol=1e-14)


@SETTINGS
@given(seeds, st.integers(2, 5), dims, dims, dims, alignments)
def test_batch_elements_are_independent(seed, b, L, S, d, causal):
    rng, q, k, v = _inputs(seed, b, L, S, d, d, 1.0)
    together = attention(q, k, v, causal=causal)
    for i in range(b):
        alone = attention(q[i], k[i], v[i], causal=causal)
        np.testing.assert_allclose(together.output[i], alone.output, rtol=0, atol=1e-15)
    k2 = k.copy()
    k2[1:] = rng.standard_normal(k2[1:].shape)
    np.testing.assert_array_equal(attention(q, k2, v, causal=causal).output[0], together.output[0])


@SETTINGS
@given(seeds, dims, st.integers(1, 9), dims, dims, magnitudes, st.data())
def test_fully_masked_row_gives_zeros(seed, b, L, S, d, mag, data):
    rng, q, k, v = _inputs(seed, b, L, S, d, d, mag)
    mask = rng.random((b, L, S)) < 0.5
    row = data.draw(st.integers(0, L - 1))
    mask[:, row] = False
    res = attention(q, k, v, mask=mask)
    assert np.all(res.fully_masked[:, row])
    assert np.all(res.output[:, row] == 0.0) and np.all(res.weights[:, row] == 0.0)
    real = np.ones((b, S), bool)
    real[0] = False  # batch element 0 is all padding: every row is fully masked
    for backend in ("generic", "numpy"):
        tiled = tiled_attention(q, k, v, key_padding_mask=real, block_q=3, block_k=2, backend=backend)
        assert np.all(tiled.output[0] == 0.0) and np.all(tiled.fully_masked[0])
        assert np.all(np.isneginf(tiled.logsumexp[0])) and not np.isnan(tiled.output).any()
