"""The forward's options for the model families: sliding windows and local layers, soft caps, sandwich
norms, per-head q/k norms, scaled and local RoPE, offset positions. Each against an independent
computation (PyTorch in float64 where it has the operation), the KV cache against a full recompute,
and the fast ops stepping aside where they do not compute an option."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.fast.ops import FAST, Fast, rows_apply
from attnlab.engine.forward import REFERENCE, ScaledRoPE, _rope, forward
from attnlab.engine.hooks import Hooks, block_names, hook_names
from attnlab.engine.layers import RMSNormParams, rms_norm
from attnlab.engine.model import AttentionWeights, BlockWeights, RopeScaling, check_weights
from attnlab.engine.positions import RoPE

from .tinykit import gpt2, hooked, llama


def family(rng, *, dtype=np.float64, qk_norm=False, post_norms=False, **options):
    """tinykit's Llama with ``options`` (Architecture fields) and the norms they need, drawn from ``rng``."""
    n_layer = options.pop("n_layer", 3)
    arch, w = llama(rng, dtype=dtype, n_layer=n_layer, qk_norm=qk_norm, post_norms=post_norms,
                    rope_pairs="half", **options)  # fmt: skip

    def rms(width):
        return RMSNormParams((1 + 0.3 * rng.standard_normal(width)).astype(dtype), 1e-6)

    blocks = []
    for b in w.blocks:
        attn = AttentionWeights(**{f.name: getattr(b.attn, f.name) for f in dataclasses.fields(b.attn)},
                                q_norm=rms(arch.d_head) if qk_norm else None,
                                k_norm=rms(arch.d_head) if qk_norm else None)  # fmt: skip
        blocks.append(BlockWeights(attn=attn, mlp=b.mlp, norm_1=b.norm_1, norm_2=b.norm_2,
                                   norm_1_post=rms(arch.d_model) if post_norms else None,
                                   norm_2_post=rms(arch.d_model) if post_norms else None))  # fmt: skip
    return arch, dataclasses.replace(w, blocks=tuple(blocks))


EVERYTHING = dict(sliding_window=3, local_layers=(0, 2), rope_base_local=10.0, qk_norm=True, post_norms=True,
                  attn_softcap=5.0, final_softcap=3.0, embed_scale=4.0,
                  rope_scaling=RopeScaling(kind="llama3", factor=8.0, original_context=16))  # fmt: skip


# -- sliding windows and local layers ------------------------------------------------------------


def test_a_local_layers_query_sees_its_window_and_nothing_before_it(rng):
    arch, w = family(rng, n_layer=2, sliding_window=3, local_layers=(0,))
    ids = rng.integers(0, arch.d_vocab, 8)
    _, seen = hooked(arch, w, ids)
    i, j = np.arange(8)[:, None], np.arange(8)[None, :]
    local, causal = (j <= i) & (j > i - 3), j <= i
    for layer, allowed in ((0, local), (1, causal)):
        n = block_names(layer)
        scores, pattern = seen[n.scores], seen[n.pattern]
        assert np.all(np.isneginf(scores[:, ~allowed])) and np.all(np.isfinite(scores[:, allowed]))
        assert np.all(pattern[:, ~allowed] == 0.0)
        np.testing.assert_allclose(pattern.sum(-1), 1.0, rtol=0, atol=1e-12)


def test_a_one_layer_local_model_never_reads_a_token_out_of_its_window(rng):
    arch, w = family(rng, n_layer=1, sliding_window=3)
    ids = rng.integers(0, arch.d_vocab, 9)
    other = ids.copy()
    other[:2] = (ids[:2] + 1) % arch.d_vocab  # change what positions 0 and 1 hold
    a, b = forward(arch, w, ids), forward(arch, w, other)
    assert a[4:].tobytes() == b[4:].tobytes()  # positions 4.. see keys 2.. only: the same bits
    assert not np.array_equal(a[:4], b[:4])


