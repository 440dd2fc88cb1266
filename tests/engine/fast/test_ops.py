"""The fast ops (engine/fast/ops.py) swapped into the one forward: FAST gives the reference's numbers to
rounding and steps aside where its fast forms do not apply, ROWS gives each row a one-token forward's
bits, ON_VALUES the reference's steps on quantised weights' values."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.fast import ops as fast_ops
from attnlab.engine.fast import quant
from attnlab.engine.fast.decode import steps
from attnlab.engine.fast.ops import FAST, ON_VALUES, ROWS, joined, rows_apply, side_by_side
from attnlab.engine.fast.quant import with_values
from attnlab.engine.forward import REFERENCE, forward
from attnlab.engine.hooks import Hooks, block_names, hook_names
from attnlab.engine.layers import LayerNormParams, RMSNormParams
from attnlab.engine.positions import RoPE

from ..tinykit import bert, gpt2, hooked, joined_copy, llama, quant_matrix

TOLERANCES = [(np.float64, 1e-13), (np.float32, 2e-6)]


def close(a, b, tol, what=""):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    np.testing.assert_allclose(a, b, rtol=0, atol=tol, err_msg=what)


def same(a, b, what=""):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert a.tobytes() == np.ascontiguousarray(b).tobytes(), f"{what}: largest gap {np.max(np.abs(a - b))}"


def caches_for(arch):
    return [KVCache() for _ in range(arch.n_layer)]


# -- FAST against the reference ------------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "tol"), TOLERANCES)
def test_fast_matches_the_reference_through_prefill_and_decode(rng, dtype, tol):
    arch, w = llama(rng, dtype=dtype, rope_pairs="interleaved", rope_base=100.0)
    fast_caches, ref_caches, past = caches_for(arch), caches_for(arch), 0
    for n in (5, 1, 1, 1):  # a prompt, then three decoding steps
        ids = rng.integers(0, arch.d_vocab, n)
        fast, seen_fast = hooked(arch, w, ids, FAST, caches=fast_caches)
        ref, seen_ref = hooked(arch, w, ids, REFERENCE, caches=ref_caches)
        close(fast, ref, 10 * tol, "logits")
        for layer in range(arch.n_layer):
            nm = block_names(layer)
            for name in (nm.resid_post, nm.attn_out, nm.pattern, nm.z, nm.rot_k, nm.v):
                close(seen_fast[name], seen_ref[name], tol, name)
        past += n
        assert seen_fast[block_names(1).pattern].shape == (arch.n_head, n, past)
    for f, r in zip(fast_caches, ref_caches):
        close(f.keys, r.keys, tol, "keys")
        close(f.values, r.values, tol, "values")
    # the causal band: the prompt's first row saw only the first key
    _, seen = hooked(arch, w, [1, 2, 3, 4, 5], FAST)
    first = seen[block_names(0).pattern]
    assert np.all(first[:, 0, 1:] == 0.0) and np.allclose(first.sum(-1), 1.0)


def test_fast_without_a_cache_or_rotary_positions_matches_the_reference(rng):
    arch, w = llama(rng, positions="none", attn_scale=0.3)
    ids = rng.integers(0, arch.d_vocab, 6)
    fast, seen_fast = hooked(arch, w, ids, FAST)
    ref, seen_ref = hooked(arch, w, ids, REFERENCE)
    close(fast, ref, 1e-13)
    close(seen_fast["blocks.1.hook_resid_post"], seen_ref["blocks.1.hook_resid_post"], 1e-13)


def test_nan_is_refused_naming_it_and_the_cache_is_left_alone(rng):
    arch, w = llama(rng, dtype=np.float32)
    caches = caches_for(arch)
    forward(arch, w, [1, 2, 3], ops=FAST, caches=caches)
    kept = [(c.keys.copy(), c.values.copy()) for c in caches]
    poisoned = dataclasses.replace(w, embed=w.embed.copy())
    poisoned.embed[7, 3] = np.nan
    nan = np.full((1, arch.d_model), np.nan, np.float32)
    for weights, ids, resid in ((w, None, nan), (poisoned, [7], None)):
        with pytest.raises(ValueError, match="NaN"):
            forward(arch, weights, ids, resid=resid, ops=FAST, caches=caches)
        assert [c.length for c in caches] == [3, 3]
        for c, (k, v) in zip(caches, kept):
            same(c.keys, k)
            same(c.values, v)


# -- which steps take their fast form ------------------------------------------------------------------


@pytest.fixture
def calls(monkeypatch):
    """How often each fast form ran: products (float and on blocks), the compiled / NumPy steps, the
    output layer's slices."""
    steps.kernels()  # compiled (and self-checked) before the spies go in
    counts: collections.Counter = collections.Counter()

    def spy(module, name, key):
        real = getattr(module, name)

        def counted(*args, **kwargs):
            counts[key] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    spy(fast_ops, "_product", "product")
    spy(fast_ops, "product", "blocks product")
    spy(fast_ops, "run", "logit slices")
    for name in ("rms", "rotate_qk", "attend", "gated", "gelu"):
        spy(steps, name, name)
    return counts


