"""The fast ops' steps between their products (engine/fast/decode/steps.py): compiled forms vs NumPy's, and
the forward on each of them."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine import RMSNormParams, RoPE
from attnlab.engine.cache import KVCache
from attnlab.engine.fast.decode import steps
from attnlab.engine.fast.ops import FAST
from attnlab.engine.forward import REFERENCE, forward
from attnlab.engine.hooks import Hooks, hook_names
from attnlab.engine.layers import activate

from ..tinykit import hooked, llama


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
@pytest.mark.parametrize("rows", [9, 300])  # 300: a long prompt's rows, in chunks on our threads
def test_compiled_silu_gives_numpys_bits_edges_included(rng, kernels, dtype, rows):
    gate_up = (rng.standard_normal((rows, 64)) * 8).astype(dtype)
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=True, allow_infinity=True), min_size=1, max_size=80),
       st.sampled_from([(80,), (4, 20), (2, 5, 8)]))  # fmt: skip
def test_compiled_gelu_gives_the_references_bits_on_any_float32(values, shape):
    """Every float32 a hypothesis draws (subnormals, ±0, ±inf, NaN, the clip at |x / sqrt 2| = 4), in
    any shape: the compiled GELU is the reference's (engine.layers.gelu, erf form), bit for bit."""
    k = steps.kernels()
    assert k is not None, steps.reason()
    x = np.resize(np.array(values, np.float32), shape)
    with np.errstate(invalid="ignore", over="ignore"):
        want = activate(x, "gelu")
    got = steps.gelu(x, k)
    assert got.shape == x.shape and got.dtype == np.float32
    nan = np.isnan(want)  # a NaN's payload bits may differ, never which numbers are NaN
    assert np.array_equal(np.isnan(got), nan) and got[~nan].tobytes() == want[~nan].tobytes()
    assert FAST.act(x, "gelu").tobytes() == got.tobytes()


def test_a_forward_with_the_compiled_steps_agrees_with_numpys_steps(rng, kernels, monkeypatch):
    arch, w = llama(rng, dtype=np.float32, d_head=16)  # the compiled attention too
    ids = rng.integers(0, arch.d_vocab, 6)
    compiled, seen = hooked(arch, w, ids, FAST)
    monkeypatch.setattr(steps, "_kernels", False)  # as where numba cannot compile them
    assert steps.kernels() is None
    numpy_only, seen_numpy = hooked(arch, w, ids, FAST)
    np.testing.assert_allclose(compiled, numpy_only, rtol=0, atol=2e-5)
    for name in ("blocks.1.hook_resid_post", "blocks.1.attn.hook_pattern", "blocks.0.ln1.hook_normalized"):
        np.testing.assert_allclose(seen[name], seen_numpy[name], rtol=0, atol=2e-6, err_msg=name)


def test_where_the_kernels_cannot_load_the_numpy_steps_run_and_say_why(rng, monkeypatch):
    monkeypatch.setattr(steps, "_kernels", None)
    monkeypatch.setattr(steps, "_reason", "")
    monkeypatch.setitem(sys.modules, "attnlab.engine.fast.decode.kernels", None)  # the import fails
    assert steps.kernels() is None
    assert "ImportError" in steps.reason() or "ModuleNotFoundError" in steps.reason()
    arch, w = llama(rng, dtype=np.float64)
    ids = rng.integers(0, arch.d_vocab, 3)
    np.testing.assert_allclose(forward(arch, w, ids, ops=FAST), forward(arch, w, ids), rtol=0, atol=1e-13)


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


def test_sixteen_wide_heads_take_the_compiled_attention_through_prefill_and_decode(rng, kernels, monkeypatch):
    arch, w = llama(rng, dtype=np.float32, n_layer=1, d_model=32, n_head=4, n_kv_head=2, d_head=16, d_ff=48,
                    rope_pairs="half", norm_weights=False)  # fmt: skip
    calls = []

    def counted(step):
        real = getattr(kernels, step)
        return lambda *a: calls.append(step) or real(*a)

    for step in ("scores", "raw_scores"):
        monkeypatch.setattr(kernels, step, counted(step))
    caches = {"fast": [KVCache()], "hooked": [KVCache()], "reference": [KVCache()]}
    for n in (7, 1, 1, 3):  # a prompt, two decoding steps, three more tokens
        ids = rng.integers(0, arch.d_vocab, n)
        seen: dict = {}
        outside = Hooks([(lambda x: "attn.hook_attn" not in x and "pattern" not in x,
                          lambda a, x, seen=seen: seen.update({x: a}))], hook_names(arch))  # fmt: skip
        forward(arch, w, ids, ops=FAST, caches=caches["fast"], hooks=outside)  # attention in one piece
        _, fast = hooked(arch, w, ids, FAST, caches=caches["hooked"])  # taken apart around the hooks
        _, ref = hooked(arch, w, ids, REFERENCE, caches=caches["reference"])
        for name, tol in (("blocks.0.hook_resid_post", 3e-6), ("blocks.0.attn.hook_z", 3e-6)):
            np.testing.assert_allclose(seen[name], ref[name], rtol=0, atol=tol, err_msg=name)
            assert seen[name].tobytes() == fast[name].tobytes(), name
        pattern = "blocks.0.attn.hook_pattern"
        np.testing.assert_allclose(fast[pattern], ref[pattern], rtol=0, atol=2e-6)
    assert calls == ["scores", "raw_scores"] * 4  # every step took the compiled attention


# -- the hook points inside attention ---------------------------------------------------------------


