"""The block walk: its ordered-sum numbers against the engine's transformer_block, exact worked cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.engine.block import BlockParams, transformer_block
from attnlab.engine.errors import FieldError
from attnlab.engine.layers import LayerNormParams, MLPParams
from attnlab.engine.multihead import AttentionParams
from attnlab.engine.positions import RoPE, sinusoidal_positions
from attnlab.engine.single import trace_query
from attnlab.lab.block.data import EPS, given_weights, given_x
from attnlab.lab.block.walk import causal_row, explorer_state, walk

TOL = 1e-12
SETTINGS = [(n, p) for n in ("pre", "post") for p in ("none", "sinusoidal", "rope")]


def engine_params(w: dict, heads_on=(True, True)) -> BlockParams:
    """The walk's weights as the engine's BlockParams; a head off = its rows of W_O zeroed."""
    cat = {n: np.concatenate([np.array(h[n]) for h in w["heads"]], axis=1) for n in ("w_q", "w_k", "w_v")}
    w_o = np.array(w["w_o"])
    for h, on in enumerate(heads_on):
        if not on:
            w_o[2 * h : 2 * h + 2] = 0.0
    return BlockParams(
        attn=AttentionParams(cat["w_q"], cat["w_k"], cat["w_v"], w_o),
        mlp=MLPParams(np.array(w["w_1"]), np.array(w["w_2"]), np.array(w["b_1"]), np.array(w["b_2"])),
        norm_1=LayerNormParams(np.array(w["norm_1"]["gamma"]), np.array(w["norm_1"]["beta"]), EPS),
        norm_2=LayerNormParams(np.array(w["norm_2"]["gamma"]), np.array(w["norm_2"]["beta"]), EPS),
    )


def engine_run(x, w, norm, positions, heads_on=(True, True)):
    x = np.array(x)
    if positions == "sinusoidal":
        x = x + sinusoidal_positions(3, 4)
    rope = RoPE(2) if positions == "rope" else None
    return transformer_block(
        x,
        engine_params(w, heads_on),
        n_head=2,
        norm=norm,
        causal="top_left",
        rope=rope,
        positions=[0, 1, 2] if rope else None,
        return_trace=True,
    )


@pytest.mark.parametrize("norm,positions", SETTINGS)
@pytest.mark.parametrize("seed", [None, 1, 2])
def test_every_intermediate_equals_the_engines(norm, positions, seed, random_block):
    x, w = (given_x(), given_weights()) if seed is None else random_block(seed)
    ours = walk(x, w, norm=norm, positions=positions)
    res = engine_run(x, w, norm, positions)
    tr = res.trace
    pairs = {
        "output": res.output,
        "residual_1": tr["residual_1"],
        "attn": tr["attn.output"],
        "concat": tr["attn.concat"],
        "norm_1.output": tr["norm_1"],
        "mlp.hidden": tr["mlp.hidden"],
        "mlp.activated": tr["mlp.activated"],
        "mlp.output": tr["mlp.output"],
    }
    if norm == "pre":
        pairs["norm_2.output"] = tr["norm_2"]
    else:
        pairs["residual_2"] = tr["residual_2"]
    for h in range(2):
        name = f"head{h + 1}"
        pairs[f"{name}.q"] = tr["attn.q"][h]
        pairs[f"{name}.weights"] = res.attention.weights[h]
        pairs[f"{name}.output"] = res.attention.heads[h]
        if positions == "rope":
            pairs[f"{name}.q_rotated"] = tr["attn.q_rotated"][h]
            pairs[f"{name}.k_rotated"] = tr["attn.k_rotated"][h]
    for name, want in pairs.items():
        np.testing.assert_allclose(np.array(ours.tensors[name]), want, rtol=0, atol=TOL, err_msg=name)


@pytest.mark.parametrize("off", [(False, True), (True, False), (False, False)])
def test_a_head_switched_off_contributes_zeros_before_w_o(off):
    ours = walk(heads_on=off)
    res = engine_run(given_x(), given_weights(), "pre", "none", heads_on=off)
    np.testing.assert_allclose(np.array(ours.output), res.output, rtol=0, atol=TOL)
    for h, on in enumerate(off):
        block = [row[2 * h : 2 * h + 2] for row in ours.tensors["concat"]]
        assert (block == ours.tensors[f"head{h + 1}.output"]) if on else block == [[0.0, 0.0]] * 3
    # the switched-off head is still computed and shown
    assert ours.tensors["head1.weights"] == walk().tensors["head1.weights"]


def test_attention_is_the_explorers_trace_bit_for_bit():
    w = walk(positions="rope")
    for h in range(2):
        for r in range(3):
            state = explorer_state(w, h, r)
            t = trace_query(**state)
            assert state["allowed"] == causal_row(r)
            assert list(t.weights) == w.tensors[f"head{h + 1}.weights"][r]
            assert list(t.output) == w.tensors[f"head{h + 1}.output"][r]
            assert state["keys"] == w.tensors[f"head{h + 1}.k_rotated"]


def test_the_given_heads_do_different_things():
    w = walk()
    h1, h2 = w.tensors["head1.weights"], w.tensors["head2.weights"]
    assert h1[1][0] > 0.9 and h1[2][1] > 0.7  # head 1: the previous token
    assert h2[1][1] > 0.9 and h2[2][2] > 0.6  # head 2: the token itself
    assert h1[0] == [1.0, 0.0, 0.0] and h2[0] == [1.0, 0.0, 0.0]  # A sees only itself


def test_layer_norm_of_the_given_x_is_plus_or_minus_one_by_eps():
    w = walk()
    assert w.tensors["norm_1.mean"] == [[0.5]] * 3
    assert w.tensors["norm_1.var"] == [[0.25]] * 3
    assert w.tensors["norm_1.std"] == [[math.sqrt(0.25 + EPS)]] * 3
    assert w.tensors["norm_1.output"][0] == [0.5 / math.sqrt(0.25 + EPS) * s for s in (1, -1, -1, 1)]


def test_post_norm_rows_have_mean_zero_and_unit_variance():
    out = np.array(walk(norm="post").output)
    np.testing.assert_allclose(out.mean(axis=1), 0.0, atol=1e-12)
    assert np.all(out.var(axis=1) < 1.0) and np.all(out.var(axis=1) > 0.999)


@pytest.mark.parametrize(
    "kwargs,loc",
    [
        ({"x": [[1, 2, 3]] * 3}, ("x", 0)),
        ({"x": [[1, 2, 3, float("nan")]] * 3}, ("x", 0, 3)),
        ({"x": [[1, 2, 3, 1e4]] * 3}, ("x", 0, 3)),
        ({"x": [[1, 2, 3, True]] * 3}, ("x", 0, 3)),
        ({"norm": "middle"}, ("norm",)),
        ({"positions": "learned"}, ("positions",)),
        ({"heads_on": [True]}, ("heads_on",)),
    ],
)
def test_bad_inputs_name_the_field(kwargs, loc):
    with pytest.raises(FieldError) as err:
        walk(**kwargs)
    assert err.value.loc == loc


def test_bad_weights_name_the_field():
    w = given_weights()
    w["heads"][1]["w_q"][2][0] = math.inf
    with pytest.raises(FieldError) as err:
        walk(weights=w)
    assert err.value.loc == ("weights", "heads", 1, "w_q", 2, 0)
    del w["norm_2"]["beta"]
    w["heads"][1]["w_q"][2][0] = 0.0
    with pytest.raises(FieldError) as err:
        walk(weights=w)
    assert err.value.loc == ("weights", "norm_2", "beta")