@pytest.mark.oracle
def test_a_local_layers_attention_is_torch_sdpa_with_the_window_mask(rng):
    torch = pytest.importorskip("torch")
    arch, w = family(rng, n_layer=1, sliding_window=4, n_kv_head=2)
    ids = rng.integers(0, arch.d_vocab, 11)
    _, seen = hooked(arch, w, ids)
    n = block_names(0)
    q, k, v = (torch.from_numpy(seen[x].swapaxes(0, 1).copy()) for x in (n.rot_q, n.rot_k, n.v))
    i, j = torch.arange(11)[:, None], torch.arange(11)[None, :]
    mask = (j <= i) & (j > i - 4)  # True = may attend
    z = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    np.testing.assert_allclose(seen[n.z], z.numpy().swapaxes(0, 1), rtol=0, atol=1e-13)


@pytest.mark.parametrize("ops", [REFERENCE, FAST], ids=["reference", "fast"])
def test_a_window_that_hides_no_key_gives_the_plain_models_bits(rng, ops):
    arch, w = family(rng, dtype=np.float32, n_layer=2)
    ids = rng.integers(0, arch.d_vocab, 6)
    plain = forward(arch, w, ids, ops=ops)
    assert forward(arch.replace(sliding_window=6), w, ids, ops=ops).tobytes() == plain.tobytes()
    assert forward(arch.replace(sliding_window=5), w, ids, ops=ops).tobytes() != plain.tobytes()


def test_the_fast_attention_steps_aside_for_a_window_that_hides_keys_and_takes_soft_caps(rng):
    arch, _ = family(rng, dtype=np.float32, n_layer=1)
    q = np.zeros((5, arch.n_head, arch.d_head), np.float32)
    k = v = np.zeros((5, arch.n_kv_head, arch.d_head), np.float32)
    assert Fast._attend_applies(q, k, v, arch, None, None, None)
    assert Fast._attend_applies(q, k, v, arch, None, None, 5)  # five keys: a window of 5 hides none
    assert not Fast._attend_applies(q, k, v, arch, None, None, 4)
    cache = KVCache()
    held = np.zeros((arch.n_kv_head, 3, arch.d_head), np.float32)
    cache.append(held, held)
    assert not Fast._attend_applies(q[:1], k[:1], v[:1], arch, cache, None, 3)  # 3 cached + 1 new keys
    assert Fast._attend_applies(q, k, v, arch.replace(attn_softcap=30.0), None, None, None)
    assert not rows_apply(arch.replace(sliding_window=8), _)
    assert not rows_apply(arch.replace(attn_softcap=30.0), _)


@pytest.mark.parametrize(("dtype", "tol"), [(np.float64, 1e-12), (np.float32, 3e-5)])
def test_the_fast_forward_of_every_option_is_the_references(rng, dtype, tol):
    arch, w = family(rng, dtype=dtype, **EVERYTHING)
    ids = rng.integers(0, arch.d_vocab, 10)
    ref, fast = forward(arch, w, ids), forward(arch, w, ids, ops=FAST)
    np.testing.assert_allclose(fast, ref, rtol=0, atol=tol * np.abs(ref).max())


@pytest.mark.parametrize("ops", [REFERENCE, FAST], ids=["reference", "fast"])
def test_the_kv_cache_of_every_option_gives_the_full_forward(rng, ops):
    arch, w = family(rng, **EVERYTHING)
    ids = rng.integers(0, arch.d_vocab, 12)
    full, seen_full = hooked(arch, w, ids, ops=ops)
    caches, at = [KVCache() for _ in range(arch.n_layer)], 0
    for n in (5, 1, 1, 1, 4):
        part = forward(arch, w, ids[at : at + n], ops=ops, caches=caches)
        np.testing.assert_allclose(part, full[at : at + n], rtol=0, atol=1e-12)
        at += n
    for layer in range(arch.n_layer):  # the cache keeps the normed, rotated keys the full forward made
        k = seen_full[block_names(layer).rot_k].swapaxes(0, 1)
        np.testing.assert_allclose(caches[layer].keys, k, rtol=0, atol=1e-12)


# -- soft caps ------------------------------------------------------------------------------------


