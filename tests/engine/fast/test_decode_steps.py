"""The decoder block's steps between its products (engine/fast/decode/steps.py): compiled forms vs NumPy's."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from attnlab.engine import RMSNormParams, RoPE
from attnlab.engine.fast.block import transformer_block
from attnlab.engine.fast.decode import steps

from .test_decode import OPTIONS, llama_block


@pytest.fixture
def kernels():
    k = steps.kernels()
    assert k is not None, steps.reason()
    return k


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_weight", [True, False])
def test_compiled_rms_norm_agrees_with_numpys_to_rounding(rng, kernels, dtype, with_weight):
    x = (rng.standard_normal((7, 96)) * rng.uniform(0.01, 100, (7, 1))).astype(dtype)
    weight = rng.standard_normal(96).astype(dtype) if with_weight else None
    norm = RMSNormParams(weight, 1e-5)
    got, want = steps.rms(x, norm, kernels), steps.rms(x, norm, None)
    assert got.dtype == want.dtype == dtype  # eps passed in x's dtype: no float64 arithmetic
    np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_compiled_rope_gives_numpys_bits(rng, kernels, dtype, convention):
    rope = RoPE(head_dim=8, base=100.0, convention=convention)
    qkv = rng.standard_normal((5, 7 * 8 + 16)).astype(dtype)  # 7 q and k heads, then v
    positions = np.arange(3, 8)
    got = steps.rotate_qk(rope, qkv, 7, 8, positions, kernels)
    want = steps.rotate_qk(rope, qkv, 7, 8, positions, None)
    assert got.shape == (5, 7, 8) and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_silu_gives_numpys_bits_edges_included(rng, kernels, dtype):
    gate_up = (rng.standard_normal((9, 64)) * 8).astype(dtype)
    edges = [0.0, -0.0, 1e-30, -1e-30, 90.0, -90.0, -200.0, 200.0, np.inf, -np.inf, np.nan]
    gate_up[0, : len(edges)] = edges
    got = steps.gated(gate_up, 32, kernels)
    with np.errstate(invalid="ignore"):  # NumPy says so for 0 * -inf
        want = steps.gated(gate_up, 32, None)
    finite = np.isfinite(want)
    assert got.tobytes() == want.tobytes() or (
        got[finite].tobytes() == want[finite].tobytes() and np.array_equal(np.isnan(got), np.isnan(want))
    )
    assert np.isnan(got[0, 9]) and np.isnan(got[0, 10])  # -inf gives 0 * -inf, NaN stays NaN


def test_a_block_with_the_compiled_steps_agrees_with_numpys_steps(rng, kernels, monkeypatch):
    params = llama_block(rng, np.float32)
    rope = RoPE(head_dim=8, base=100.0, convention="interleaved")
    x = rng.standard_normal((6, 16)).astype(np.float32)
    kw = dict(OPTIONS, rope=rope, positions=np.arange(6))
    compiled = transformer_block(x, params, **kw)
    monkeypatch.setattr(steps, "_kernels", False)  # as where numba cannot compile them
    assert steps.kernels() is None
    numpy_only = transformer_block(x, params, **kw)
    np.testing.assert_allclose(compiled.output, numpy_only.output, rtol=0, atol=2e-6)
    np.testing.assert_allclose(compiled.attention.weights, numpy_only.attention.weights, rtol=0, atol=2e-6)


def test_where_the_kernels_cannot_load_the_numpy_steps_run_and_say_why(rng, monkeypatch):
    monkeypatch.setattr(steps, "_kernels", None)
    monkeypatch.setattr(steps, "_reason", "")
    monkeypatch.setitem(sys.modules, "attnlab.engine.fast.decode.kernels", None)  # the import fails
    assert steps.kernels() is None
    assert "ImportError" in steps.reason() or "ModuleNotFoundError" in steps.reason()
    params = llama_block(rng, np.float64)
    x = rng.standard_normal((3, 16))
    fast = transformer_block(x, params, **OPTIONS)
    generic = transformer_block(x, params, **OPTIONS, return_trace=True)
    np.testing.assert_allclose(fast.output, generic.output, rtol=0, atol=1e-13)


@pytest.mark.parametrize(("n", "s"), [(1, 1), (1, 40), (5, 5), (22, 22), (3, 30)])
def test_compiled_attention_agrees_with_numpys(rng, kernels, n, s):
    """Heads of 32 and 16 numbers, GQA (3 query heads a KV head), keys in a cache buffer's view."""
    n_head, n_kv, d, d_v = 6, 2, 32, 16
    qk = rng.standard_normal((n, n_head + n_kv, d)).astype(np.float32)
    buffer_k = rng.standard_normal((n_kv, s + 7, d)).astype(np.float32)  # room left, as a KVCache keeps
    buffer_v = rng.standard_normal((n_kv, s + 7, d_v)).astype(np.float32)
    k, v = buffer_k[:, :s], buffer_v[:, :s]
    scale = np.float32(1 / np.sqrt(d))
    got = steps.attend(qk, n_head, k, v, 3, scale, kernels)
    want = steps.attend(qk, n_head, k, v, 3, scale, None)
    for a, b, name in zip(got, want, ("weights", "heads", "side by side"), strict=True):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=0, atol=2e-6, err_msg=name)
    blocked = np.triu(np.ones((n, s), bool), k=s - n + 1)
    assert np.all(got[0][:, blocked] == 0) and np.allclose(got[0].sum(-1), 1, atol=1e-6)