def test_each_step_takes_its_fast_form_where_it_applies_and_the_reference_elsewhere(rng, calls):
    arch, w = llama(rng, dtype=np.float32)
    p = w.blocks[0]
    x = rng.standard_normal((3, arch.d_model)).astype(np.float32)

    def check(step, *args, fast: str | None, tol=2e-6, **kwargs):
        calls.clear()
        got = getattr(FAST, step)(*args, **kwargs)
        want = getattr(REFERENCE, step)(*args, **kwargs)
        for g, r in zip(got, want) if isinstance(got, tuple) else ((got, want),):
            np.testing.assert_allclose(g, r, rtol=0, atol=tol, err_msg=step)
        assert dict(calls) == ({fast: calls[fast]} if fast else {}), (step, dict(calls))
        return calls[fast] if fast else 0

    # norms: RMSNorm on a 2-D array of its weight's dtype; LayerNorm (the reference's steps, so that an
    # encoder's single text keeps the reference's bits), another dtype, a batch: the reference
    assert check("norm", x, p.norm_1, fast="rms") == 1
    assert check("norm", x, RMSNormParams(None, 1e-5), fast="rms") == 1
    check("norm", x, LayerNormParams(p.norm_1.weight, p.norm_1.weight, 1e-5), fast=None)
    check("norm", x, RMSNormParams(p.norm_1.weight.astype(np.float64), 1e-5), fast=None)
    check("norm", x[None], p.norm_1, fast=None)
    # products: on weights of x's dtype or blocks (float32), a bias of x's dtype added after
    assert check("linear", x, p.attn.w_q, None, fast="product") == 1
    assert check("linear", x, p.attn.w_q, np.ones(arch.n_head * arch.d_head, np.float32), fast="product") == 1
    check("linear", x, p.attn.w_q, np.ones(arch.n_head * arch.d_head, np.float64), fast=None)
    check("linear", x, p.attn.w_q.astype(np.float64), None, fast=None)
    check("linear", x[None], p.attn.w_q, None, fast=None)
    blocks = quant_matrix(rng, 64, 32)
    assert check("linear", np.ones((2, 64), np.float32), blocks, None, fast="product", tol=1e-4) == 1
    # q, k, v: three products, one where they sit side by side, each bias added to its own
    assert check("project_qkv", x, p.attn, arch, fast="product") == 3
    assert check("project_qkv", x, joined_copy(w).blocks[0].attn, arch, fast="product") == 1
    b_k = rng.standard_normal(arch.n_kv_head * arch.d_head).astype(np.float32)
    biased = dataclasses.replace(p.attn, b_k=b_k)
    assert check("project_qkv", x, biased, arch, fast="product") == 3
    check("project_qkv", x, dataclasses.replace(biased, b_k=biased.b_k.astype(np.float64)), arch, fast=None)
    check("project_qkv", x[None], p.attn, arch, fast=None)
    # RoPE: (T, H, d) heads at positions given as an array
    q, k, _ = REFERENCE.project_qkv(x, p.attn, arch)
    rope = RoPE(head_dim=arch.d_head, base=arch.rope_base, convention=arch.rope_pairs)
    assert check("rotate", q, k, rope, np.arange(3), fast="rotate_qk") == 1
    check("rotate", q, k, rope, [0, 1, 2], fast=None)
    check("rotate", q[None], k[None], rope, np.arange(3), fast=None)
    # attention: one sequence, no key padding, causal or not (an encoder's single text, without a cache)
    q, k, v = REFERENCE.project_qkv(x, p.attn, arch)
    options = dict(cache=None, on_scores=None, on_pattern=None)
    assert check("attend", q, k, v, arch=arch, key_padding=None, **options, fast="attend") == 1
    assert check("attend", q, k, v, arch=arch.replace(causal=False), key_padding=None, **options,
                 fast="attend") == 1  # fmt: skip
    check("attend", q, k, v, arch=arch, key_padding=np.ones(3, bool), **options, fast=None)
    encoder = arch.replace(causal=False)
    check("attend", q, k, v, arch=encoder, key_padding=np.ones(3, bool), **options, fast=None)
    assert not FAST._attend_applies(q, k, v, encoder, KVCache(), None)  # with a cache: the reference's
    check("attend", q[None], k[None], v[None], arch=arch, key_padding=None, **options, fast=None)
    # the MLP: gate and up in one product when side by side; SiLU compiled, other activations not
    assert check("gate_up", x, p.mlp, fast="product") == 2
    assert check("gate_up", x, joined_copy(w).blocks[0].mlp, fast="product") == 1
    gate, up = REFERENCE.gate_up(x, p.mlp)
    assert check("gated", gate, up, "silu", fast="gated") == 1
    check("gated", gate, up, "gelu", fast=None)
    # the output layer: the tied embedding in fixed slices; an untied W_U the reference's product
    assert check("unembed", x, w, fast="logit slices") == 1
    check("unembed", x, dataclasses.replace(w, unembed=w.embed.T.copy()), fast=None)
    check("unembed", x.astype(np.float64), w, fast=None)


