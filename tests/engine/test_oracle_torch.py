"""Oracle tests: the engine against PyTorch in float64, max abs difference <= 1e-12.

Odd shapes on purpose (L=23, S=56, d=15; L=97; head dim 59), as PyTorch's and
FlashAttention's own tests use. PyTorch's nn.MultiheadAttention masks mean
"must NOT attend"; ours mean "may attend", so they are inverted on the way in.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is the oracle; install torch==2.13.0 (CPU)")
F = torch.nn.functional

from attnlab.engine import (  # noqa: E402
    AttentionParams,
    BlockParams,
    LayerNormParams,
    MLPParams,
    RMSNormParams,
    SwiGLUParams,
    attention,
    encoder_stack,
    gelu,
    layer_norm,
    mlp,
    multi_head_attention,
    rms_norm,
    silu,
    transformer_block,
)

pytestmark = pytest.mark.oracle
TOL = 1e-12


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def close(ours, theirs, tol=TOL):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    assert ours.shape == theirs.shape
    diff = np.max(np.abs(ours - theirs))
    assert diff <= tol, f"max abs diff {diff:.3e} > {tol}"


SHAPES = [  # (batch dims, L, S, d_k, d_v)
    ((2, 3), 23, 56, 15, 15),
    ((1, 2), 97, 97, 59, 59),
    ((3,), 56, 23, 16, 7),
]


@pytest.mark.parametrize("lead,L,S,d,dv", SHAPES)
def test_sdpa_plain_and_scale(rng, lead, L, S, d, dv):
    q, k, v = (
        rng.standard_normal(lead + (L, d)),
        rng.standard_normal(lead + (S, d)),
        rng.standard_normal(lead + (S, dv)),
    )
    close(attention(q, k, v).output, F.scaled_dot_product_attention(t(q), t(k), t(v)))
    close(
        attention(q, k, v, scale=0.37).output,
        F.scaled_dot_product_attention(t(q), t(k), t(v), scale=0.37),
    )


@pytest.mark.parametrize("lead,L,S,d,dv", SHAPES)
def test_sdpa_boolean_mask(rng, lead, L, S, d, dv):
    q, k, v = (
        rng.standard_normal(lead + (L, d)),
        rng.standard_normal(lead + (S, d)),
        rng.standard_normal(lead + (S, dv)),
    )
    mask = rng.random(lead + (L, S)) < 0.7
    mask[..., 0] = True  # no fully masked row here; those have their own test
    close(
        attention(q, k, v, mask=mask).output,
        F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask)),
    )


@pytest.mark.parametrize("lead,L,S,d,dv", SHAPES)
def test_sdpa_float_mask_with_minus_inf(rng, lead, L, S, d, dv):
    q, k, v = (
        rng.standard_normal(lead + (L, d)),
        rng.standard_normal(lead + (S, d)),
        rng.standard_normal(lead + (S, dv)),
    )
    bias = rng.standard_normal((L, S))
    bias[rng.random((L, S)) < 0.3] = -np.inf
    bias[:, 1] = 0.5
    close(
        attention(q, k, v, mask=bias).output,
        F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(bias)),
    )


@pytest.mark.parametrize("lead,L,S,d,dv", SHAPES)
def test_sdpa_is_causal_is_top_left(rng, lead, L, S, d, dv):
    q, k, v = (
        rng.standard_normal(lead + (L, d)),
        rng.standard_normal(lead + (S, d)),
        rng.standard_normal(lead + (S, dv)),
    )
    close(
        attention(q, k, v, causal="top_left").output,
        F.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True),
    )


@pytest.mark.parametrize("lead,L,S,d,dv", SHAPES)
def test_sdpa_causal_lower_right_is_bottom_right(rng, lead, L, S, d, dv):
    from torch.nn.attention.bias import causal_lower_right

    q, k, v = (
        rng.standard_normal(lead + (L, d)),
        rng.standard_normal(lead + (S, d)),
        rng.standard_normal(lead + (S, dv)),
    )
    ours = attention(q, k, v, causal="bottom_right")
    if L <= S:
        theirs = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=causal_lower_right(L, S))
        close(ours.output, theirs)
        assert not ours.fully_masked.any()
        return
    # L > S: the first L - S queries see no key. PyTorch warns that it may give NaN there;
    # we give zeros and report the rows.
    with pytest.warns(UserWarning, match="NaN"):
        bias = causal_lower_right(L, S)
    theirs = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=bias).numpy()
    close(ours.output[..., L - S :, :], theirs[..., L - S :, :])
    assert np.all(ours.output[..., : L - S, :] == 0)
    assert np.all(ours.fully_masked[..., : L - S]) and not ours.fully_masked[..., L - S :].any()


def test_sdpa_fully_masked_rows_are_zero_in_both(rng):
    q, k, v = (
        rng.standard_normal((2, 23, 15)),
        rng.standard_normal((2, 56, 15)),
        rng.standard_normal((2, 56, 15)),
    )
    mask = rng.random((2, 23, 56)) < 0.5
    mask[0, 4] = False
    mask[1, 22] = False
    ours = attention(q, k, v, mask=mask)
    theirs = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=t(mask))
    close(ours.output, theirs)
    assert np.all(ours.output[0, 4] == 0) and np.all(ours.output[1, 22] == 0)


@pytest.mark.parametrize("n_head,n_kv", [(6, 3), (8, 1), (4, 4)])
def test_sdpa_enable_gqa(rng, n_head, n_kv):
    q = rng.standard_normal((2, n_head, 23, 59))
    k, v = rng.standard_normal((2, n_kv, 56, 59)), rng.standard_normal((2, n_kv, 56, 59))
    mask = rng.random((2, n_head, 23, 56)) < 0.8
    mask[..., 0] = True
    for kwargs, tkw in (
        ({}, {}),
        ({"mask": mask}, {"attn_mask": t(mask)}),
        ({"causal": "top_left"}, {"is_causal": True}),
    ):
        close(
            attention(q, k, v, enable_gqa=True, **kwargs).output,
            F.scaled_dot_product_attention(t(q), t(k), t(v), enable_gqa=True, **tkw),
        )


def _mha_params(mha, d_model):
    w, b = mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy()
    d = d_model
    return AttentionParams(
        w_q=w[:d].T, w_k=w[d : 2 * d].T, w_v=w[2 * d :].T,
        w_o=mha.out_proj.weight.detach().numpy().T,
        b_q=b[:d], b_k=b[d : 2 * d], b_v=b[2 * d :], b_o=mha.out_proj.bias.detach().numpy(),
    )  # fmt: skip


def test_multihead_attention_matches_nn_multiheadattention(rng):
    torch.manual_seed(0)
    d_model, n_head, B, L, S = 30, 5, 3, 23, 56
    mha = torch.nn.MultiheadAttention(d_model, n_head, batch_first=True, dtype=torch.float64).eval()
    x, ctx = rng.standard_normal((B, L, d_model)), rng.standard_normal((B, S, d_model))
    allowed = rng.random((L, S)) < 0.8
    allowed[:, 0] = True
    real = np.ones((B, S), bool)
    real[1, 40:] = False
    with torch.no_grad():
        out, w = mha(t(x), t(ctx), t(ctx), attn_mask=t(~allowed), key_padding_mask=t(~real),
                     need_weights=True, average_attn_weights=False)  # fmt: skip
    ours = multi_head_attention(x, _mha_params(mha, d_model), n_head=n_head, context=ctx,
                                mask=allowed, key_padding_mask=real)  # fmt: skip
    close(ours.output, out)
    close(ours.weights, w)  # per head: (B, n_head, L, S)
    with torch.no_grad():
        _, w_avg = mha(t(x), t(ctx), t(ctx), attn_mask=t(~allowed), key_padding_mask=t(~real))
    close(ours.mean_weights, w_avg)


def test_multihead_per_head_3d_mask_is_batch_major(rng):
    """nn.MultiheadAttention's 3-D mask is (B * n_head, L, S) with index b * n_head + h."""
    torch.manual_seed(1)
    d_model, n_head, B, L = 24, 4, 2, 17
    mha = torch.nn.MultiheadAttention(d_model, n_head, batch_first=True, dtype=torch.float64).eval()
    x = rng.standard_normal((B, L, d_model))
    allowed = rng.random((B, n_head, L, L)) < 0.7
    allowed[..., 0] = True
    with torch.no_grad():
        out, w = mha(t(x), t(x), t(x), attn_mask=t(~allowed.reshape(B * n_head, L, L)),
                     average_attn_weights=False)  # fmt: skip
    ours = multi_head_attention(x, _mha_params(mha, d_model), n_head=n_head, mask=allowed)
    close(ours.output, out)
    close(ours.weights, w)


