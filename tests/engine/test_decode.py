"""The NumPy decoder-block fast path agrees with the generic path and steps aside when it must."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine import (
    AttentionParams,
    BlockParams,
    KVCache,
    LayerNormParams,
    RMSNormParams,
    RoPE,
    SwiGLUParams,
    transformer_block,
)
from attnlab.engine.decode import fast_block_applies

N_HEAD, N_KV, D_HEAD, D_MODEL, D_FF = 4, 2, 8, 16, 24


def llama_block(rng, dtype) -> BlockParams:
    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype)

    return BlockParams(
        attn=AttentionParams(
            w_q=w(D_MODEL, N_HEAD * D_HEAD),
            w_k=w(D_MODEL, N_KV * D_HEAD),
            w_v=w(D_MODEL, N_KV * D_HEAD),
            w_o=w(N_HEAD * D_HEAD, D_MODEL),
        ),
        mlp=SwiGLUParams(w_gate=w(D_MODEL, D_FF), w_up=w(D_MODEL, D_FF), w_down=w(D_FF, D_MODEL)),
        norm_1=RMSNormParams((1 + 0.1 * rng.standard_normal(D_MODEL)).astype(dtype), 1e-5),
        norm_2=RMSNormParams((1 + 0.1 * rng.standard_normal(D_MODEL)).astype(dtype), 1e-5),
    )


OPTIONS = dict(n_head=N_HEAD, n_kv_head=N_KV, norm="pre", causal="bottom_right")


@pytest.mark.parametrize(("dtype", "tol"), [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_fast_path_matches_the_generic_path_through_prefill_and_decode(rng, dtype, tol):
    params = llama_block(rng, dtype)
    rope = RoPE(head_dim=D_HEAD, base=100.0, convention="interleaved")
    fast_cache, generic_cache = KVCache(), KVCache()
    steps = [rng.standard_normal((5, D_MODEL)).astype(dtype)]
    steps += [rng.standard_normal((1, D_MODEL)).astype(dtype) for _ in range(3)]
    past = 0
    for x in steps:
        positions = np.arange(past, past + len(x))
        kw = dict(OPTIONS, rope=rope, positions=positions)
        assert fast_block_applies(
            x,
            params,
            **kw,
            mask=None,
            key_padding_mask=None,
            cache=fast_cache,
            scale=None,
            return_trace=False,
        )
        fast = transformer_block(x, params, **kw, cache=fast_cache)
        generic = transformer_block(x, params, **kw, cache=generic_cache, return_trace=True)
        assert fast.trace is None and generic.trace is not None  # the trace forces the generic path
        assert fast.output.dtype == generic.output.dtype == dtype
        np.testing.assert_allclose(fast.output, generic.output, rtol=0, atol=tol)
        np.testing.assert_allclose(fast.attention.output, generic.attention.output, rtol=0, atol=tol)
        np.testing.assert_allclose(fast.attention.weights, generic.attention.weights, rtol=0, atol=tol)
        np.testing.assert_allclose(fast.attention.heads, generic.attention.heads, rtol=0, atol=tol)
        np.testing.assert_array_equal(fast.attention.fully_masked, generic.attention.fully_masked)
        past += len(x)
        assert fast.attention.weights.shape == (N_HEAD, len(x), past)
    np.testing.assert_allclose(fast_cache.keys, generic_cache.keys, rtol=0, atol=tol)
    np.testing.assert_allclose(fast_cache.values, generic_cache.values, rtol=0, atol=tol)
    # the causal band: the prefill's first row saw only the first key
    first = transformer_block(steps[0], params, **OPTIONS, rope=rope).attention.weights
    assert np.all(first[:, 0, 1:] == 0.0) and np.allclose(first.sum(-1), 1.0)


def test_fast_path_without_cache_or_rope_matches_generic(rng):
    params = llama_block(rng, np.float64)
    x = rng.standard_normal((6, D_MODEL))
    fast = transformer_block(x, params, **OPTIONS, scale=0.3)
    generic = transformer_block(x, params, **OPTIONS, scale=0.3, return_trace=True)
    np.testing.assert_allclose(fast.output, generic.output, rtol=0, atol=1e-13)


def test_nan_falls_back_to_the_generic_error_and_leaves_the_cache_alone(rng):
    params = llama_block(rng, np.float32)
    cache = KVCache()
    transformer_block(rng.standard_normal((3, D_MODEL)).astype(np.float32), params, **OPTIONS, cache=cache)
    keys = cache.keys.copy()
    bad = np.full((1, D_MODEL), np.nan, np.float32)
    with pytest.raises(ValueError, match="NaN"):
        transformer_block(bad, params, **OPTIONS, cache=cache)
    assert cache.length == 3
    np.testing.assert_array_equal(cache.keys, keys)


def test_fast_path_steps_aside_for_what_it_does_not_do(rng):
    params = llama_block(rng, np.float32)
    x = rng.standard_normal((2, D_MODEL)).astype(np.float32)
    base = dict(
        n_head=N_HEAD,
        n_kv_head=N_KV,
        norm="pre",
        mask=None,
        causal="bottom_right",
        key_padding_mask=None,
        rope=None,
        positions=None,
        cache=None,
        scale=None,
        return_trace=False,
    )
    assert fast_block_applies(x, params, **base)
    assert not fast_block_applies(x, params, **{**base, "return_trace": True})
    assert not fast_block_applies(x, params, **{**base, "causal": "top_left"})
    assert not fast_block_applies(x, params, **{**base, "norm": "post"})
    assert not fast_block_applies(x, params, **{**base, "mask": np.ones((2, 2), bool)})
    assert not fast_block_applies(x[None], params, **base)  # batch axes
    assert not fast_block_applies(x.astype(np.float64), params, **base)  # dtype differs from weights
    assert not fast_block_applies(x, params, **{**base, "n_head": 3})
    layer_norm = BlockParams(
        attn=params.attn, mlp=params.mlp, norm_1=LayerNormParams(None, None), norm_2=params.norm_2
    )
    assert not fast_block_applies(x, layer_norm, **base)
    biased = BlockParams(
        attn=AttentionParams(
            params.attn.w_q,
            params.attn.w_k,
            params.attn.w_v,
            params.attn.w_o,
            b_q=np.zeros(N_HEAD * D_HEAD, np.float32),
        ),
        mlp=params.mlp,
        norm_1=params.norm_1,
        norm_2=params.norm_2,
    )
    assert not fast_block_applies(x, biased, **base)
    # and those calls still work, the generic way
    out = transformer_block(x, biased, n_head=N_HEAD, n_kv_head=N_KV, causal="bottom_right")
    assert out.output.shape == (2, D_MODEL)