def test_a_forward_takes_every_fast_form_a_llama_style_model_allows(rng, calls):
    arch, w = llama(rng, dtype=np.float32, n_layer=3)
    ids = rng.integers(0, arch.d_vocab, 4)
    want = dict(rms=2 * 3, rotate_qk=3, attend=3, gated=3)  # the final norm is the reference's
    forward(arch, w, ids, ops=FAST)
    assert dict(calls) == {**want, "product": 7 * 3, "logit slices": 1}
    calls.clear()
    forward(arch, joined_copy(w), ids, ops=FAST)  # q|k|v and gate|up: one product each
    assert dict(calls) == {**want, "product": 4 * 3, "logit slices": 1}


@pytest.mark.parametrize("model", ["bert", "llama batch"])
def test_where_no_fast_form_applies_fast_is_the_reference_bit_for_bit(rng, calls, model):
    """An encoder (LayerNorm, biases, GELU, key padding, a batch) and a decoder's batch: every step is the
    reference's, so every number is its bits."""
    if model == "bert":
        arch, w = bert(rng)
        ids, options = rng.integers(0, arch.d_vocab, (2, 7)), {"key_padding": np.arange(7) < [[7], [4]]}
    else:
        arch, w = llama(rng, dtype=np.float32)
        ids, options = rng.integers(0, arch.d_vocab, (2, 7)), {}
    fast, seen_fast = hooked(arch, w, ids, FAST, **options)
    assert not calls
    ref, seen_ref = hooked(arch, w, ids, REFERENCE, **options)
    same(fast, ref)
    for name in hook_names(arch):
        same(seen_fast[name], seen_ref[name], name)


def test_a_gpt2_style_decoder_takes_the_fast_products_attention_and_output_layer(rng, calls):
    arch, w = gpt2(rng)
    ids = rng.integers(0, arch.d_vocab, 9)
    fast = forward(arch, w, ids, ops=FAST)
    # six products a block (q, k, v, W_O, the MLP's two), each bias added after; LayerNorm and tanh-GELU
    # are the reference's
    assert dict(calls) == {"product": 6 * arch.n_layer, "attend": arch.n_layer, "logit slices": 1}
    close(fast, forward(arch, w, ids), 1e-13)


# -- weights side by side -------------------------------------------------------------------------------


def test_side_by_side_views_hold_the_matrices_and_join_back(rng):
    a, b, c = (rng.standard_normal((4, n)) for n in (3, 2, 5))
    va, vb, vc = side_by_side(a, b, c)
    for view, original in ((va, a), (vb, b), (vc, c)):
        np.testing.assert_array_equal(view, original)
    whole = joined(va, vb, vc)
    assert whole is not None and whole.shape == (4, 10)
    np.testing.assert_array_equal(whole, np.concatenate([a, b, c], axis=1))
    assert joined(va, vb) is not None and joined(va, vb).shape == (4, 5)
    # anything but adjacent blocks in order, of one buffer, is not joined
    assert joined(vb, va, vc) is None
    assert joined(va, vc) is None
    assert joined(a, b, c) is None
    assert joined(va, side_by_side(b)[0]) is None
    assert side_by_side(a, dtype=np.float32)[0].dtype == np.float32
    with pytest.raises(ValueError, match="equal row counts"):
        side_by_side(a, rng.standard_normal((5, 2)))


def test_heads_read_from_one_projection_join_back_and_blocks_of_one_format_join(rng):
    qkv = rng.standard_normal((5, 48))
    q, k = qkv[:, :32].reshape(5, 4, 8), qkv[:, 32:40].reshape(5, 1, 8)  # (T, H, d) views, as q, k are
    both = joined(q, k)
    assert both is not None and both.shape == (5, 40) and np.shares_memory(both, qkv)
    assert joined(k, q) is None and joined(q, qkv[:, 40:].reshape(5, 1, 8)) is None  # a gap: not joined
    m1, m2, other = quant_matrix(rng, 64, 32), quant_matrix(rng, 64, 16), quant_matrix(rng, 32, 16)
    pair = joined(m1, m2)
    assert pair.shape == (64, 48) and pair.parts == m1.parts + m2.parts  # no copy: the parts side by side
    np.testing.assert_array_equal(pair.values(), np.concatenate([m1.values(), m2.values()], axis=1))
    assert joined(m1, other) is None and joined(m1, m2.values()) is None


