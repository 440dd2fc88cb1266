"""The one forward on the reference's steps: a stack of engine/block.py's blocks bit for bit, every hook
point the activation the block computed, hooks that change what follows, and the forward in pieces
(a KV cache, start_at_layer / stop_at_layer) giving the whole forward's numbers."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.forward import REFERENCE, forward
from attnlab.engine.hooks import Hooks, block_names, hook_names
from attnlab.engine.layers import LayerNormParams, norm

from .tinykit import bert, gpt2, hooked, llama, stack


def _heads_first(a):
    """A hook's (..., T, H, d) as a trace's (..., H, T, d)."""
    return np.ascontiguousarray(np.swapaxes(a, -3, -2))


def _same(a, b, what: str) -> None:
    a, b = np.asarray(a), np.ascontiguousarray(b)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), what
    assert a.tobytes() == b.tobytes(), f"{what}: largest gap {np.max(np.abs(a - b))}"


PRE = {  # hook point (a field of BlockNames) -> the pre-norm block's trace name
    "resid_pre": "input", "ln1": "norm_1", "rot_q": "attn.q_rotated", "rot_k": "attn.k_rotated",
    "q": "attn.q", "k": "attn.k", "v": "attn.v", "pattern": "attn.weights", "z": "attn.heads",
    "attn_out": "attn.output", "resid_mid": "residual_1", "ln2": "norm_2", "mlp_pre": "mlp.hidden",
    "mlp_pre_linear": "mlp.up", "mlp_post": "mlp.activated", "mlp_out": "mlp.output", "resid_post": "output",
}  # fmt: skip
POST = {  # the post-norm block's
    "resid_pre": "input", "q": "attn.q", "k": "attn.k", "v": "attn.v", "pattern": "attn.weights",
    "z": "attn.heads", "attn_out": "attn.output", "resid_mid": "residual_1", "ln1": "norm_1",
    "mlp_pre": "mlp.hidden", "mlp_post": "mlp.activated", "mlp_out": "mlp.output", "resid_post": "residual_2",
    "ln2": "output",
}  # fmt: skip
PER_HEAD = {"q", "k", "v", "rot_q", "rot_k", "z"}


def _hooks_are_the_blocks_steps(arch, seen, results, table) -> None:
    for layer, res in enumerate(results):
        n = block_names(layer)
        for field, step in table.items():
            unrotated = field in ("rot_q", "rot_k") and arch.positions != "rope"
            if unrotated or (field == "mlp_pre_linear" and arch.mlp != "gated"):
                continue
            got = seen[getattr(n, field)]
            _same(_heads_first(got) if field in PER_HEAD else got, res.trace[step], f"{layer} {field}")
        # the scores: the trace's q.k * scale where a key may be seen, -inf where it is blocked
        scores, weighted = seen[n.scores], res.trace["attn.weights"] > 0
        may = np.broadcast_to(res.trace.get("attn.allowed", True), scores.shape)
        assert np.all(np.isneginf(scores[~may])) and np.all(np.isfinite(scores[may]))
        _same(scores[may], res.trace["attn.scores"][may], f"{layer} scores")
        assert not np.any(weighted & ~may)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rope_pairs", ["half", "interleaved"])
@pytest.mark.parametrize("kv_heads", [2, 1, 4])
def test_a_llama_style_decoder_is_a_stack_of_reference_blocks_bit_for_bit(rng, dtype, rope_pairs, kv_heads):
    """RMSNorm, SwiGLU, RoPE, GQA / MQA / MHA: every hook point is the block's own step, bit for bit."""
    arch, w = llama(rng, dtype=dtype, rope_pairs=rope_pairs, n_head=4, n_kv_head=kv_heads, n_layer=3)
    ids = rng.integers(0, arch.d_vocab, 9)
    logits, seen = hooked(arch, w, ids)
    embedded, results, x = stack(arch, w, ids)
    _same(seen["hook_embed"], embedded, "embeddings")
    _hooks_are_the_blocks_steps(arch, seen, results, PRE)
    _same(forward(arch, w, ids, stop_at_layer=arch.n_layer), x, "the residual leaving the last block")
    final = norm(x, w.final_norm)
    _same(seen["ln_final.hook_normalized"], final, "final norm")
    _same(logits, final @ w.embed.T, "logits through the tied embeddings")
    assert logits.dtype == dtype and logits.shape == (9, arch.d_vocab)
    _same(forward(arch, w, ids), logits, "the same forward without hooks")


