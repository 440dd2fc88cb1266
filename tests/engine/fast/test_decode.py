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
)
from attnlab.engine.block import BlockEdits
from attnlab.engine.block import transformer_block as reference_block
from attnlab.engine.fast.block import transformer_block
from attnlab.engine.fast.decode import _joined, fast_block_applies, joined_projections, side_by_side, steps

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


def joined_copy(params: BlockParams, dtype=None) -> BlockParams:
    """The same block with w_q, w_k, w_v and w_gate, w_up laid side by side (as SmolLM2 loads them)."""
    a, f = params.attn, params.mlp
    return BlockParams(
        attn=AttentionParams(*side_by_side(a.w_q, a.w_k, a.w_v, dtype=dtype), a.w_o),
        mlp=SwiGLUParams(*side_by_side(f.w_gate, f.w_up, dtype=dtype), f.w_down),
        norm_1=params.norm_1,
        norm_2=params.norm_2,
    )


def test_side_by_side_views_hold_the_matrices_and_join_back(rng):
    a, b, c = (rng.standard_normal((4, n)) for n in (3, 2, 5))
    va, vb, vc = side_by_side(a, b, c)
    for view, original in ((va, a), (vb, b), (vc, c)):
        np.testing.assert_array_equal(view, original)
    joined = _joined(va, vb, vc)
    assert joined is not None and joined.shape == (4, 10)
    np.testing.assert_array_equal(joined, np.concatenate([a, b, c], axis=1))
    assert _joined(va, vb) is not None and _joined(va, vb).shape == (4, 5)
    # anything but adjacent blocks in order, of one buffer, is not joined
    assert _joined(vb, va, vc) is None
    assert _joined(va, vc) is None
    assert _joined(a, b, c) is None
    assert _joined(va, side_by_side(b)[0]) is None
    assert side_by_side(a, dtype=np.float32)[0].dtype == np.float32
    with pytest.raises(ValueError, match="equal row counts"):
        side_by_side(a, rng.standard_normal((5, 2)))