@pytest.mark.parametrize("convention", ["half", "interleaved"])
@pytest.mark.parametrize(("dtype", "tol"), TOLERANCES)
def test_joined_weights_give_the_numbers_of_separate_ones(rng, convention, dtype, tol):
    arch, separate = llama(rng, dtype=dtype, rope_pairs=convention)
    together = joined_copy(separate)
    caches = {"joined": caches_for(arch), "separate": caches_for(arch), "reference": caches_for(arch)}
    past = 0
    # two RoPE bases in turn: the cos/sin kept for a step must not leak into the other's
    for step, n in enumerate((4, 1, 1, 2, 1)):
        at = arch.replace(rope_base=100.0 if step % 2 else 10000.0)
        ids = rng.integers(0, arch.d_vocab, n)
        fast, seen = hooked(at, together, ids, FAST, caches=caches["joined"])
        for other, ops in (("separate", FAST), ("reference", REFERENCE)):
            logits, theirs = hooked(at, separate, ids, ops, caches=caches[other])
            close(fast, logits, 10 * tol, other)
            for name in ("blocks.1.hook_resid_post", "blocks.1.attn.hook_pattern", block_names(0).rot_k):
                close(seen[name], theirs[name], tol, f"{other} {name}")
        past += n
    close(caches["joined"][1].keys, caches["reference"][1].keys, tol)


# -- threads ----------------------------------------------------------------------------------------------


def _cores(monkeypatch, n: int) -> None:
    """Our thread pools' size, everywhere the fast ops read it."""
    from attnlab.engine.fast import decode

    for module in (steps, decode, fast_ops):
        monkeypatch.setattr(module, "CORES", n)


def test_a_long_prompts_heads_are_shared_among_threads_with_the_same_bits(rng, monkeypatch):
    """From 64 x 64 scores a head the heads run on our threads (and SwiGLU's rows from 128 rows): the
    reference's numbers to rounding, and the same bits as on one thread."""
    arch, w = llama(rng, dtype=np.float32)
    ids = rng.integers(0, arch.d_vocab, 150)  # 150: three chunks of SwiGLU rows too
    assert 150 * 150 >= steps._SPLIT_SCORES and 150 >= 2 * steps._GATE_ROWS
    _cores(monkeypatch, 2)
    shared = []
    real = steps.run

    def spy(work, tasks, n_threads):
        shared.append((list(tasks), n_threads))
        return real(work, tasks, n_threads)

    monkeypatch.setattr(steps, "run", spy)
    plain = forward(arch, w, ids, ops=FAST)
    per = steps._PIECE_SCORES // (150 * 150)
    assert per == 2 and (list(range(0, arch.n_head, per)), 2) in shared  # pieces of two heads, two threads
    assert ([0, 64, 128], 2) in shared  # SwiGLU's rows, in chunks of 64
    shared.clear()
    fast, seen = hooked(arch, w, ids, FAST)
    assert (list(range(arch.n_head)), 2) in shared  # hooked: a head a task, each step for every head
    same(plain, fast, "hooks that read")
    for scores in (1, 10**9):  # a head a piece, every head in one: each head is its own calls
        monkeypatch.setattr(steps, "_PIECE_SCORES", scores)
        same(forward(arch, w, ids, ops=FAST), plain, f"pieces of {scores} scores")
    monkeypatch.undo()
    _cores(monkeypatch, 2)
    ref, seen_ref = hooked(arch, w, ids, REFERENCE)
    for name in ("blocks.1.hook_resid_post", "blocks.1.attn.hook_pattern", "blocks.1.attn.hook_z"):
        close(seen[name], seen_ref[name], 2e-6, name)
    close(fast, ref, 2e-5)
    _cores(monkeypatch, 1)
    alone, seen_alone = hooked(arch, w, ids, FAST)
    same(alone, fast, "logits")
    for name in hook_names(arch):
        same(seen_alone[name], seen[name], name)


# -- hooks on the fast path ------------------------------------------------------------------------------

# the three ways FAST attends, and the step each one runs when a hook is on the scores or the pattern
PATHS = {
    "compiled": dict(dtype=np.float32, d_head=16, n=7, step=("kernels", "raw_scores")),
    "grouped": dict(dtype=np.float64, d_head=8, n=7, step=("steps", "_Hooks")),
    "threaded": dict(dtype=np.float32, d_head=8, n=70, step=("steps", "_heads_shared_hooked")),
}


def _path(rng, monkeypatch, name):
    """A model and prompt that take attention path ``name``, and a counter of that path's hooked step."""
    path = PATHS[name]
    arch, w = llama(rng, dtype=path["dtype"], d_head=path["d_head"], n_head=4, n_kv_head=2)
    where, step = path["step"]
    module = steps.kernels() if where == "kernels" else steps
    assert module is not None, steps.reason()
    taken = []
    real = getattr(module, step)
    monkeypatch.setattr(module, step, lambda *a, **k: taken.append(1) or real(*a, **k))
    return arch, w, rng.integers(0, arch.d_vocab, path["n"]), taken