def test_a_scaled_embedding_an_attention_scale_and_an_untied_output_are_the_stacks_too(rng):
    arch, w = llama(rng, embed_scale=4.0, attn_scale=0.3, tied_output=False)
    w = dataclasses.replace(w, unembed=rng.standard_normal((arch.d_model, arch.d_vocab)))
    ids = rng.integers(0, arch.d_vocab, 6)
    logits, seen = hooked(arch, w, ids)
    embedded, results, x = stack(arch, w, ids)
    _same(seen["hook_embed"], w.embed[ids] * 4.0, "scaled embeddings")
    _hooks_are_the_blocks_steps(arch, seen, results, PRE)
    _same(logits, norm(x, w.final_norm) @ w.unembed, "logits through W_U")


def test_a_gpt2_style_decoder_with_layernorm_biases_and_learned_positions_is_the_stack(rng):
    arch, w = gpt2(rng)
    ids = rng.integers(0, arch.d_vocab, 11)
    logits, seen = hooked(arch, w, ids)
    embedded, results, x = stack(arch, w, ids)
    _same(seen["hook_pos_embed"], w.pos_embed[:11], "positions 0..10")
    _same(seen["hook_embed"] + seen["hook_pos_embed"], embedded, "token + position")
    _hooks_are_the_blocks_steps(arch, seen, results, PRE)
    _same(logits, norm(x, w.final_norm) @ w.embed.T, "logits")


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_a_post_norm_encoders_padded_batch_is_a_stack_of_reference_blocks_bit_for_bit(rng, activation):
    """LayerNorm after each sublayer, biases, GELU, learned positions, token types, a padded batch."""
    arch, w = bert(rng, activation=activation)
    ids = rng.integers(0, arch.d_vocab, (3, 10))
    padding = np.ones((3, 10), bool)
    padding[1, 7:] = padding[2, 2:] = False
    pooled, seen = hooked(arch, w, ids, key_padding=padding)
    embedded, results, x = stack(arch, w, ids, key_padding=padding)
    _same(seen["embed.ln.hook_normalized"], embedded, "the normalised embeddings")
    _same(seen["hook_token_type_embed"], w.type_embed[0], "token type 0")
    _hooks_are_the_blocks_steps(arch, seen, results, POST)
    _same(forward(arch, w, ids, key_padding=padding, stop_at_layer=arch.n_layer), x, "the last block's")
    # the sentence embedding: the mean of the real tokens' rows, scaled to unit length
    for b, real in enumerate(padding):
        mean = x[b][real].mean(axis=0)
        np.testing.assert_allclose(pooled[b], mean / np.linalg.norm(mean), rtol=0, atol=1e-15)
    # padded keys are -inf in the scores and 0 in the pattern, in every head of every layer
    for layer in range(arch.n_layer):
        n = block_names(layer)
        assert np.all(np.isneginf(seen[n.scores][2][..., 2:])) and np.all(seen[n.pattern][2][..., 2:] == 0.0)
        assert np.all(np.isfinite(seen[n.scores][0]))


