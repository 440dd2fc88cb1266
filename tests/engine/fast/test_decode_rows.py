"""Several decoding steps through one block (engine/fast/decode/rows.py): each row the one-row step's bits.

Rows that share a cache are a speculative verification (consecutive tokens of one sequence); rows
with caches of their own are a batch of requests. Either way each row's output, and what it leaves in
its cache, is what the fast path's one-row step gives on the same cache, bit for bit.
"""

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
from attnlab.engine.fast import quant
from attnlab.engine.fast.block import transformer_block
from attnlab.engine.fast.decode.rows import decoder_rows_block, rows_apply
from attnlab.engine.fast.quant import QuantMatrix

N_HEAD, N_KV, D_HEAD, D_MODEL, D_FF = 4, 2, 16, 64, 96
ROPE = RoPE(head_dim=D_HEAD, base=100.0, convention="interleaved")


def quant_matrix(rng, n_in: int, n_out: int) -> QuantMatrix:
    blocks = rng.integers(0, 256, (n_out, n_in // 32, 20), dtype=np.uint8)
    scales = (rng.standard_normal((n_out, n_in // 32, 2)) * 0.05).astype(np.float16)
    blocks[..., :4] = scales.view(np.uint8).reshape(n_out, n_in // 32, 4)
    return QuantMatrix("Q4_1", np.ascontiguousarray(blocks.reshape(n_out, -1)))


def llama_block(rng, kind: str) -> BlockParams:
    def w(n_in, n_out):
        if kind == "q4_1":
            return quant_matrix(rng, n_in, n_out)
        return (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32)

    return BlockParams(
        attn=AttentionParams(w_q=w(D_MODEL, N_HEAD * D_HEAD), w_k=w(D_MODEL, N_KV * D_HEAD),
                             w_v=w(D_MODEL, N_KV * D_HEAD), w_o=w(N_HEAD * D_HEAD, D_MODEL)),
        mlp=SwiGLUParams(w_gate=w(D_MODEL, D_FF), w_up=w(D_MODEL, D_FF), w_down=w(D_FF, D_MODEL)),
        norm_1=RMSNormParams((1 + 0.1 * rng.standard_normal(D_MODEL)).astype(np.float32), 1e-5),
        norm_2=RMSNormParams((1 + 0.1 * rng.standard_normal(D_MODEL)).astype(np.float32), 1e-5),
    )  # fmt: skip


def one_row(x, params, cache: KVCache, position: int) -> np.ndarray:
    return transformer_block(
        x, params, n_head=N_HEAD, n_kv_head=N_KV, norm="pre", causal="bottom_right", rope=ROPE,
        positions=np.array([position]), cache=cache,
    ).output  # fmt: skip


def filled(rng, params, n: int) -> tuple[KVCache, KVCache]:
    """Two caches holding the same ``n`` tokens (a prompt pass each: the same bits)."""
    x = rng.standard_normal((n, D_MODEL)).astype(np.float32)
    caches = (KVCache(), KVCache())
    for c in caches:
        transformer_block(x, params, n_head=N_HEAD, n_kv_head=N_KV, norm="pre", causal="bottom_right",
                          rope=ROPE, positions=np.arange(n), cache=c)  # fmt: skip
    return caches


def rows(x, params, caches, positions):
    options = dict(n_head=N_HEAD, n_kv_head=N_KV, rope=ROPE, positions=np.asarray(positions), caches=caches)
    assert rows_apply(x, params, **options)
    return decoder_rows_block(x, params, **options)


KINDS = ["float32"] + (["q4_1"] if quant.kernel() is not None else [])


@pytest.mark.parametrize("kind", KINDS)
def test_rows_on_one_cache_are_the_one_row_steps_in_order(kind):
    rng = np.random.default_rng(1)
    params = llama_block(rng, kind)
    mine, theirs = filled(rng, params, 5)
    x = rng.standard_normal((4, D_MODEL)).astype(np.float32)
    out = rows(x, params, [mine] * 4, [5, 6, 7, 8])
    want = np.concatenate([one_row(x[r : r + 1], params, theirs, 5 + r) for r in range(4)])
    assert out.tobytes() == want.tobytes()
    assert mine.keys.tobytes() == theirs.keys.tobytes() and mine.values.tobytes() == theirs.values.tobytes()


@pytest.mark.parametrize("kind", KINDS)
def test_a_batch_of_sequences_gives_each_its_own_steps_bits(kind):
    rng = np.random.default_rng(2)
    params = llama_block(rng, kind)
    pairs = [filled(rng, params, n) for n in (1, 7, 3)]
    x = rng.standard_normal((3, D_MODEL)).astype(np.float32)
    out = rows(x, params, [p[0] for p in pairs], [1, 7, 3])
    for r, (_, theirs) in enumerate(pairs):
        assert out[r].tobytes() == one_row(x[r : r + 1], params, theirs, theirs.length)[0].tobytes()


def test_a_row_does_not_depend_on_the_other_rows():
    rng = np.random.default_rng(3)
    params = llama_block(rng, "float32")
    a, b = filled(rng, params, 4)
    c, d = filled(rng, params, 2)
    x = rng.standard_normal((2, D_MODEL)).astype(np.float32)
    y = x.copy()
    y[1] = rng.standard_normal(D_MODEL).astype(np.float32)
    assert rows(x, params, [a, c], [4, 2])[0].tobytes() == rows(y, params, [b, d], [4, 2])[0].tobytes()


def test_rows_step_aside_where_the_one_row_fast_path_would():
    rng = np.random.default_rng(4)
    params = llama_block(rng, "float32")
    norm = LayerNormParams(np.ones(D_MODEL, np.float32), np.zeros(D_MODEL, np.float32))
    layer_norm = BlockParams(attn=params.attn, mlp=params.mlp, norm_1=norm, norm_2=params.norm_2)
    x = np.zeros((2, D_MODEL), np.float32)
    options = dict(n_head=N_HEAD, n_kv_head=N_KV, rope=ROPE, positions=np.array([0, 0]))
    assert not rows_apply(x, layer_norm, caches=[KVCache(), KVCache()], **options)
    assert not rows_apply(x, params, caches=[KVCache()], **options)  # a cache for each row