@pytest.mark.parametrize("path", list(PATHS))
def test_hooks_that_read_change_no_bit_on_every_attention_path(rng, monkeypatch, path):
    arch, w, ids, taken = _path(rng, monkeypatch, path)
    plain = forward(arch, w, ids, ops=FAST)
    assert not taken  # unhooked, attention runs in one piece
    for fn in (lambda a, n: None, lambda a, n: a, lambda a, n: a.copy()):
        kept: list = []

        def read(a, n, fn=fn, kept=kept):
            kept.append((n, a, a.copy()))
            return fn(a, n)

        out = forward(arch, w, ids, ops=FAST, hooks=Hooks([(lambda n: True, read)], hook_names(arch)))
        same(out, plain, path)
        for name, passed, copy in kept:  # and the forward never wrote into what it gave a hook
            same(passed, copy, name)
    assert len(taken) == 3 * arch.n_layer  # the hooked form of this path ran


@pytest.mark.parametrize("path", list(PATHS))
def test_a_scores_hook_sees_blocked_keys_as_minus_infinity_on_every_attention_path(rng, monkeypatch, path):
    arch, w, ids, taken = _path(rng, monkeypatch, path)
    n = len(ids)
    seen = {}
    keep = (lambda x: x.endswith(("hook_attn_scores", "hook_pattern")), lambda a, x: seen.update({x: a}))
    hooks = Hooks([keep], hook_names(arch))
    forward(arch, w, ids, ops=FAST, hooks=hooks)
    _, ref = hooked(arch, w, ids, REFERENCE)
    future = np.triu(np.ones((n, n), bool), k=1)
    tol = 1e-13 if PATHS[path]["dtype"] == np.float64 else 1e-5
    for layer in range(arch.n_layer):
        scores = seen[block_names(layer).scores]
        assert scores.shape == (4, n, n) and np.all(np.isneginf(scores[:, future]))
        assert np.all(np.isfinite(scores[:, ~future]))
        want = ref[block_names(layer).scores]
        np.testing.assert_allclose(scores[:, ~future], want[:, ~future], rtol=0, atol=tol)
        assert np.all(seen[block_names(layer).pattern][:, future] == 0.0)
    assert taken


@pytest.mark.parametrize("n", [9, 40, 70])  # 40: products in column blocks; 70: past 64 x 64 scores a head,
# the heads in pieces on our threads
def test_an_encoders_single_text_takes_the_fast_attention_unmasked(rng, monkeypatch, calls, n):
    """BERT on one text (no padding, no cache): every query sees every key, as the reference; the
    reference's very operations, so its bits (MiniLM's programs run the reference and print the page's
    numbers), a hook that reads changes no bit, and the bits do not depend on the thread count or the
    pieces."""
    arch, w = bert(rng, dtype=np.float32, n_ctx=80, n_head=4, d_model=32)
    ids = rng.integers(0, arch.d_vocab, n)
    plain = forward(arch, w, ids, ops=FAST)
    assert calls["attend"] == arch.n_layer and calls["gelu"] == arch.n_layer
    fast, seen = hooked(arch, w, ids, FAST)
    same(fast, plain, "a hook that reads")
    ref, seen_ref = hooked(arch, w, ids, REFERENCE)
    same(fast, ref, "the sentence embedding")
    for layer in range(arch.n_layer):
        nm = block_names(layer)
        pattern = seen[nm.pattern]
        assert pattern.shape == (arch.n_head, n, n) and np.all(pattern > 0)  # no key blocked
        same(pattern, seen_ref[nm.pattern], nm.pattern)
        same(seen[nm.z], seen_ref[nm.z], nm.z)
    _cores(monkeypatch, 1)
    same(forward(arch, w, ids, ops=FAST), plain, "one thread")
    monkeypatch.setattr(steps, "_PIECE_SCORES", 1)
    same(forward(arch, w, ids, ops=FAST), plain, "a head a piece")
    # a batch with key padding stays the reference's, bit for bit
    calls.clear()
    batch, padding = np.stack([ids, ids]), np.arange(n) < [[n], [n - 2]]
    same(forward(arch, w, batch, ops=FAST, key_padding=padding)[0],
         forward(arch, w, batch, ops=REFERENCE, key_padding=padding)[0], "a batch")  # fmt: skip
    assert not calls["attend"]