def test_what_padding_hides_does_not_change_a_bit_of_a_real_tokens_numbers(rng):
    arch, w = bert(rng)
    ids = rng.integers(0, arch.d_vocab, (2, 8))
    padding = np.ones((2, 8), bool)
    padding[0, 5:] = False
    other = ids.copy()
    other[0, 5:] = (ids[0, 5:] + 1) % arch.d_vocab
    _same(forward(arch, w, other, key_padding=padding), forward(arch, w, ids, key_padding=padding), "pooled")
    real = forward(arch, w, other, key_padding=padding, stop_at_layer=2)[0, :5]
    _same(real, forward(arch, w, ids, key_padding=padding, stop_at_layer=2)[0, :5], "real tokens' rows")


def test_each_sequence_of_a_decoders_batch_is_its_own_forward(rng):
    arch, w = llama(rng)
    ids = rng.integers(0, arch.d_vocab, (3, 7))
    batch = forward(arch, w, ids)
    assert batch.shape == (3, 7, arch.d_vocab)
    for b in range(3):
        np.testing.assert_allclose(batch[b], forward(arch, w, ids[b]), rtol=0, atol=1e-13)


# -- the forward in pieces -----------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "tol"), [(np.float64, 1e-13), (np.float32, 2e-6)])
def test_prefill_and_decode_through_the_cache_give_the_full_forward(rng, dtype, tol):
    arch, w = llama(rng, dtype=dtype, n_layer=3)
    ids = rng.integers(0, arch.d_vocab, 9)
    full, seen_full = hooked(arch, w, ids)
    caches, stack_caches, at = [KVCache() for _ in range(3)], [KVCache() for _ in range(3)], 0
    for n in (4, 1, 1, 3):
        part, seen = hooked(arch, w, ids[at : at + n], caches=caches)
        _, _, x = stack(arch, w, ids[at : at + n], caches=stack_caches)
        _same(seen[block_names(2).resid_post], x, "the cached forward is the cached stack, bit for bit")
        np.testing.assert_allclose(part, full[at : at + n], rtol=0, atol=tol * 10)
        pattern = seen[block_names(1).pattern]
        assert pattern.shape == (4, n, at + n)  # the keys: everything cached
        np.testing.assert_allclose(pattern, seen_full[block_names(1).pattern][:, at : at + n, : at + n],
                                   rtol=0, atol=tol)  # fmt: skip
        at += n
    assert [c.length for c in caches] == [9, 9, 9]
    for layer in range(3):
        k = seen_full[block_names(layer).rot_k]  # (T, H_kv, d): the rotated keys a cache keeps
        np.testing.assert_allclose(caches[layer].keys, _heads_first(k), rtol=0, atol=tol)
        np.testing.assert_allclose(caches[layer].values, _heads_first(seen_full[block_names(layer).v]),
                                   rtol=0, atol=tol)  # fmt: skip


def test_positions_given_rotate_as_given(rng):
    arch, w = llama(rng)
    ids = rng.integers(0, arch.d_vocab, 4)
    at, seen_at = hooked(arch, w, ids, positions=np.arange(10, 14))
    caches = [KVCache() for _ in range(2)]
    _same(forward(arch, w, ids, positions=np.arange(10, 14), caches=caches), at, "a cache adds no offset")
    from_zero, seen = hooked(arch, w, ids)
    rot_q = block_names(0).rot_q
    _same(seen_at[block_names(0).q], seen[block_names(0).q], "q before RoPE")
    assert np.max(np.abs(seen_at[rot_q] - seen[rot_q])) > 0.1  # RoPE turned them by other angles
    # relative positions are all attention sees: a shift of every position changes nothing but rounding
    np.testing.assert_allclose(at, from_zero, rtol=0, atol=1e-12)