def test_soft_capped_scores_are_the_capped_uncapped_scores_and_blocked_keys_stay_blocked(rng):
    arch, w = family(rng, n_layer=1, sliding_window=3)
    ids = rng.integers(0, arch.d_vocab, 7)
    _, plain = hooked(arch, w, ids)
    out, capped = hooked(arch.replace(attn_softcap=0.5, final_softcap=0.25), w, ids)
    n = block_names(0)
    s, c = plain[n.scores], capped[n.scores]
    blocked = np.isneginf(s)
    assert np.array_equal(np.isneginf(c), blocked) and blocked.any()
    assert c[~blocked].tobytes() == (np.tanh(s[~blocked] / 0.5) * 0.5).tobytes()
    assert np.abs(c[~blocked]).max() <= 0.5 and np.abs(s[~blocked]).max() > 0.5  # the cap bit
    assert np.abs(out).max() <= 0.25
    e = np.exp(c - np.max(c, axis=-1, keepdims=True))
    np.testing.assert_allclose(capped[n.pattern], e / e.sum(-1, keepdims=True), rtol=0, atol=1e-15)


@pytest.mark.parametrize("n", [7, 70])  # 70 x 70 scores a head: the long prompt's heads, shared
def test_the_fast_path_caps_scores_as_the_reference_and_a_hook_that_reads_changes_no_bit(rng, n):
    arch, w = family(rng, dtype=np.float32, n_layer=1, d_head=16)
    capped = arch.replace(attn_softcap=0.5)
    ids = rng.integers(0, arch.d_vocab, n)
    n0 = block_names(0)
    _, plain = hooked(arch, w, ids, ops=FAST)
    out, seen = hooked(capped, w, ids, ops=FAST)  # every hook point read: the steps taken apart
    s, c = plain[n0.scores], seen[n0.scores]
    blocked = np.isneginf(s)
    assert np.array_equal(np.isneginf(c), blocked) and blocked.any()
    want = np.tanh(s[~blocked] / np.float32(0.5)) * np.float32(0.5)
    if n * n >= 64 * 64:  # both runs on NumPy's scores: the reference's cap on the same numbers, bit for bit
        assert c[~blocked].tobytes() == want.tobytes()
    else:  # the uncapped run took the compiled scores (other sums): the same to rounding
        np.testing.assert_allclose(c[~blocked], want, rtol=0, atol=1e-6)
    assert forward(capped, w, ids, ops=FAST).tobytes() == out.tobytes()  # nothing hooked: the same bits
    ref = forward(capped, w, ids)
    np.testing.assert_allclose(out, ref, rtol=0, atol=3e-5 * np.abs(ref).max())
    assert not np.allclose(forward(arch, w, ids, ops=FAST), out, rtol=0, atol=1e-3)  # the cap bites


def test_capped_logits_are_the_uncapped_logits_through_tanh(rng):
    arch, w = family(rng, n_layer=2)
    ids = rng.integers(0, arch.d_vocab, 5)
    plain = forward(arch, w, ids)
    capped = forward(arch.replace(final_softcap=1.5), w, ids)
    assert capped.tobytes() == (np.tanh(plain / 1.5) * 1.5).tobytes()


# -- norms: sandwich and per head ---------------------------------------------------------------


def test_sandwich_norms_normalise_each_sublayers_output_before_its_residual_add(rng):
    arch, w = family(rng, n_layer=2, post_norms=True)
    _, seen = hooked(arch, w, rng.integers(0, arch.d_vocab, 6))
    for layer, b in enumerate(w.blocks):
        n = block_names(layer)
        assert seen[n.attn_out] is seen[n.ln1_post]  # what is added is the normalised output
        assert seen[n.mlp_out] is seen[n.ln2_post]
        assert seen[n.resid_mid].tobytes() == (seen[n.resid_pre] + seen[n.attn_out]).tobytes()
        assert seen[n.resid_post].tobytes() == (seen[n.resid_mid] + seen[n.mlp_out]).tobytes()
        z = seen[n.z].reshape(6, -1) @ b.attn.w_o
        assert seen[n.ln1_post].tobytes() == rms_norm(z, b.norm_1_post).tobytes()
        assert seen[n.ln2].tobytes() == rms_norm(seen[n.resid_mid], b.norm_2).tobytes()