def _mix(pattern, v, group):
    """z (T, H, d) by hand: z[t, h] = sum_j pattern[h, t, j] v[j, h // group]."""
    H, T, S = pattern.shape
    z = np.zeros((T, H, v.shape[-1]))
    for h in range(H):
        for t in range(T):
            for j in range(S):
                z[t, h] += pattern[h, t, j] * v[j, h // group]
    return z


@pytest.mark.parametrize("path", list(PATHS))
def test_a_pattern_hooks_replacement_is_what_mixes_the_values_on_every_attention_path(rng, monkeypatch, path):
    arch, w, ids, taken = _path(rng, monkeypatch, path)
    n, nm = len(ids), block_names(1)
    dtype = PATHS[path]["dtype"]
    mine = rng.random((4, n, n)).astype(dtype)
    mine /= mine.sum(-1, keepdims=True)  # on future keys too: what the hook returns is what mixes
    got = {}
    keep = (lambda x: x in (nm.v, nm.z), lambda a, x: got.update({x: a}))
    forward(arch, w, ids, ops=FAST, hooks=Hooks([(nm.pattern, lambda a, x: mine), keep], hook_names(arch)))
    np.testing.assert_allclose(got[nm.z], _mix(mine, got[nm.v], arch.group), rtol=0,
                               atol=1e-14 if dtype == np.float64 else 2e-6)  # fmt: skip
    # all of a row's weight on one key: that key's value exactly, every path
    one = np.zeros((4, n, n), dtype)
    one[:, :, 2] = 1.0
    forward(arch, w, ids, ops=FAST, hooks=Hooks([(nm.pattern, lambda a, x: one), keep], hook_names(arch)))
    for h in range(4):
        same(got[nm.z][:, h], np.broadcast_to(got[nm.v][2, h // arch.group], (n, arch.d_head)), f"head {h}")
    assert taken


def test_a_pattern_hook_on_a_decoding_step_mixes_the_cached_values(rng):
    arch, w = llama(rng, dtype=np.float32, d_head=16)  # the compiled path, on a cache
    caches = caches_for(arch)
    forward(arch, w, [3, 1, 4, 1, 5], ops=FAST, caches=caches)
    nm = block_names(0)
    got = {}

    def on_key_one(a, name):
        assert a.shape == (4, 1, 6)  # one new query, six keys: five cached, its own
        out = np.zeros_like(a)
        out[..., 1] = 1.0
        return out

    hooks = Hooks([(nm.pattern, on_key_one), (nm.z, lambda a, x: got.update(z=a))], hook_names(arch))
    forward(arch, w, [9], ops=FAST, caches=caches, hooks=hooks)
    values = caches[0].values  # (H_kv, S, d)
    for h in range(4):
        same(got["z"][0, h], values[h // arch.group, 1], f"head {h}")


@pytest.mark.parametrize(("dtype", "tol"), TOLERANCES)
def test_edits_act_where_the_reference_applies_them(rng, dtype, tol):
    """A head's z zeroed, the residual read between the sublayers, one row of the MLP's output replaced:
    the fast forward sees and gives what the reference does."""
    arch, w = llama(rng, dtype=dtype)
    ids = rng.integers(0, arch.d_vocab, 6)
    mlp_value = rng.standard_normal((6, arch.d_model)).astype(dtype)
    nm = block_names(0)
    seen: dict = {}

    def edits(tag):
        def z(a, name):
            seen[tag, "z"] = a
            out = a.copy()
            out[2:, 1] = 0.0  # query head 1 from position 2 on (it shares KV head 0)
            return out

        def mid(a, name):
            seen[tag, "mid"] = a

        def mlp(a, name):
            seen[tag, "mlp"] = a
            out = a.copy()
            out[4] = mlp_value[4]
            return out

        return Hooks([(nm.z, z), (nm.resid_mid, mid), (nm.mlp_out, mlp)], hook_names(arch))

    fast = forward(arch, w, ids, ops=FAST, hooks=edits("fast"))
    ref = forward(arch, w, ids, ops=REFERENCE, hooks=edits("reference"))
    for name in ("z", "mid", "mlp"):
        close(seen["fast", name], seen["reference", name], tol, name)
    close(fast, ref, 10 * tol)
    assert not np.allclose(fast, forward(arch, w, ids, ops=FAST))


# -- ROWS: several decoding steps at once -----------------------------------------------------------------

KINDS = ["float32"] + (["q4_1"] if quant.kernel() is not None else [])
ROW_SHAPES = dict(d_model=64, n_head=4, n_kv_head=2, d_head=16, d_ff=96, rope_pairs="interleaved")


def row_model(seed: int, kind: str):
    rng = np.random.default_rng(seed)
    return rng, *llama(rng, dtype=np.float32, kind="q4_1" if kind == "q4_1" else "float", **ROW_SHAPES)


def filled(rng, arch, w, n: int):
    """Two lists of caches holding the same ``n`` tokens (a prompt pass each: the same bits)."""
    ids = rng.integers(0, arch.d_vocab, n)
    pair = (caches_for(arch), caches_for(arch))
    for caches in pair:
        forward(arch, w, ids, ops=FAST, caches=caches)
    return pair


def rows(arch, w, ids, caches, positions, **options):
    """ROWS on ``ids`` (R,): row r on ``caches[r]`` (a list a layer) at ``positions[r]``."""
    assert rows_apply(arch, w)
    per_layer = [[row[layer] for row in caches] for layer in range(arch.n_layer)]
    return forward(arch, w, ids, ops=ROWS, caches=per_layer, positions=np.asarray(positions), **options)


def one_row(arch, w, token, caches):
    return forward(arch, w, [token], ops=FAST, caches=caches)


@pytest.mark.parametrize("kind", KINDS)
def test_rows_on_one_cache_are_the_one_row_steps_in_order(kind):
    rng, arch, w = row_model(1, kind)
    mine, theirs = filled(rng, arch, w, 5)
    ids = rng.integers(0, arch.d_vocab, 4)
    out = rows(arch, w, ids, [mine] * 4, [5, 6, 7, 8])
    want = np.concatenate([one_row(arch, w, t, theirs) for t in ids])
    same(out, want)
    for a, b in zip(mine, theirs):
        assert a.keys.tobytes() == b.keys.tobytes() and a.values.tobytes() == b.values.tobytes()


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_of_sequences_gives_each_its_own_steps_bits(kind):
    rng, arch, w = row_model(2, kind)
    pairs = [filled(rng, arch, w, n) for n in (1, 7, 3)]
    ids = rng.integers(0, arch.d_vocab, 3)
    out = rows(arch, w, ids, [p[0] for p in pairs], [1, 7, 3])
    for r, (_, theirs) in enumerate(pairs):
        same(out[r], one_row(arch, w, ids[r], theirs)[0], f"row {r}")


def test_a_row_does_not_depend_on_the_other_rows():
    rng, arch, w = row_model(3, "float32")
    a, b = filled(rng, arch, w, 4)
    c, d = filled(rng, arch, w, 2)
    ids = np.array([5, 9])
    same(rows(arch, w, ids, [a, c], [4, 2])[0], rows(arch, w, np.array([5, 17]), [b, d], [4, 2])[0])


def test_rows_run_where_a_one_row_forward_takes_every_fast_form(rng):
    arch, w = llama(rng, dtype=np.float32)
    assert rows_apply(arch, w) and rows_apply(arch.replace(positions="none"), w)
    for change in (dict(norm="layer"), dict(norm_placement="post"), dict(causal=False), dict(mlp="plain"),
                   dict(activation="gelu"), dict(positions="learned")):  # fmt: skip
        assert not rows_apply(arch.replace(**change), w), change
    a = w.blocks[0].attn
    biased = dataclasses.replace(w.blocks[0], attn=dataclasses.replace(a, b_o=np.zeros(arch.d_model)))
    assert not rows_apply(arch, dataclasses.replace(w, blocks=(biased, *w.blocks[1:])))
    assert not rows_apply(*bert(rng)) and not rows_apply(*gpt2(rng))


def test_rows_take_hooks_except_on_the_scores_and_pattern():
    rng, arch, w = row_model(4, "float32")
    mine, theirs = filled(rng, arch, w, 3)
    ids = np.array([1, 2])
    plain = rows(arch, w, ids, [mine, mine], [3, 4])
    seen = []
    read = Hooks([(lambda n: "pattern" not in n and "scores" not in n, lambda a, n: seen.append(n))],
                 hook_names(arch))  # fmt: skip
    same(rows(arch, w, ids, [theirs, theirs], [3, 4], hooks=read), plain)
    assert seen and "blocks.1.hook_resid_post" in seen
    for name in ("blocks.0.attn.hook_pattern", "blocks.1.attn.hook_attn_scores"):
        with pytest.raises(FieldError, match="hooks on the scores or pattern need one sequence, not rows"):
            rows(arch, w, ids, [caches_for(arch)] * 2, [0, 1], hooks=Hooks([(name, print)], hook_names(arch)))


def test_a_row_refused_leaves_every_rows_cache_as_it_was():
    rng, arch, w = row_model(5, "float32")
    a, _ = filled(rng, arch, w, 3)
    b, _ = filled(rng, arch, w, 5)
    kept = [(c.keys.copy(), c.values.copy()) for c in (*a, *b)]
    poisoned = dataclasses.replace(w, embed=w.embed.copy())
    poisoned.embed[7] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rows(arch, poisoned, np.array([1, 7]), [a, b], [3, 5])
    # scores that overflow in the first layer, in the second row: every row's append is undone
    b0 = w.blocks[0]
    big = dataclasses.replace(b0.attn, w_q=b0.attn.w_q * np.float32(1e19), w_k=b0.attn.w_k * np.float32(1e19))
    loud = dataclasses.replace(w, blocks=(dataclasses.replace(b0, attn=big), *w.blocks[1:]))
    with pytest.raises(ValueError, match="overflowed"):
        rows(arch, loud, np.array([1, 2]), [a, b], [3, 5])
    for c, (k, v) in zip((*a, *b), kept):
        same(c.keys, k)
        same(c.values, v)


def test_rows_with_fewer_caches_than_rows_are_refused_before_any_cache_changes():
    rng, arch, w = row_model(6, "float32")
    a, _ = filled(rng, arch, w, 3)
    with pytest.raises(FieldError):
        forward(arch, w, np.array([1, 2]), ops=ROWS, caches=[[c] for c in a], positions=np.array([3, 4]))
    assert [c.length for c in a] == [3, 3]


# -- quantised weights -------------------------------------------------------------------------------------


def values_of(w):
    """The same weights with every matrix of blocks made float32 values (as gguf dequantizes)."""
    return dataclasses.replace(w, blocks=tuple(with_values(b) for b in w.blocks))


@pytest.mark.skipif(quant.kernel() is None, reason="the quantised products' kernels do not run here")
def test_on_values_runs_the_reference_steps_on_the_blocks_values_bit_for_bit(rng):
    arch, w = llama(rng, dtype=np.float32, kind="q4_1", **ROW_SHAPES)
    ids = rng.integers(0, arch.d_vocab, 6)
    values = values_of(w)
    got, seen = hooked(arch, w, ids, ON_VALUES)
    want, seen_ref = hooked(arch, values, ids, REFERENCE)
    for name in hook_names(arch):  # every step bit for bit; the output layer's slices to rounding
        same(seen[name], seen_ref[name], name)
    close(got, want, 2e-5)
    fast = forward(arch, w, ids, ops=FAST)  # products on the blocks: float32 rounding of the same sums
    np.testing.assert_allclose(fast, want, rtol=0, atol=1e-4 * np.abs(want).max())


@pytest.mark.skipif(quant.kernel() is None, reason="the quantised products' kernels do not run here")
def test_an_embedding_kept_as_blocks_is_read_by_rows_and_multiplied_on_its_blocks(rng):
    arch, w = llama(rng, dtype=np.float32, kind="q4_1", **ROW_SHAPES)
    e = quant_matrix(rng, arch.d_model, arch.d_vocab)  # W_E^T as blocks: stored row t is token t's embedding
    blocks = dataclasses.replace(w, embed=e)
    ids = rng.integers(0, arch.d_vocab, 5)
    logits, seen = hooked(arch, blocks, ids, FAST)
    same(seen["hook_embed"], e.stored_rows(list(ids)), "embeddings")
    same(seen["hook_embed"], e.values().T[ids], "the stored rows are W_E's rows")
    ref = forward(arch, dataclasses.replace(values_of(w), embed=e.values().T.copy()), ids)
    np.testing.assert_allclose(logits, ref, rtol=0, atol=1e-4 * np.abs(ref).max())
    # a few tokens' logits: the forward's bits, for several rows and for one
    x = seen["ln_final.hook_normalized"]
    tokens = (3, 17, 30)
    same(FAST.unembed_columns(x, blocks, tokens), logits[:, tokens])
    same(FAST.unembed_columns(x[-1:], blocks, tokens), logits[-1:, tokens])
    np.testing.assert_allclose(REFERENCE.unembed_columns(x, w, tokens), (x @ w.embed.T)[:, tokens], rtol=1e-6)


# -- the property --------------------------------------------------------------------------------------------


@st.composite
def models(draw):
    n_kv = draw(st.integers(1, 3))
    return dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        dtype=draw(st.sampled_from([np.float32, np.float64])),
        n_layer=draw(st.integers(1, 2)),
        n_kv_head=n_kv,
        n_head=n_kv * draw(st.integers(1, 3)),
        d_head=draw(st.sampled_from([2, 4, 8, 16])),
        d_model=draw(st.sampled_from([8, 16, 24])),
        d_ff=draw(st.integers(1, 40)),
        positions=draw(st.sampled_from(["rope", "none"])),
        rope_pairs=draw(st.sampled_from(["half", "interleaved"])),
        joined=draw(st.booleans()),
        norm_weights=draw(st.booleans()),
    )


@settings(max_examples=60, deadline=None)
@given(models(), st.lists(st.integers(1, 9), min_size=1, max_size=4))
def test_fast_agrees_with_the_reference_and_the_cache_with_a_full_recompute(model, pieces):
    """Random small decoders (GQA of every grouping, both RoPE pairings or none): FAST is the reference
    to float rounding, a forward fed piece by piece through a KV cache is the full forward, and ROWS
    fed the last tokens is FAST's one-token steps bit for bit."""
    model = dict(model)
    seed, dtype = model.pop("seed"), model.pop("dtype")
    rng = np.random.default_rng(seed)
    arch, w = llama(rng, dtype=dtype, **model)
    ids = rng.integers(0, arch.d_vocab, sum(pieces))
    tol = 1e-11 if dtype == np.float64 else 3e-5
    ref = forward(arch, w, ids, ops=REFERENCE)
    scale = max(1.0, float(np.abs(ref).max()))
    np.testing.assert_allclose(forward(arch, w, ids, ops=FAST), ref, rtol=0, atol=tol * scale)
    for ops in (FAST, REFERENCE):
        caches, at, parts = caches_for(arch), 0, []
        for n in pieces:
            parts.append(forward(arch, w, ids[at : at + n], ops=ops, caches=caches))
            at += n
        np.testing.assert_allclose(np.concatenate(parts), ref, rtol=0, atol=tol * scale)
        assert [c.length for c in caches] == [len(ids)] * arch.n_layer
    # the last pieces' tokens as rows on one cache: each row a one-token FAST step's bits
    if rows_apply(arch, w) and len(ids) > 1:
        mine, theirs = caches_for(arch), caches_for(arch)
        for caches in (mine, theirs):
            forward(arch, w, ids[:1], ops=FAST, caches=caches)
        got = rows(arch, w, ids[1:], [mine] * (len(ids) - 1), np.arange(1, len(ids)))
        same(got, np.concatenate([one_row(arch, w, t, theirs) for t in ids[1:]]))
