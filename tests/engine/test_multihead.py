"""multi_head_attention(): heads, GQA, cross-attention, masks, RoPE, cache and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine import (
    AttentionParams,
    KVCache,
    RoPE,
    attention,
    merge_heads,
    multi_head_attention,
    split_heads,
)


def _params(rng, d_model=12, n_head=4, n_kv=None, d_head=3, d_ctx=None, bias=True):
    n_kv = n_head if n_kv is None else n_kv
    d_ctx = d_model if d_ctx is None else d_ctx
    return AttentionParams(
        w_q=rng.standard_normal((d_model, n_head * d_head)),
        w_k=rng.standard_normal((d_ctx, n_kv * d_head)),
        w_v=rng.standard_normal((d_ctx, n_kv * d_head)),
        w_o=rng.standard_normal((n_head * d_head, d_model)),
        b_q=rng.standard_normal(n_head * d_head) if bias else None,
        b_k=rng.standard_normal(n_kv * d_head) if bias else None,
        b_v=rng.standard_normal(n_kv * d_head) if bias else None,
        b_o=rng.standard_normal(d_model) if bias else None,
    )


def _by_hand(x, p, n_head, n_kv, ctx=None, **kwargs):
    """Each head separately, the loop a textbook would write."""
    ctx = x if ctx is None else ctx
    d_head = p.w_q.shape[1] // n_head
    q, k, v = x @ p.w_q + p.b_q, ctx @ p.w_k + p.b_k, ctx @ p.w_v + p.b_v
    heads = []
    for h in range(n_head):
        g = h // (n_head // n_kv)
        cols, kv_cols = slice(h * d_head, (h + 1) * d_head), slice(g * d_head, (g + 1) * d_head)
        heads.append(attention(q[..., cols], k[..., kv_cols], v[..., kv_cols], **kwargs).output)
    return np.concatenate(heads, axis=-1) @ p.w_o + p.b_o


@pytest.mark.parametrize("n_head,n_kv", [(4, 4), (4, 2), (4, 1)])
def test_heads_match_a_loop_over_heads(rng, n_head, n_kv):
    p = _params(rng, n_head=n_head, n_kv=n_kv)
    x = rng.standard_normal((2, 7, 12))
    res = multi_head_attention(x, p, n_head=n_head, n_kv_head=n_kv, causal="top_left")
    np.testing.assert_allclose(res.output, _by_hand(x, p, n_head, n_kv, causal="top_left"), atol=1e-13)
    assert res.weights.shape == (2, n_head, 7, 7) and res.heads.shape == (2, n_head, 7, 3)
    assert res.fully_masked.shape == (2, n_head, 7)
    np.testing.assert_allclose(res.mean_weights, res.weights.mean(axis=1), atol=1e-16)


def test_cross_attention_reads_keys_from_the_context(rng):
    p = _params(rng, d_ctx=5)
    x, ctx = rng.standard_normal((3, 12)), rng.standard_normal((8, 5))
    res = multi_head_attention(x, p, n_head=4, context=ctx)
    np.testing.assert_allclose(res.output, _by_hand(x, p, 4, 4, ctx=ctx), atol=1e-13)
    assert res.weights.shape == (4, 3, 8)


def test_mask_layouts(rng):
    p = _params(rng)
    x = rng.standard_normal((2, 5, 12))
    shared = rng.random((5, 5)) < 0.7
    per_batch = np.broadcast_to(shared, (2, 5, 5))
    per_head = np.broadcast_to(shared, (2, 4, 5, 5))
    ref = multi_head_attention(x, p, n_head=4, mask=shared).output
    for m in (per_batch, per_head):
        np.testing.assert_array_equal(multi_head_attention(x, p, n_head=4, mask=m).output, ref)
    real = np.array([[True] * 5, [True, True, True, False, False]])
    padded = multi_head_attention(x, p, n_head=4, key_padding_mask=real)
    assert np.all(padded.weights[1, :, :, 3:] == 0.0)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 2, 4, 5, 5\)"):
        multi_head_attention(x, p, n_head=4, mask=np.ones((3, 2, 4, 5, 5), bool))


def test_trace_names_and_shapes(rng):
    p = _params(rng, n_head=4, n_kv=2)
    x = rng.standard_normal((2, 5, 12))
    res = multi_head_attention(x, p, n_head=4, n_kv_head=2, return_trace=True)
    assert list(res.trace.shapes().items()) == [
        ("x", (2, 5, 12)),
        ("q", (2, 4, 5, 3)),
        ("k", (2, 2, 5, 3)),
        ("v", (2, 2, 5, 3)),
        ("dots", (2, 4, 5, 5)),
        ("scores", (2, 4, 5, 5)),
        ("max", (2, 4, 5, 1)),
        ("exps", (2, 4, 5, 5)),
        ("sum", (2, 4, 5, 1)),
        ("weights", (2, 4, 5, 5)),
        ("heads", (2, 4, 5, 3)),
        ("concat", (2, 5, 12)),
        ("output", (2, 5, 12)),
    ]
    np.testing.assert_array_equal(res.trace["concat"][:, :, 3:6], res.heads[:, 1])


def test_rope_and_cache_steps_are_traced(rng):
    p = _params(rng, n_head=2, d_head=4, d_model=8)
    x = rng.standard_normal((3, 8))
    cache = KVCache()
    multi_head_attention(x[:2], p, n_head=2, rope=RoPE(4), cache=cache, causal="bottom_right")
    res = multi_head_attention(
        x[2:], p, n_head=2, rope=RoPE(4), cache=cache, causal="bottom_right", return_trace=True
    )
    names = list(res.trace)
    assert names[4:8] == ["q_rotated", "k_rotated", "k_cached", "v_cached"]
    assert res.trace.shape("k_cached") == (2, 3, 4) and res.weights.shape == (2, 1, 3)
    full = multi_head_attention(x, p, n_head=2, rope=RoPE(4), causal="bottom_right")
    np.testing.assert_allclose(res.output, full.output[2:], atol=1e-13)


def test_explicit_positions_shift_rope(rng):
    """RoPE scores depend on relative positions only: shifting every position changes nothing."""
    p = _params(rng, n_head=2, d_head=4, d_model=8)
    x = rng.standard_normal((6, 8))
    a = multi_head_attention(x, p, n_head=2, rope=RoPE(4), causal="top_left")
    b = multi_head_attention(x, p, n_head=2, rope=RoPE(4), positions=np.arange(6) + 1000, causal="top_left")
    np.testing.assert_allclose(a.output, b.output, atol=1e-10)
    batched = multi_head_attention(
        np.stack([x, x]), p, n_head=2, rope=RoPE(4), positions=np.stack([np.arange(6), np.arange(6) + 7])
    )
    np.testing.assert_allclose(batched.output[0], batched.output[1], atol=1e-10)


def test_split_and_merge_heads_are_inverse(rng):
    x = rng.standard_normal((2, 5, 12))
    heads = split_heads(x, 4)
    assert heads.shape == (2, 4, 5, 3)
    np.testing.assert_array_equal(heads[:, 2], x[..., 6:9])
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_runs_on_every_namespace(xp, to_xp, to_np, rng):
    p = _params(rng, n_head=4, n_kv=2, d_head=4, d_model=12)
    x = rng.standard_normal((2, 6, 12))
    ref = multi_head_attention(x, p, n_head=4, n_kv_head=2, rope=RoPE(4), causal="bottom_right")
    pp = AttentionParams(
        **{f: to_xp(getattr(p, f)) for f in ("w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o")}
    )
    cache = KVCache()
    multi_head_attention(
        to_xp(x[:, :4]), pp, n_head=4, n_kv_head=2, rope=RoPE(4), cache=cache, causal="bottom_right"
    )
    res = multi_head_attention(
        to_xp(x[:, 4:]), pp, n_head=4, n_kv_head=2, rope=RoPE(4), cache=cache, causal="bottom_right"
    )
    np.testing.assert_allclose(to_np(res.output), ref.output[:, 4:], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"n_head": 5}, r"n_head=5 does not divide the query width 12"),
        ({"n_head": 4, "n_kv_head": 3}, r"n_head=4 is not a multiple of n_kv_head=3"),
        ({"n_head": 0}, r"n_head must be a positive int"),
        ({"n_head": 4, "causal": "left"}, r"causal='left' is not an alignment"),
    ],
)
def test_bad_head_counts(rng, kwargs, message):
    with pytest.raises(ValueError, match=message):
        multi_head_attention(rng.standard_normal((5, 12)), _params(rng), **kwargs)


def test_bad_shapes_and_inputs(rng):
    p = _params(rng)
    with pytest.raises(ValueError, match=r"w_q has shape \(12, 12\); its rows must match d_model=10"):
        multi_head_attention(np.ones((5, 10)), p, n_head=4)
    with pytest.raises(ValueError, match=r"x of shape \(5, 12\) has 1 NaN"):
        bad = np.ones((5, 12))
        bad[2, 3] = np.nan
        multi_head_attention(bad, p, n_head=4)
    with pytest.raises(ValueError, match=r"w_k \(12, 12\) and w_v \(12, 12\) must have 5 rows"):
        multi_head_attention(np.ones((2, 12)), p, n_head=4, context=np.ones((3, 5)))
    with pytest.raises(ValueError, match="self-attention only"):
        multi_head_attention(np.ones((2, 12)), p, n_head=4, context=np.ones((3, 12)), rope=RoPE(4))
    bad_bias = AttentionParams(p.w_q, p.w_k, p.w_v, p.w_o, b_q=np.ones(5))
    with pytest.raises(ValueError, match=r"b_q has shape \(5,\); expected \(12,\)"):
        multi_head_attention(np.ones((2, 12)), bad_bias, n_head=4)


def test_top_left_with_a_filled_cache_is_refused(rng):
    p = _params(rng)
    cache = KVCache()
    multi_head_attention(np.ones((3, 12)), p, n_head=4, cache=cache, causal="top_left")  # empty: fine
    with pytest.raises(ValueError, match="use causal='bottom_right'"):
        multi_head_attention(np.ones((1, 12)), p, n_head=4, cache=cache, causal="top_left")