def test_compiled_attention_refuses_an_overflowing_score_even_a_blocked_one(rng, kernels):
    qk = rng.standard_normal((3, 3, 16)).astype(np.float32)
    k = rng.standard_normal((1, 3, 16)).astype(np.float32)
    k[0, 2] = 1e38  # key 2: blocked for rows 0 and 1, seen by row 2; its scores overflow
    v = rng.standard_normal((1, 3, 16)).astype(np.float32)
    assert steps.attend(qk, 2, k, v, 2, np.float32(1.0), kernels) is None
    with np.errstate(over="ignore", invalid="ignore"):
        assert steps.attend(qk, 2, k, v, 2, np.float32(1.0), None) is None


def test_a_block_with_sixteen_wide_heads_runs_the_compiled_attention(rng, kernels, monkeypatch):
    from attnlab.engine import AttentionParams, BlockParams, KVCache, SwiGLUParams

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    params = BlockParams(
        attn=AttentionParams(w_q=w(32, 64), w_k=w(32, 32), w_v=w(32, 32), w_o=w(64, 32)),
        mlp=SwiGLUParams(w_gate=w(32, 48), w_up=w(32, 48), w_down=w(48, 32)),
        norm_1=RMSNormParams(np.ones(32, np.float32), 1e-5),
        norm_2=RMSNormParams(np.ones(32, np.float32), 1e-5),
    )
    calls = []
    monkeypatch.setattr(kernels, "scores", lambda *a, real=kernels.scores: calls.append(1) or real(*a))
    rope = RoPE(head_dim=16, base=100.0, convention="half")
    caches = {"fast": KVCache(), "generic": KVCache()}
    past = 0
    for n in (7, 1, 1, 3):  # a prompt, two decoding steps, three more tokens
        x = rng.standard_normal((n, 32)).astype(np.float32)
        kw = dict(OPTIONS, n_head=4, n_kv_head=2, rope=rope, positions=np.arange(past, past + n))
        fast = transformer_block(x, params, **kw, cache=caches["fast"])
        generic = transformer_block(x, params, **kw, cache=caches["generic"], return_trace=True)
        np.testing.assert_allclose(fast.output, generic.output, rtol=0, atol=3e-6)
        np.testing.assert_allclose(fast.attention.weights, generic.attention.weights, rtol=0, atol=2e-6)
        np.testing.assert_allclose(fast.attention.heads, generic.attention.heads, rtol=0, atol=3e-6)
        past += n
    assert len(calls) == 4  # every step took the compiled attention