def test_a_q_k_norm_normalises_each_head_before_rope(rng):
    arch, w = family(rng, n_layer=1, qk_norm=True, n_kv_head=2)
    _, seen = hooked(arch, w, rng.integers(0, arch.d_vocab, 5))
    n, a = block_names(0), w.blocks[0].attn
    q, k = seen[n.q], seen[n.k]  # (T, H, d), (T, H_kv, d)
    assert seen[n.q_normed].tobytes() == rms_norm(q, a.q_norm).tobytes()
    assert seen[n.k_normed].tobytes() == rms_norm(k, a.k_norm).tobytes()
    rope = RoPE(head_dim=arch.d_head, base=arch.rope_base, convention="half")
    np.testing.assert_array_equal(seen[n.rot_q].swapaxes(0, 1), rope.apply(seen[n.q_normed].swapaxes(0, 1),
                                                                            np.arange(5)))  # fmt: skip


def test_the_new_hook_points_are_named_in_the_order_the_forward_passes_them(rng):
    arch, w = family(rng, **EVERYTHING)
    order = []
    every = Hooks([(lambda n: True, lambda a, n: order.append(n))], hook_names(arch))
    forward(arch, w, rng.integers(0, arch.d_vocab, 4), hooks=every)
    assert order == list(hook_names(arch))
    n = block_names(1)
    assert {n.q_normed, n.k_normed, n.ln1_post, n.ln2_post} <= set(order)
    assert (n.q_normed, n.k_normed, n.ln1_post, n.ln2_post) == (
        "blocks.1.attn.q_norm.hook_normalized", "blocks.1.attn.k_norm.hook_normalized",
        "blocks.1.ln1_post.hook_normalized", "blocks.1.ln2_post.hook_normalized",
    )  # fmt: skip
    plain, _ = llama(rng, n_layer=1)
    parts = (".q_norm.", ".k_norm.", ".ln1_post.", ".ln2_post.")
    assert not any(part in x for x in hook_names(plain) for part in parts)


# -- positions -----------------------------------------------------------------------------------


@pytest.mark.oracle
def test_llama3_frequencies_are_transformers_own(rng):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    params = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
              "high_freq_factor": 4.0, "original_max_position_embeddings": 64}  # fmt: skip
    config = LlamaConfig(hidden_size=256, num_attention_heads=4, rope_parameters=params)
    want, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    scaling = RopeScaling(kind="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
                          original_context=64)  # fmt: skip
    got = ScaledRoPE(head_dim=64, base=500000.0, convention="half", scaling=scaling).inverse_frequencies
    np.testing.assert_allclose(got, want.to(torch.float64).numpy(), rtol=1e-6, atol=0)  # theirs: float32
    plain = RoPE(head_dim=64, base=500000.0).inverse_frequencies
    assert got[0] == plain[0] and got[-1] == plain[-1] / 8  # the shortest wavelength kept, the longest slowed


def test_linear_and_factor_scalings_divide_the_frequencies(rng):
    plain = RoPE(head_dim=8, base=100.0).inverse_frequencies
    linear = ScaledRoPE(head_dim=8, base=100.0, scaling=RopeScaling(kind="linear", factor=8.0))
    assert linear.inverse_frequencies.tobytes() == (plain / 8.0).tobytes()
    factors = (1.0, 2.0, 4.0, 8.0)
    by = ScaledRoPE(head_dim=8, base=100.0, scaling=RopeScaling(kind="factors", factors=factors))
    assert by.inverse_frequencies.tobytes() == (plain / np.array(factors)).tobytes()
    assert by != linear and hash(by) != hash(RoPE(head_dim=8, base=100.0))  # the fast steps' cos/sin key


def test_local_layers_rotate_with_their_own_base_and_global_ones_with_the_scaled_rope(rng):
    arch, w = family(rng, n_layer=2, sliding_window=3, local_layers=(0,), rope_base_local=7.0,
                     rope_scaling=RopeScaling(kind="linear", factor=4.0))  # fmt: skip
    assert _rope(arch, local=True) == RoPE(head_dim=arch.d_head, base=7.0, convention="half")
    assert isinstance(_rope(arch), ScaledRoPE) and _rope(arch).base == arch.rope_base
    _, seen = hooked(arch, w, rng.integers(0, arch.d_vocab, 5))
    for layer, rope in ((0, _rope(arch, local=True)), (1, _rope(arch))):
        n = block_names(layer)
        want = rope.apply(seen[n.q].swapaxes(0, 1), np.arange(5)).swapaxes(0, 1)
        assert seen[n.rot_q].tobytes() == np.ascontiguousarray(want).tobytes()