@pytest.mark.parametrize("model", [llama, bert, gpt2])
def test_stopping_at_a_layer_and_starting_from_it_give_the_whole_forward_bit_for_bit(rng, model):
    arch, w = model(rng, n_layer=3)
    options = {}
    if arch.causal:
        ids = rng.integers(0, arch.d_vocab, 8)
    else:
        ids = rng.integers(0, arch.d_vocab, (2, 8))
        options["key_padding"] = np.arange(8) < np.array([[8], [5]])
    whole, seen = hooked(arch, w, ids, **options)
    if arch.embed_norm:
        embedded = seen["embed.ln.hook_normalized"]
    elif arch.positions == "learned":
        embedded = seen["hook_embed"] + seen["hook_pos_embed"]
    else:
        embedded = seen["hook_embed"]
    _same(forward(arch, w, ids, stop_at_layer=0, **options), embedded, "stop at 0: the embeddings")
    for layer in range(arch.n_layer + 1):
        x = forward(arch, w, ids, stop_at_layer=layer, **options)
        if layer < arch.n_layer:
            _same(x, seen[block_names(layer).resid_pre], f"entering block {layer}")
        _same(forward(arch, w, ids, start_at_layer=layer, resid=x, **options), whole, f"from block {layer}")
        _same(forward(arch, w, None, start_at_layer=layer, resid=x, **options), whole, "the ids are not read")
    a, b = 1, 2
    middle = forward(arch, w, ids, start_at_layer=a, resid=seen[block_names(a).resid_pre], stop_at_layer=b,
                     **options)  # fmt: skip
    _same(middle, seen[block_names(b).resid_pre], "blocks 1..1 alone")


def test_the_last_row_alone_is_the_whole_forwards_last_row(rng):
    arch, w = llama(rng)
    ids = rng.integers(0, arch.d_vocab, 7)
    last = forward(arch, w, ids, last_only=True)
    assert last.shape == (1, arch.d_vocab)
    np.testing.assert_allclose(last, forward(arch, w, ids)[-1:], rtol=0, atol=1e-13)


# -- hooks that change what follows ------------------------------------------------------------------


def test_a_hook_that_reads_or_returns_copies_changes_no_bit(rng):
    for arch, w, ids, options in (
        (*llama(rng), [3, 1, 4, 1, 5], {}),
        (*bert(rng), [[3, 1, 4, 1, 5]], {"key_padding": np.array([[True] * 4 + [False]])}),
    ):
        plain = forward(arch, w, ids, **options)
        for fn in (lambda a, n: None, lambda a, n: a, lambda a, n: a.copy()):
            hooks = Hooks([(lambda n: True, fn)], hook_names(arch))
            _same(forward(arch, w, ids, hooks=hooks, **options), plain, arch.family)


@pytest.mark.parametrize("model", [llama, bert])
def test_the_forward_never_writes_into_what_it_gave_a_hook(rng, model):
    arch, w = model(rng)
    ids, options = ([2, 7, 1, 8, 2, 8], {}) if arch.causal else ([[2, 7, 1, 8, 2, 8]], {"key_padding": None})
    kept = []
    hooks = Hooks([(lambda n: True, lambda a, n: kept.append((n, a, a.copy())))], hook_names(arch))
    forward(arch, w, ids, hooks=hooks, **options)
    assert len(kept) == len(hook_names(arch))
    for name, given, copy in kept:
        _same(given, copy, name)


def test_a_scores_hook_sees_blocked_keys_as_minus_infinity_and_keeps_them_blocked(rng):
    arch, w = llama(rng, n_head=4, n_kv_head=2)
    ids = rng.integers(0, arch.d_vocab, 5)
    name = block_names(0).scores
    seen = {}

    def flatten(a, n):
        seen["scores"] = a
        return np.where(np.isneginf(a), -np.inf, 0.0)  # every key a row may see equally likely

    after = {}
    keep = (lambda n: n.endswith("hook_pattern"), lambda a, n: after.update({n: a}))
    hooks = Hooks([(name, flatten), keep], hook_names(arch))
    forward(arch, w, ids, hooks=hooks)
    scores = seen["scores"]
    assert scores.shape == (4, 5, 5)
    future = np.triu(np.ones((5, 5), bool), k=1)
    assert np.all(np.isneginf(scores[:, future])) and np.all(np.isfinite(scores[:, ~future]))
    uniform = np.where(future, 0.0, 1.0 / np.arange(1, 6)[:, None])  # row i: 1/(i+1) on keys 0..i
    np.testing.assert_allclose(after[block_names(0).pattern], np.broadcast_to(uniform, (4, 5, 5)), rtol=0,
                               atol=1e-15)  # fmt: skip


