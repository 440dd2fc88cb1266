"""A decoding step's whole block in three compiled calls (engine/fast/decode/block.py): the bits of the
fast steps one by one, on every block format, with and without the helpers, across the cache's growth;
steps aside where it does not apply; a number that is not finite is refused as the steps refuse it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnlab.engine.cache import KVCache
from attnlab.engine.fast import ops as fast_ops
from attnlab.engine.fast import quant
from attnlab.engine.fast.decode import steps
from attnlab.engine.fast.formats import BLOCK_WEIGHTS, FORMATS
from attnlab.engine.fast.ops import FAST, ON_VALUES, Fast
from attnlab.engine.fast.quant import QuantMatrix, reference
from attnlab.engine.forward import forward
from attnlab.engine.hooks import Hooks, hook_names
from attnlab.engine.layers import RMSNormParams

from ..tinykit import llama

pytestmark = pytest.mark.skipif(
    quant.kernel() is None or steps.kernels() is None, reason="the compiled kernels do not run here"
)


class OneByOne(Fast):
    """FAST with every block taken step by step."""

    def whole_block(self, arch, p, x, **options):
        return None


ONE_BY_ONE = OneByOne()


def same(a, b, what=""):
    assert a.dtype == b.dtype and a.shape == b.shape, what
    assert a.tobytes() == b.tobytes(), f"{what}: largest gap {np.max(np.abs(a - b))}"


def on_blocks(fmt: str, seed: int, **shapes):
    """A Llama-style decoder whose every product is random valid blocks of ``fmt``."""
    rng = np.random.default_rng(seed)
    arch, w = llama(rng, dtype=np.float32, **shapes)
    per = BLOCK_WEIGHTS[FORMATS[fmt]]

    def blocks(m):
        n_in, n_out = m.shape
        return QuantMatrix(fmt, reference.valid_blocks(rng, fmt, n_out, n_in // per, scale=0.02))

    def mats(params, names):
        return dataclasses.replace(params, **{n: blocks(getattr(params, n)) for n in names})

    layers = tuple(dataclasses.replace(b, attn=mats(b.attn, ("w_q", "w_k", "w_v", "w_o")),
                                       mlp=mats(b.mlp, ("w_gate", "w_up", "w_down")))
                   for b in w.blocks)  # fmt: skip
    return rng, arch, dataclasses.replace(w, blocks=layers)


SMALL = dict(d_model=64, n_head=4, n_kv_head=2, d_head=16, d_ff=96, n_layer=2)
K_QUANT = dict(d_model=256, n_head=4, n_kv_head=1, d_head=64, d_ff=256, n_layer=2)  # 256-weight blocks
MODELS = [("Q4_1", SMALL), ("Q8_0", SMALL), ("Q4_0", SMALL), ("Q5_1", SMALL), ("F16", SMALL),
          ("Q4_K", K_QUANT), ("Q6_K", K_QUANT)]  # fmt: skip


@pytest.fixture
def counted(monkeypatch):
    """How many blocks ran as the three compiled calls."""
    from attnlab.engine.fast.decode import block

    seen = {"blocks": 0}
    real = block.attend_start

    def spy(*args):
        seen["blocks"] += 1
        return real(*args)

    monkeypatch.setattr(block, "attend_start", spy)
    return seen


def decode(arch, w, ops, prompt, tokens):
    """A prompt pass, then one token at a time: every step's logits, and the caches."""
    caches = [KVCache() for _ in range(arch.n_layer)]
    out = [forward(arch, w, prompt, ops=ops, caches=caches)]
    for t in tokens:
        out.append(forward(arch, w, [t], ops=ops, caches=caches))
    return out, caches


