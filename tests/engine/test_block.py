"""Transformer blocks and stacks: the two norm placements, traces, and cached decoding."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine import (
    AttentionParams,
    BlockParams,
    LayerNormParams,
    MLPParams,
    RMSNormParams,
    RoPE,
    SwiGLUParams,
    decoder_stack,
    encoder_stack,
    layer_norm,
    multi_head_attention,
    new_caches,
    transformer_block,
)
from attnlab.engine.block import BlockEdits
from attnlab.engine.layers import mlp, rms_norm


def _bert_block(rng, d=8, n_head=2, d_ff=13):
    return BlockParams(
        attn=AttentionParams(
            *(rng.standard_normal((d, d)) * 0.5 for _ in range(4)), b_q=rng.standard_normal(d)
        ),
        mlp=MLPParams(
            w_1=rng.standard_normal((d, d_ff)), w_2=rng.standard_normal((d_ff, d)), b_1=np.ones(d_ff)
        ),
        norm_1=LayerNormParams(rng.standard_normal(d), rng.standard_normal(d)),
        norm_2=LayerNormParams(rng.standard_normal(d), rng.standard_normal(d)),
    )


def _llama_block(rng, d=12, n_head=4, n_kv=2, d_head=3, d_ff=10):
    return BlockParams(
        attn=AttentionParams(
            w_q=rng.standard_normal((d, n_head * d_head)) * 0.5,
            w_k=rng.standard_normal((d, n_kv * d_head)) * 0.5,
            w_v=rng.standard_normal((d, n_kv * d_head)),
            w_o=rng.standard_normal((n_head * d_head, d)) * 0.5,
        ),
        mlp=SwiGLUParams(
            w_gate=rng.standard_normal((d, d_ff)),
            w_up=rng.standard_normal((d, d_ff)),
            w_down=rng.standard_normal((d_ff, d)) * 0.3,
        ),
        norm_1=RMSNormParams(rng.standard_normal(d), eps=1e-5),
        norm_2=RMSNormParams(rng.standard_normal(d), eps=1e-5),
    )


def test_pre_norm_block_by_hand(rng):
    p = _bert_block(rng)
    x = rng.standard_normal((2, 5, 8))
    res = transformer_block(x, p, n_head=2, norm="pre", return_trace=True)
    h = x + multi_head_attention(layer_norm(x, p.norm_1), p.attn, n_head=2).output
    out = h + mlp(layer_norm(h, p.norm_2), p.mlp)[0]
    np.testing.assert_allclose(res.output, out, atol=1e-13)
    names = [n for n in res.trace if not n.startswith(("attn.", "mlp."))]
    assert names == ["input", "norm_1", "residual_1", "norm_2", "output"]
    assert (
        list(res.trace).index("attn.q")
        < list(res.trace).index("residual_1")
        < list(res.trace).index("mlp.hidden")
    )
    assert res.trace.shape("attn.weights") == (2, 2, 5, 5) and res.trace.shape("mlp.hidden") == (2, 5, 13)
    np.testing.assert_array_equal(res.trace["attn.weights"], res.attention.weights)


def test_post_norm_block_by_hand(rng):
    p = _bert_block(rng)
    x = rng.standard_normal((5, 8))
    res = transformer_block(x, p, n_head=2, norm="post", return_trace=True)
    h = layer_norm(x + multi_head_attention(x, p.attn, n_head=2).output, p.norm_1)
    out = layer_norm(h + mlp(h, p.mlp)[0], p.norm_2)
    np.testing.assert_allclose(res.output, out, atol=1e-13)
    names = [n for n in res.trace if not n.startswith(("attn.", "mlp."))]
    assert names == ["input", "residual_1", "norm_1", "residual_2", "output"]
    assert res.trace.child("mlp").shapes() == {"hidden": (5, 13), "activated": (5, 13), "output": (5, 8)}


def test_stacks_chain_blocks_and_trace_them(rng):
    layers = [_bert_block(rng) for _ in range(3)]
    x = rng.standard_normal((4, 8))
    res = encoder_stack(x, layers, n_head=2, return_trace=True)
    h = x
    for p in layers:
        h = transformer_block(h, p, n_head=2, norm="post").output
    np.testing.assert_array_equal(res.output, h)
    assert len(res.blocks) == 3 and res.trace.child("blocks.2")["output"] is res.blocks[2].output
    assert list(res.trace)[-1] == "output" and "final_norm" not in res.trace


@pytest.mark.parametrize("chunks", [[1] * 7, [3, 1, 1, 2], [7]])
def test_decoder_with_caches_equals_one_full_pass(rng, chunks):
    final = RMSNormParams(rng.standard_normal(12))
    rope = RoPE(4, base=10000.0, convention="interleaved")
    layers = [_llama_block(rng, d_head=4) for _ in range(2)]
    x = rng.standard_normal((2, 7, 12))
    kwargs = dict(n_head=4, n_kv_head=2, final_norm=final, rope=rope)
    full = decoder_stack(x, layers, **kwargs)
    caches = new_caches(2)
    outs, start = [], 0
    for n in chunks:
        outs.append(decoder_stack(x[:, start : start + n], layers, caches=caches, **kwargs).output)
        start += n
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full.output, rtol=0, atol=1e-12)
    assert [c.length for c in caches] == [7, 7]
    # causality: the first token's output ignores every later token
    changed = x.copy()
    changed[:, 1:] = rng.standard_normal(changed[:, 1:].shape)
    np.testing.assert_allclose(
        decoder_stack(changed, layers, **kwargs).output[:, 0], full.output[:, 0], atol=1e-14
    )


def test_decoder_on_every_namespace(xp, to_xp, to_np, rng):
    layers = [_llama_block(rng, d_head=4) for _ in range(2)]
    final = RMSNormParams(rng.standard_normal(12))
    x = rng.standard_normal((7, 12))
    kwargs = dict(n_head=4, n_kv_head=2, rope=RoPE(4))
    ref = decoder_stack(x, layers, final_norm=final, **kwargs).output

    def move(p):
        fields = {}
        for name, value in vars(p).items():
            if isinstance(value, np.ndarray):
                value = to_xp(value)
            elif hasattr(value, "__dataclass_fields__"):
                value = move(value)
            fields[name] = value
        return type(p)(**fields)

    moved = [move(p) for p in layers]
    caches = new_caches(2)
    decoder_stack(to_xp(x[:5]), moved, final_norm=move(final), caches=caches, **kwargs)
    res = decoder_stack(to_xp(x[5:]), moved, final_norm=move(final), caches=caches, **kwargs)
    np.testing.assert_allclose(to_np(res.output), ref[5:], rtol=0, atol=1e-12)


def test_bad_block_arguments(rng):
    p = _bert_block(rng)
    with pytest.raises(ValueError, match=r"norm='middle'; use 'pre'"):
        transformer_block(np.ones((3, 8)), p, n_head=2, norm="middle")
    with pytest.raises(ValueError, match="1 caches for 2 layers"):
        decoder_stack(np.ones((3, 8)), [p, p], n_head=2, final_norm=None, caches=new_caches(1))
    with pytest.raises(ValueError, match="at least one block"):
        encoder_stack(np.ones((3, 8)), [], n_head=2)
    with pytest.raises(ValueError, match=r"n_head=3 does not divide the query width 8"):
        encoder_stack(np.ones((3, 8)), [p], n_head=3)


# -- the hook points (BlockEdits) -------------------------------------------------------------


def _same(a):
    return a


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_edits_that_return_their_input_change_no_bit(rng, norm):
    p = _bert_block(rng) if norm == "post" else _llama_block(rng)
    x = rng.standard_normal((2, 5, 8 if norm == "post" else 12))
    kw = dict(n_head=2 if norm == "post" else 4, norm=norm)
    if norm == "pre":
        kw["n_kv_head"] = 2
    plain = transformer_block(x, p, **kw)
    seen = {}

    def keep(name):
        def hook(a):
            seen[name] = a
            return np.array(a)  # a copy: the same values

        return hook

    edited = transformer_block(x, p, **kw, edits=BlockEdits(z=keep("z"), mid=keep("mid"), mlp=keep("mlp")))
    assert edited.output.tobytes() == plain.output.tobytes()
    assert seen["z"].shape == (2, 5, edited.attention.heads.shape[-3] * edited.attention.heads.shape[-1])
    assert seen["mid"].shape == seen["mlp"].shape == x.shape
    # z is the heads side by side: query head h in columns h*d .. (h+1)*d - 1
    d = plain.attention.heads.shape[-1]
    for h in range(plain.attention.heads.shape[-3]):
        assert seen["z"][..., h * d : (h + 1) * d].tobytes() == plain.attention.heads[:, h].tobytes()


def test_zeroing_a_query_head_removes_exactly_its_rows_of_w_o(rng):
    """GQA: heads 0 and 1 share KV head 0; zeroing head 1's z leaves head 0 as it was."""
    p = _llama_block(rng, d_head=3)
    x = rng.standard_normal((5, 12))

    def zero_head_1(z):
        out = z.copy()
        out[..., 3:6] = 0.0
        return out

    res = transformer_block(x, p, n_head=4, n_kv_head=2, edits=BlockEdits(z=zero_head_1))
    plain = transformer_block(x, p, n_head=4, n_kv_head=2, return_trace=True)
    concat = plain.trace["attn.concat"].copy()
    concat[:, 3:6] = 0.0
    h = x + concat @ p.attn.w_o
    out = h + mlp(rms_norm(h, p.norm_2), p.mlp)[0]
    np.testing.assert_allclose(res.output, out, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(res.attention.heads, plain.attention.heads)  # heads as attention made them


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_mid_and_mlp_edits_replace_what_flows_on(rng, norm):
    p = _bert_block(rng)
    x = rng.standard_normal((5, 8))
    mid = rng.standard_normal((5, 8))
    ff = rng.standard_normal((5, 8))
    res = transformer_block(x, p, n_head=2, norm=norm, return_trace=True,
                            edits=BlockEdits(mid=lambda a: mid, mlp=lambda a: ff))  # fmt: skip
    if norm == "pre":
        expected = mid + ff
    else:
        expected = layer_norm(mid + ff, p.norm_2)
    np.testing.assert_array_equal(res.output, expected)
    assert res.trace["residual_1" if norm == "pre" else "norm_1"] is mid