def test_a_scores_hook_cannot_unblock_a_key_on_the_reference(rng):
    arch, w = llama(rng)
    got = {}
    pairs = [("blocks.0.attn.hook_attn_scores", lambda a, n: np.zeros_like(a)),
             ("blocks.0.attn.hook_pattern", lambda a, n: got.update(p=a))]  # fmt: skip
    hooks = Hooks(pairs, hook_names(arch))
    forward(arch, w, [1, 2, 3], hooks=hooks)
    assert np.all(got["p"][:, np.triu_indices(3, 1)[0], np.triu_indices(3, 1)[1]] == 0.0)


def _mix(pattern, v, group):
    """z (T, H, d) by hand: z[t, h] = sum_j pattern[h, t, j] v[j, h // group]."""
    H, T, S = pattern.shape
    z = np.zeros((T, H, v.shape[-1]))
    for h in range(H):
        for t in range(T):
            for j in range(S):
                z[t, h] += pattern[h, t, j] * v[j, h // group]
    return z


def test_a_pattern_hooks_replacement_is_what_mixes_the_values(rng):
    arch, w = llama(rng, n_head=4, n_kv_head=2, d_head=8)
    ids = rng.integers(0, arch.d_vocab, 6)
    n = block_names(1)
    mine = rng.random((4, 6, 6))
    mine /= mine.sum(-1, keepdims=True)  # weights on future keys too: the hook decides
    got = {}
    hooks = Hooks([(n.pattern, lambda a, name: mine), (lambda x: x in (n.v, n.z, n.attn_out),
                                                       lambda a, name: got.update({name: a}))],
                  hook_names(arch))  # fmt: skip
    out = forward(arch, w, ids, hooks=hooks)
    z = got[n.z]
    np.testing.assert_allclose(z, _mix(mine, got[n.v], arch.group), rtol=0, atol=1e-14)
    _same(got[n.attn_out], z.reshape(6, -1) @ w.blocks[1].attn.w_o, "W_O on the mixed heads")
    assert not np.allclose(out, forward(arch, w, ids))


def test_a_heads_ablation_and_a_residual_patch_flow_on_through_the_forward(rng):
    arch, w = llama(rng, n_layer=3)
    ids = rng.integers(0, arch.d_vocab, 6)
    plain, seen = hooked(arch, w, ids)
    n = block_names(1)

    def ablate(z, name):
        out = z.copy()
        out[:, 2] = 0.0  # query head 2 (of KV head 1), every position
        return out

    got = {}
    hooks = Hooks([(n.z, ablate), (n.attn_out, lambda a, name: got.update(out=a))], hook_names(arch))
    ablated = forward(arch, w, ids, hooks=hooks)
    side = seen[n.z].copy()
    side[:, 2] = 0.0
    _same(got["out"], side.reshape(6, -1) @ w.blocks[1].attn.w_o, "W_O without head 2")
    assert not np.allclose(ablated, plain)
    # a residual patch is the forward started from the patched stream
    patch = seen[block_names(2).resid_pre].copy()
    patch[3] = rng.standard_normal(arch.d_model)
    patched = forward(arch, w, ids, hooks=Hooks([(block_names(2).resid_pre, lambda a, name: patch)],
                                                hook_names(arch)))  # fmt: skip
    _same(patched, forward(arch, w, None, start_at_layer=2, resid=patch), "patched")
    _same(patched[:3], plain[:3], "positions before the patch")  # causal: earlier rows never see row 3


def test_a_hook_on_an_encoders_batch_sees_it_whole(rng):
    arch, w = bert(rng)
    ids = rng.integers(0, arch.d_vocab, (2, 6))
    padding = np.ones((2, 6), bool)
    padding[1, 4:] = False
    pooled = forward(arch, w, ids, key_padding=padding)

    def second_text_only(a, name):
        out = a.copy()
        out[0] = 0.0  # the first text's z: every head off
        return out

    hooks = Hooks([("blocks.1.attn.hook_z", second_text_only)], hook_names(arch))
    changed = forward(arch, w, ids, key_padding=padding, hooks=hooks)
    _same(changed[1], pooled[1], "the other text")
    assert not np.allclose(changed[0], pooled[0])


# -- what the forward refuses --------------------------------------------------------------------------


def test_a_token_outside_the_vocabulary_is_refused(rng):
    arch, w = llama(rng)
    with pytest.raises(FieldError, match=r"range over \[0, 40\]; the table has rows 0..39"):
        forward(arch, w, [0, 40])


def test_nan_in_the_residual_stream_is_refused_by_the_reference(rng):
    arch, w = llama(rng, dtype=np.float32)
    bad = np.full((2, arch.d_model), np.nan, np.float32)
    with pytest.raises(ValueError):
        forward(arch, w, None, resid=bad)


def _filled(arch, w, ops=REFERENCE):
    caches = [KVCache() for _ in range(arch.n_layer)]
    forward(arch, w, [1, 2, 3], caches=caches, ops=ops)
    return caches, [(c.keys.copy(), c.values.copy()) for c in caches]


def _untouched(caches, kept) -> None:
    assert [c.length for c in caches] == [k.shape[-2] for k, _ in kept]
    for c, (k, v) in zip(caches, kept):
        _same(c.keys, k, "keys")
        _same(c.values, v, "values")


def test_nan_is_refused_by_the_reference_naming_it_and_the_cache_is_left_alone(rng):
    arch, w = llama(rng, dtype=np.float32)
    caches, kept = _filled(arch, w)
    with pytest.raises(ValueError, match="NaN"):
        forward(arch, w, None, resid=np.full((1, arch.d_model), np.nan, np.float32), caches=caches)
    _untouched(caches, kept)


def overflowing(arch, w, layer: int):
    """``w`` with block ``layer``'s q and k scaled so far that their products overflow float32 (q and k
    themselves finite)."""
    b = w.blocks[layer]
    attn = dataclasses.replace(b.attn, w_q=b.attn.w_q * np.float32(1e20), w_k=b.attn.w_k * np.float32(1e20))
    blocks = list(w.blocks)
    blocks[layer] = dataclasses.replace(b, attn=attn)
    return dataclasses.replace(w, blocks=tuple(blocks))


def test_scores_that_overflow_are_refused(rng):
    arch, w = llama(rng, dtype=np.float32)
    with pytest.raises(ValueError, match="overflowed to infinity; the inputs are too large for float32"):
        forward(arch, overflowing(arch, w, 1), [4, 5])


def test_a_step_refused_in_a_later_layer_leaves_every_cache_as_it_was(rng):
    arch, w = llama(rng, dtype=np.float32)
    caches, kept = _filled(arch, w)
    with pytest.raises(ValueError, match="overflowed"):
        forward(arch, overflowing(arch, w, 1), [4], caches=caches)
    _untouched(caches, kept)


def test_layernorm_weights_without_a_scale_or_bias_are_plain_normalisation(rng):
    arch, w = bert(rng, n_layer=1)
    bare = LayerNormParams(None, None, 1e-12)
    w = dataclasses.replace(w, embed_norm=bare)
    ids = rng.integers(0, arch.d_vocab, (1, 5))
    x = forward(arch, w, ids, stop_at_layer=0)
    np.testing.assert_allclose(x.mean(-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(x.var(-1), 1.0, atol=1e-9)