@pytest.mark.parametrize(("fmt", "shapes"), MODELS, ids=[m[0] for m in MODELS])
def test_a_decoding_steps_blocks_are_the_steps_one_by_one_bit_for_bit(fmt, shapes, counted):
    rng, arch, w = on_blocks(fmt, 7, **shapes)
    prompt, tokens = rng.integers(0, arch.d_vocab, 5), rng.integers(0, arch.d_vocab, 6)
    got, caches = decode(arch, w, FAST, prompt, tokens)
    assert counted["blocks"] == len(tokens) * arch.n_layer  # the prompt's blocks are the steps
    want, their_caches = decode(arch, w, ONE_BY_ONE, prompt, tokens)
    assert counted["blocks"] == len(tokens) * arch.n_layer
    for i, (a, b) in enumerate(zip(got, want)):
        same(a, b, f"step {i}")
    for a, b in zip(caches, their_caches):
        same(a.keys, b.keys, "keys")
        same(a.values, b.values, "values")


@pytest.mark.parametrize("shared", [True, False])
def test_with_or_without_the_helpers_and_across_the_caches_growth_the_bits_are_the_same(
    monkeypatch, shared, counted
):
    """Every product shared with the helpers (their threshold at 0), or none; 62 tokens cached, then
    steps past the buffers' first 64 rows (the cache grows under the compiled block)."""
    monkeypatch.setattr(quant, "_THREAD_WEIGHTS", 0 if shared else 1 << 62)
    rng, arch, w = on_blocks("Q4_1", 11, **SMALL)
    prompt, tokens = rng.integers(0, arch.d_vocab, 62), rng.integers(0, arch.d_vocab, 5)
    got, caches = decode(arch, w, FAST, prompt, tokens)
    assert counted["blocks"] == len(tokens) * arch.n_layer
    assert caches[0]._k_buf.shape[1] == 128 and caches[0].length == 67
    monkeypatch.setattr(quant, "_THREAD_WEIGHTS", 1 << 17)
    want, _ = decode(arch, w, ONE_BY_ONE, prompt, tokens)
    for i, (a, b) in enumerate(zip(got, want)):
        same(a, b, f"step {i}")


def test_it_steps_aside_where_the_steps_must_be_taken_one_by_one(counted):
    rng, arch, w = on_blocks("Q4_1", 3, **SMALL)
    prompt, token = rng.integers(0, arch.d_vocab, 4), [5]

    def runs(arch=arch, w=w, ops=FAST, hooks=None, caches=True) -> int:
        counted["blocks"] = 0
        cache = [KVCache() for _ in range(arch.n_layer)] if caches else None
        if caches:
            forward(arch, w, prompt, ops=ops, caches=cache)
        forward(arch, w, token, ops=ops, caches=cache, hooks=hooks)
        return counted["blocks"]

    assert runs() == arch.n_layer
    read = Hooks([("blocks.1.attn.hook_pattern", lambda a, name: None)], hook_names(arch))
    assert runs(hooks=read) == 0  # a hook needs the steps (all blocks: hooks are the forward's)
    assert runs(caches=False) == 0  # no cache to write the key in
    assert runs(ops=ON_VALUES) == 0  # the reference's steps on the values
    assert runs(arch=arch.replace(sliding_window=3)) == 0  # a window that hides a key
    assert runs(arch=arch.replace(sliding_window=64)) == arch.n_layer  # one that hides none
    assert runs(arch=arch.replace(activation="gelu_tanh")) == 0
    biased = dataclasses.replace(w.blocks[0].attn, b_q=np.zeros(arch.n_head * arch.d_head, np.float32))
    assert runs(w=dataclasses.replace(w, blocks=(dataclasses.replace(w.blocks[0], attn=biased),
                                                 *w.blocks[1:]))) == arch.n_layer - 1  # fmt: skip
    _, float_arch, float_w = (lambda r: (r, *llama(r, dtype=np.float32, **SMALL)))(np.random.default_rng(3))
    assert runs(arch=float_arch, w=float_w) == 0  # float weights: BLAS products, taken one by one