def _block_params(layer, d_model):
    def ln(m):
        return LayerNormParams(m.weight.detach().numpy(), m.bias.detach().numpy(), m.eps)

    return BlockParams(
        attn=_mha_params(layer.self_attn, d_model),
        mlp=MLPParams(
            w_1=layer.linear1.weight.detach().numpy().T,
            b_1=layer.linear1.bias.detach().numpy(),
            w_2=layer.linear2.weight.detach().numpy().T,
            b_2=layer.linear2.bias.detach().numpy(),
            activation="gelu",
        ),  # fmt: skip
        norm_1=ln(layer.norm1),
        norm_2=ln(layer.norm2),
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_block_matches_encoder_layer(rng, norm_first):
    torch.manual_seed(2)
    d_model, n_head, B, L = 30, 5, 3, 23
    layer = torch.nn.TransformerEncoderLayer(
        d_model, n_head, dim_feedforward=47, dropout=0.0, activation="gelu",
        batch_first=True, norm_first=norm_first, dtype=torch.float64,
    ).eval()  # fmt: skip
    x = rng.standard_normal((B, L, d_model))
    real = np.ones((B, L), bool)
    real[2, 15:] = False
    with torch.no_grad():
        plain = layer(t(x))
        padded = layer(t(x), src_key_padding_mask=t(~real))
        causal = layer(
            t(x),
            src_mask=torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64),
            is_causal=True,
        )
    norm = "pre" if norm_first else "post"
    params = _block_params(layer, d_model)
    close(transformer_block(x, params, n_head=n_head, norm=norm).output, plain)
    close(transformer_block(x, params, n_head=n_head, norm=norm, key_padding_mask=real).output, padded)
    close(transformer_block(x, params, n_head=n_head, norm=norm, causal="top_left").output, causal)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_stack_matches_transformer_encoder(rng, norm_first):
    torch.manual_seed(3)
    d_model, n_head, L = 16, 2, 19
    layer = torch.nn.TransformerEncoderLayer(
        d_model, n_head, dim_feedforward=33, dropout=0.0, activation="gelu",
        batch_first=True, norm_first=norm_first, dtype=torch.float64,
    )  # fmt: skip
    final = torch.nn.LayerNorm(d_model, dtype=torch.float64) if norm_first else None
    enc = torch.nn.TransformerEncoder(layer, 3, norm=final, enable_nested_tensor=False).eval()
    with torch.no_grad():
        for p in enc.parameters():  # the clones start identical; make each layer differ
            p.add_(torch.randn_like(p) * 0.1)
    x = rng.standard_normal((2, L, d_model))
    with torch.no_grad():
        theirs = enc(t(x))
    layers = [_block_params(lay, d_model) for lay in enc.layers]
    final_norm = None
    if norm_first:
        final_norm = LayerNormParams(
            enc.norm.weight.detach().numpy(), enc.norm.bias.detach().numpy(), enc.norm.eps
        )
    ours = encoder_stack(
        x, layers, n_head=n_head, norm="pre" if norm_first else "post", final_norm=final_norm
    )
    close(ours.output, theirs)


def test_norms_and_activations(rng):
    x = rng.standard_normal((4, 7, 33)) * 3
    w, b = rng.standard_normal(33), rng.standard_normal(33)
    close(layer_norm(x, LayerNormParams(w, b, 1e-5)), F.layer_norm(t(x), (33,), t(w), t(b), 1e-5))
    close(rms_norm(x, RMSNormParams(w, 1e-6)), F.rms_norm(t(x), (33,), t(w), 1e-6))
    close(gelu(x), F.gelu(t(x)))
    close(gelu(x, approximate="tanh"), F.gelu(t(x), approximate="tanh"))
    close(silu(x), F.silu(t(x)))
    wide = np.linspace(-40, 40, 1601)
    close(gelu(wide), F.gelu(t(wide)))
    close(silu(wide), F.silu(t(wide)))


def test_swiglu_matches_torch(rng):
    x = rng.standard_normal((2, 9, 12))
    wg, wu, wd = rng.standard_normal((12, 31)), rng.standard_normal((12, 31)), rng.standard_normal((31, 12))
    out, _ = mlp(x, SwiGLUParams(w_gate=wg, w_up=wu, w_down=wd))
    close(out, (F.silu(t(x) @ t(wg)) * (t(x) @ t(wu))) @ t(wd))
