"""The block walk against torch.nn.TransformerEncoderLayer (float64, same weights, causal mask)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.lab.block.data import EPS, given_weights, given_x
from attnlab.lab.block.walk import walk

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.oracle

TOL = 1e-12


def torch_layer(w: dict, norm_first: bool):
    layer = torch.nn.TransformerEncoderLayer(
        d_model=4,
        nhead=2,
        dim_feedforward=8,
        dropout=0.0,
        activation="gelu",
        layer_norm_eps=EPS,
        batch_first=True,
        norm_first=norm_first,
        dtype=torch.float64,
    )
    t = lambda m: torch.tensor(m, dtype=torch.float64)  # noqa: E731
    cat = {n: np.concatenate([np.array(h[n]) for h in w["heads"]], axis=1) for n in ("w_q", "w_k", "w_v")}
    with torch.no_grad():
        # nn.Linear stores (out, in): every pre-transposed weight is transposed once here
        layer.self_attn.in_proj_weight.copy_(t(np.concatenate([cat["w_q"].T, cat["w_k"].T, cat["w_v"].T])))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(t(w["w_o"]).T)
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(t(w["w_1"]).T)
        layer.linear1.bias.copy_(t(w["b_1"]))
        layer.linear2.weight.copy_(t(w["w_2"]).T)
        layer.linear2.bias.copy_(t(w["b_2"]))
        for name in ("norm1", "norm2"):
            ours = w["norm_1" if name == "norm1" else "norm_2"]
            getattr(layer, name).weight.copy_(t(ours["gamma"]))
            getattr(layer, name).bias.copy_(t(ours["beta"]))
    layer.train()  # dropout is 0; training mode keeps PyTorch off its fused inference path
    return layer


def torch_output(x, w, norm_first: bool) -> np.ndarray:
    layer = torch_layer(w, norm_first)
    # float mask: -inf above the diagonal (PyTorch's boolean True would mean *blocked*)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64)
    with torch.no_grad():
        out = layer(torch.tensor([x], dtype=torch.float64), src_mask=mask, is_causal=True)
    return out[0].numpy()


@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("seed", [None, 3, 4, 5])
def test_block_equals_torch_encoder_layer(norm, seed, random_block):
    x, w = (given_x(), given_weights()) if seed is None else random_block(seed)
    ours = np.array(walk(x, w, norm=norm).output)
    theirs = torch_output(x, w, norm_first=norm == "pre")
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_sinusoidal_positions_equal_torch_with_the_table_added(norm, random_block):
    x, w = random_block(6)
    pos = torch.arange(3, dtype=torch.float64)[:, None]
    freq = 10000.0 ** (-(torch.arange(4) - torch.arange(4) % 2).to(torch.float64) / 4)
    angle = pos * freq
    table = torch.where(torch.arange(4) % 2 == 0, torch.sin(angle), torch.cos(angle))
    pe = table.numpy()
    ours = np.array(walk(x, w, norm=norm, positions="sinusoidal").output)
    theirs = torch_output((np.array(x) + pe).tolist(), w, norm_first=norm == "pre")
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOL)


def test_rope_rotation_equals_a_torch_rotation_and_scores_depend_on_offset_only():
    w = walk(positions="rope")
    for h in (1, 2):
        q = torch.tensor(w.tensors[f"head{h}.q"], dtype=torch.float64)
        theta = torch.arange(3, dtype=torch.float64)  # d_k = 2: one pair, frequency 1
        c, s = torch.cos(theta)[:, None], torch.sin(theta)[:, None]
        rotated = torch.cat([q[:, :1] * c - q[:, 1:] * s, q[:, 1:] * c + q[:, :1] * s], dim=1)
        np.testing.assert_allclose(
            np.array(w.tensors[f"head{h}.q_rotated"]), rotated.numpy(), rtol=0, atol=TOL
        )