def test_a_number_that_is_not_finite_is_refused_as_the_steps_refuse_it_and_no_cache_changes():
    rng, arch, w = on_blocks("Q4_1", 5, **SMALL)
    norm = w.blocks[1].norm_1
    weight = norm.weight.copy()
    weight[3] = np.inf  # layer 1's q, k, v come out inf and NaN
    broken = dataclasses.replace(w, blocks=(w.blocks[0], dataclasses.replace(
        w.blocks[1], norm_1=RMSNormParams(weight, norm.eps))))  # fmt: skip
    prompt = rng.integers(0, arch.d_vocab, 4)
    errors = []
    for ops in (FAST, ONE_BY_ONE):
        caches = [KVCache() for _ in range(arch.n_layer)]
        forward(arch, w, prompt, ops=ops, caches=caches)
        with pytest.raises(ValueError) as caught:
            forward(arch, broken, [3], ops=ops, caches=caches)
        errors.append(str(caught.value))
        assert [c.length for c in caches] == [4, 4]
        same(forward(arch, w, [3], ops=ops, caches=caches), decode(arch, w, ONE_BY_ONE, prompt, [3])[0][1])
    assert errors[0] == errors[1] and "q = x @ w_q" in errors[0]


def test_a_cache_extended_holds_what_it_held_and_room_for_the_new_tokens():
    cache = KVCache()
    k = np.arange(2 * 63 * 4, dtype=np.float32).reshape(2, 63, 4)
    cache.append(k, -k)
    keys, values = cache.extend(3)  # past the first buffer's 64 rows
    assert keys.shape == values.shape == (2, 66, 4) and cache.length == 66
    same(np.ascontiguousarray(keys[:, :63]), k)
    same(np.ascontiguousarray(values[:, :63]), -k)
    keys[:, 63:] = 1.0
    same(np.ascontiguousarray(cache.keys[:, 63:]), np.ones((2, 3, 4), np.float32))
    with pytest.raises(Exception, match="cache"):
        KVCache().extend(1)


def test_the_plan_is_made_once_a_block_and_refused_blocks_are_remembered(monkeypatch):
    rng, arch, w = on_blocks("Q4_1", 9, **SMALL)
    p = w.blocks[0]
    plan = fast_ops._block_plan(arch, p)
    assert plan is fast_ops._block_plan(arch, p)
    qkv, o, gate_up, down = plan.matrices
    assert qkv.n_out == (arch.n_head + 2 * arch.n_kv_head) * arch.d_head and o.n_out == arch.d_model
    assert gate_up.n_out == 2 * arch.d_ff and down.n_in == plan.widest == arch.d_ff
    assert plan.qkv == (qkv.code, qkv._at, qkv._rows, qkv.parts[0].shape[1])
    assert plan.scale == np.float32(arch.scale) and plan.group == arch.group
    assert fast_ops._block_plan(arch.replace(qk_norm=True), p) is None


def test_threads_decoding_at_once_each_get_the_bits_they_get_alone(monkeypatch):
    """Two sequences decoded by two threads at the same time (a server's two users): one holds the
    helpers while the other's blocks run alone, turn by turn; each gets the bits of its run alone."""
    import threading

    monkeypatch.setattr(quant, "_THREAD_WEIGHTS", 0)  # every product shared, when the helpers are free
    rng, arch, w = on_blocks("Q4_1", 13, **SMALL)
    prompts = [rng.integers(0, arch.d_vocab, 6), rng.integers(0, arch.d_vocab, 9)]
    tokens = [rng.integers(0, arch.d_vocab, 12), rng.integers(0, arch.d_vocab, 12)]
    alone = [decode(arch, w, FAST, p, t)[0] for p, t in zip(prompts, tokens)]
    together: list = [None, None]
    start = threading.Barrier(2)

    def run(i: int) -> None:
        start.wait()
        together[i] = decode(arch, w, FAST, prompts[i], tokens[i])[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        for step, (a, b) in enumerate(zip(together[i], alone[i])):
            same(a, b, f"sequence {i}, step {step}")