def test_learned_positions_with_an_offset_read_the_rows_after_it(rng):
    arch, w = gpt2(rng, n_ctx=12)
    shifted = arch.replace(position_offset=2, n_ctx=10)
    ids = rng.integers(0, arch.d_vocab, 6)
    _, seen = hooked(shifted, w, ids)
    assert seen["hook_pos_embed"].tobytes() == w.pos_embed[2:8].tobytes()
    cache = [KVCache() for _ in range(arch.n_layer)]
    forward(shifted, w, ids[:4], caches=cache)
    _, later = hooked(shifted, w, ids[4:], caches=cache)
    assert later["hook_pos_embed"].tobytes() == w.pos_embed[6:8].tobytes()
    with pytest.raises(FieldError, match=r"pos_embed.*\(13, 16\)"):
        check_weights(arch.replace(position_offset=1), w)  # 12 positions after an offset of 1: 13 rows


# -- the description refuses what cannot be -------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        (dict(sliding_window=0), "sliding_window"),
        (dict(sliding_window=True), "sliding_window"),
        (dict(local_layers=(0,)), "local_layers"),
        (dict(sliding_window=2, local_layers=(0, 0)), "local_layers"),
        (dict(sliding_window=2, local_layers=(5,)), "local_layers"),
        (dict(rope_base_local=10.0), "rope_base_local"),
        (dict(attn_softcap=0.0), "attn_softcap"),
        (dict(final_softcap=math.inf), "final_softcap"),
        (dict(position_offset=-1), "position_offset"),
        (dict(positions="learned", rope_scaling=RopeScaling(kind="linear", factor=2.0)), "positions"),
        (dict(rope_scaling=RopeScaling(kind="factors", factors=(1.0, 2.0))), "rope_scaling"),
        (dict(post_norms=True, norm_placement="post"), "post_norms"),
        (dict(causal=False, sliding_window=4), "sliding_window"),
    ],
)
def test_an_impossible_option_is_refused_at_its_field(rng, changes, field):
    arch, _ = llama(rng, n_layer=2)
    with pytest.raises(FieldError) as error:
        arch.replace(**changes)
    assert error.value.loc[0] == field, str(error.value)


@pytest.mark.parametrize("kind", ["cubic", "yarn"])
def test_an_unknown_rope_scaling_is_refused_naming_the_ones_there_are(kind):
    with pytest.raises(FieldError, match="linear.*llama3.*factors"):
        RopeScaling(kind=kind, factor=2.0)


def test_weights_without_the_norms_the_options_need_are_refused_by_name(rng):
    arch, w = family(rng, n_layer=2, qk_norm=True, post_norms=True)
    check_weights(arch, w)
    b = w.blocks[1]

    def second(**changes):  # w with block 1's attention (attn=...) or block (the rest) changed
        attn = dataclasses.replace(b.attn, **changes.pop("attn", {}))
        return dataclasses.replace(w, blocks=(w.blocks[0], dataclasses.replace(b, attn=attn, **changes)))

    with pytest.raises(FieldError, match="blocks.1.attn.q_norm"):
        check_weights(arch, second(attn=dict(q_norm=None)))
    with pytest.raises(FieldError, match="blocks.1.norm_2_post"):
        check_weights(arch, second(norm_2_post=None))
    wide = RMSNormParams(np.ones(arch.d_head + 2), 1e-6)
    with pytest.raises(FieldError, match=r"k_norm.weight.*\(10,\)"):
        check_weights(arch, second(attn=dict(k_norm=wide)))
    with pytest.raises(FieldError, match="blocks.1.attn.b_k"):  # a q-sized bias on k
        check_weights(arch, second(attn=dict(b_k=np.zeros(arch.n_head * arch.d_head))))