def _attention_inputs(rng, n, s, dtype, d=32):
    """q|k heads (n, 6 + 2, d), keys and values (2, s, d) in a cache buffer's view: GQA, 3 a KV head."""
    qk = rng.standard_normal((n, 8, d)).astype(dtype)
    k = rng.standard_normal((2, s + 7, d)).astype(dtype)[:, :s]
    v = rng.standard_normal((2, s + 7, d)).astype(dtype)[:, :s]
    return qk, k, v, dtype(1 / np.sqrt(d))


# (queries, keys, dtype): the compiled path, the grouped NumPy path, the per-head threaded path
HOOKED = [(5, 5, np.float32), (1, 9, np.float32), (5, 9, np.float64), (70, 70, np.float32),
          (3, 1400, np.float64)]  # fmt: skip


@pytest.mark.parametrize(("n", "s", "dtype"), HOOKED)
def test_hooks_that_return_their_argument_change_no_bit_of_attention(rng, kernels, n, s, dtype):
    qk, k, v, scale = _attention_inputs(rng, n, s, dtype)
    plain = steps.attend(qk, 6, k, v, 3, scale, kernels)
    seen = {}

    def keep(what):
        return lambda a: seen.setdefault(what, a)

    hooked_ = steps.attend(qk, 6, k, v, 3, scale, kernels, keep("scores"), keep("pattern"))
    for a, b, name in zip(hooked_, plain, ("weights", "heads", "side by side"), strict=True):
        assert a.shape == b.shape and a.tobytes() == np.ascontiguousarray(b).tobytes(), name
    # the hooks saw (n_head, L, S): the scores with blocked keys -inf, the pattern the weights returned
    blocked = np.triu(np.ones((n, s), bool), k=s - n + 1)
    assert seen["scores"].shape == seen["pattern"].shape == (6, n, s)
    assert np.all(np.isneginf(seen["scores"][:, blocked]))
    assert np.all(np.isfinite(seen["scores"][:, ~blocked]))
    assert seen["pattern"].tobytes() == plain[0].tobytes()
    numpy_scores = (qk[:, :6].transpose(1, 0, 2) @ np.repeat(k, 3, axis=0).transpose(0, 2, 1)) * scale
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(seen["scores"][:, ~blocked], numpy_scores[:, ~blocked], rtol=0, atol=tol)


@pytest.mark.parametrize(("n", "s", "dtype"), HOOKED)
def test_a_pattern_hooks_weights_are_what_mixes_the_values(rng, kernels, n, s, dtype):
    qk, k, v, scale = _attention_inputs(rng, n, s, dtype)
    mine = rng.random((6, n, s)).astype(dtype)
    mine /= mine.sum(-1, keepdims=True)
    weights, heads, side = steps.attend(qk, 6, k, v, 3, scale, kernels, None, lambda a: mine)
    assert weights.tobytes() == mine.tobytes()
    want = mine @ np.repeat(v, 3, axis=0)  # (6, n, d): query head h reads KV head h // 3
    np.testing.assert_allclose(heads, want, rtol=0, atol=2e-6 if dtype == np.float32 else 1e-13)
    assert side.tobytes() == np.ascontiguousarray(heads.transpose(1, 0, 2)).reshape(n, -1).tobytes()


@pytest.mark.parametrize(("n", "s", "dtype"), HOOKED)
def test_a_scores_hook_changes_the_softmax_it_feeds(rng, kernels, n, s, dtype):
    qk, k, v, scale = _attention_inputs(rng, n, s, dtype)
    blocked = np.triu(np.ones((n, s), bool), k=s - n + 1)
    bias = np.where(blocked, 0.0, rng.standard_normal((6, n, s))).astype(dtype)
    weights, _, _ = steps.attend(qk, 6, k, v, 3, scale, kernels, lambda a: a + bias)
    scores = (qk[:, :6].transpose(1, 0, 2) @ np.repeat(k, 3, axis=0).transpose(0, 2, 1)) * scale + bias
    scores[:, blocked] = -np.inf
    want = np.exp(scores - scores.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(weights, want, rtol=0, atol=2e-6 if dtype == np.float32 else 1e-14)
    # a key blocked by the hook (-inf) gets no weight
    last_off = lambda a: np.where(np.arange(s) == s - 1, -np.inf, a)  # noqa: E731
    cut, _, _ = steps.attend(qk, 6, k, v, 3, scale, kernels, last_off)
    assert np.all(cut[..., -1] == 0.0) and np.allclose(cut.sum(-1), 1.0)


def test_the_compiled_kernels_taken_apart_give_the_whole_kernels_bits(rng, kernels):
    qk, k, v, scale = _attention_inputs(rng, 6, 10, np.float32, d=16)
    whole = np.empty((6, 6, 10), np.float32)
    assert kernels.scores(qk, 6, k, 3, scale, whole)
    parts = np.empty((6, 6, 10), np.float32)
    assert kernels.raw_scores(qk, 6, k, 3, scale, parts)
    shifted = parts - parts.max(axis=-1, keepdims=True)
    assert shifted.tobytes() == whole.tobytes()  # the same products and shift; -inf stays -inf
    np.exp(whole, out=whole)
    np.exp(shifted, out=shifted)
    side_whole, side_parts = np.empty((6, 6 * 16), np.float32), np.empty((6, 6 * 16), np.float32)
    kernels.mix(whole, v, 3, side_whole)
    kernels.normalize(shifted)
    assert shifted.tobytes() == whole.tobytes()  # mix normalised the weights in place, as normalize does
    kernels.mix_rows(shifted, v, 3, side_parts)
    assert side_parts.tobytes() == side_whole.tobytes()
    big = qk.copy()
    big[0, 0] = 3e38
    assert not kernels.raw_scores(big, 6, k, 3, scale, parts)  # an overflowing score: refused