@pytest.mark.parametrize("convention", ["half", "interleaved"])
@pytest.mark.parametrize(("dtype", "tol"), [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_joined_weights_take_one_product_and_give_the_same_block(rng, convention, dtype, tol):
    separate = llama_block(rng, dtype)
    joined = joined_copy(separate)
    assert joined_projections(joined)[0] is not None and joined_projections(joined)[1] is not None
    assert joined_projections(separate) == (None, None)
    caches = {"separate": KVCache(), "joined": KVCache(), "generic": KVCache()}
    past = 0
    # two RoPE bases in turn: the cos/sin kept for a step must not leak into the other's
    for step, n in enumerate((4, 1, 1, 2, 1)):
        rope = RoPE(head_dim=D_HEAD, base=100.0 if step % 2 else 10000.0, convention=convention)
        x = rng.standard_normal((n, D_MODEL)).astype(dtype)
        kw = dict(OPTIONS, rope=rope, positions=np.arange(past, past + n))
        fast = transformer_block(x, joined, **kw, cache=caches["joined"])
        slow = transformer_block(x, separate, **kw, cache=caches["separate"])
        generic = transformer_block(x, separate, **kw, cache=caches["generic"], return_trace=True)
        for other in (slow, generic):
            np.testing.assert_allclose(fast.output, other.output, rtol=0, atol=tol)
            np.testing.assert_allclose(fast.attention.weights, other.attention.weights, rtol=0, atol=tol)
        past += n
    np.testing.assert_allclose(caches["joined"].keys, caches["generic"].keys, rtol=0, atol=tol)


def test_a_long_prompts_heads_are_shared_among_threads_with_the_same_bits(rng, monkeypatch):
    """From 64 x 64 scores a head, the heads run on our threads: the generic path's numbers to
    rounding, and the same bits as on one thread."""

    params = llama_block(rng, np.float32)
    rope = RoPE(head_dim=D_HEAD, base=100.0, convention="interleaved")
    x = rng.standard_normal((150, D_MODEL)).astype(np.float32)  # 150: three chunks of rows too
    kw = dict(OPTIONS, rope=rope, positions=np.arange(150))
    assert 150 * 150 >= steps._SPLIT_SCORES and 150 >= 2 * steps._GATE_ROWS
    monkeypatch.setattr(steps, "CORES", 2)
    shared = []

    def spy(work, tasks, n_threads):
        shared.append((list(tasks), n_threads))
        return real(work, tasks, n_threads)

    real = steps.run
    monkeypatch.setattr(steps, "run", spy)
    fast = transformer_block(x, params, **kw)
    assert (list(range(N_HEAD)), 2) in shared  # the heads, on two threads
    generic = transformer_block(x, params, **kw, return_trace=True)
    for a, b in ((fast.output, generic.output), (fast.attention.weights, generic.attention.weights),
                 (fast.attention.heads, generic.attention.heads)):  # fmt: skip
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-6)
    monkeypatch.setattr(steps, "CORES", 1)
    alone = transformer_block(x, params, **kw)
    assert alone.output.tobytes() == fast.output.tobytes()
    assert alone.attention.weights.tobytes() == fast.attention.weights.tobytes()


# -- the hook points: the same edits, at the same places, as the reference --------------------------


@pytest.mark.parametrize(("dtype", "tol"), [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_edits_act_where_the_reference_applies_them(rng, dtype, tol):
    params = llama_block(rng, dtype)
    rope = RoPE(head_dim=D_HEAD, base=100.0, convention="interleaved")
    x = rng.standard_normal((6, D_MODEL)).astype(dtype)
    mlp_value = rng.standard_normal((6, D_MODEL)).astype(dtype)
    seen: dict = {}

    def edits(tag):
        def z(a):
            seen[tag, "z"] = a
            out = a.copy()
            out[2:, D_HEAD : 2 * D_HEAD] = 0.0  # query head 1 from position 2 on (it shares KV head 0)
            return out

        def mid(a):
            seen[tag, "mid"] = a
            return a

        def mlp(a):
            seen[tag, "mlp"] = a
            out = a.copy()
            out[4] = mlp_value[4]
            return out

        return BlockEdits(z=z, mid=mid, mlp=mlp)

    kw = dict(OPTIONS, rope=rope, positions=np.arange(6))
    fast = transformer_block(x, params, **kw, edits=edits("fast"))
    generic = reference_block(x, params, **kw, edits=edits("generic"))
    for name in ("z", "mid", "mlp"):
        assert seen["fast", name].shape == seen["generic", name].shape
        np.testing.assert_allclose(seen["fast", name], seen["generic", name], rtol=0, atol=tol)
    np.testing.assert_allclose(fast.output, generic.output, rtol=0, atol=tol)
    np.testing.assert_allclose(fast.attention.output, generic.attention.output, rtol=0, atol=tol)
    # the z the hook saw is the heads side by side, before the edit
    z = seen["fast", "z"].reshape(6, N_HEAD, D_HEAD).transpose(1, 0, 2)
    np.testing.assert_array_equal(z, fast.attention.heads)


def test_edits_that_change_nothing_give_the_fast_paths_bits(rng):
    params = llama_block(rng, np.float32)
    x = rng.standard_normal((5, D_MODEL)).astype(np.float32)
    kw = dict(OPTIONS, rope=RoPE(head_dim=D_HEAD, base=100.0, convention="interleaved"))
    plain = transformer_block(x, params, **kw)
    copy = BlockEdits(z=np.copy, mid=np.copy, mlp=np.copy)
    edited = transformer_block(x, params, **kw, edits=copy)
    assert edited.output.tobytes() == plain.output.tobytes()
    assert edited.attention.output.tobytes() == plain.attention.output.tobytes()
