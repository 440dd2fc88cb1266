"""A model as data: the Architecture's fields refused where they make no model, and weights that do
not fit their architecture refused at the weight, with both shapes."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnlab.engine.block import BlockParams
from attnlab.engine.errors import FieldError
from attnlab.engine.layers import MLPParams, SwiGLUParams
from attnlab.engine.model import Architecture, Weights, check_weights
from attnlab.engine.multihead import AttentionParams

from .tinykit import bert, llama, quant_matrix

Q4 = dict(kind="q4_1", d_model=64, d_head=16, d_ff=96)  # every product's input a whole number of blocks
SHAPES = dict(family="test", causal=True, n_layer=2, d_model=16, n_head=4, n_kv_head=2, d_head=8, d_ff=24,
              d_vocab=40, n_ctx=64)  # fmt: skip


def test_the_defaults_describe_a_llama_style_decoder():
    a = Architecture(**SHAPES)
    assert (a.norm, a.norm_placement, a.final_norm, a.embed_norm) == ("rms", "pre", True, False)
    assert (a.positions, a.rope_base, a.rope_pairs) == ("rope", 10000.0, "half")
    assert (a.mlp, a.activation, a.token_types, a.embed_scale) == ("gated", "silu", False, 1.0)
    assert (a.tied_output, a.head, a.attn_scale) == (True, "logits", None)
    assert a.group == 2  # query heads 0, 1 read KV head 0; 2, 3 read KV head 1
    assert a.scale == 1.0 / math.sqrt(8)
    assert Architecture(**SHAPES, attn_scale=0.25).scale == 0.25
    assert Architecture(**{**SHAPES, "n_kv_head": 1}).group == 4  # MQA


def test_an_architecture_is_frozen_keyword_only_and_replaced_by_a_checked_copy():
    a = Architecture(**SHAPES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.n_layer = 3
    with pytest.raises(TypeError):
        Architecture("test", True, 2, 16, 4, 2, 8, 24, 40, 64)  # the fields are keyword-only
    b = a.replace(rope_base=100.0, n_layer=3)
    assert (b.rope_base, b.n_layer, a.rope_base, a.n_layer) == (100.0, 3, 10000.0, 2)
    assert b == Architecture(**{**SHAPES, "n_layer": 3}, rope_base=100.0)
    with pytest.raises(FieldError) as err:
        a.replace(n_kv_head=3)  # the copy is checked like a new description
    assert err.value.loc == ("n_head",)


SIZES = ["n_layer", "d_model", "n_head", "n_kv_head", "d_head", "d_ff", "d_vocab", "n_ctx"]


@pytest.mark.parametrize("name", SIZES)
@pytest.mark.parametrize("value", [0, -2, 2.0, True, "4", None])
def test_every_size_is_a_whole_number_of_at_least_one(name, value):
    with pytest.raises(FieldError) as err:
        Architecture(**{**SHAPES, name: value})
    assert err.value.loc == (name,)
    assert err.value.problem.endswith(f"is {value!r}; it must be a whole number of at least 1")


def test_query_heads_must_share_the_kv_heads_evenly():
    with pytest.raises(FieldError) as err:
        Architecture(**{**SHAPES, "n_head": 6, "n_kv_head": 4})
    assert err.value.loc == ("n_head",) and "6 query heads do not share 4 KV heads" in str(err.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("norm", "batch"), ("norm_placement", "sandwich"), ("positions", "alibi"), ("rope_pairs", "halves"),
     ("mlp", "moe"), ("activation", "swish"), ("head", "pooler"), ("norm", "RMS")],
)  # fmt: skip
def test_a_choice_outside_its_list_is_refused_with_the_list(name, value):
    with pytest.raises(FieldError) as err:
        Architecture(**SHAPES, **{name: value})
    assert err.value.loc == (name,)
    assert f"is {value!r}; use one of (" in err.value.problem


def test_rotary_positions_need_an_even_head_size_and_other_positions_do_not():
    with pytest.raises(FieldError) as err:
        Architecture(**{**SHAPES, "d_head": 7})
    assert err.value.loc == ("d_head",) and "even head size, not 7" in str(err.value)
    for positions in ("learned", "none"):
        assert Architecture(**{**SHAPES, "d_head": 7}, positions=positions).d_head == 7


# -- check_weights -----------------------------------------------------------------------------------


def test_weights_made_for_their_architecture_pass(rng):
    for arch, w in (llama(rng), llama(rng, joined=True), bert(rng), llama(rng, **Q4)):
        check_weights(arch, w)


def test_an_embedding_kept_as_blocks_of_its_transpose_passes(rng):
    """Weights' docstring: on the fast path W_E may be a QuantMatrix (d_model, d_vocab) of W_E's rows."""
    arch, w = llama(rng, **Q4)
    check_weights(arch, dataclasses.replace(w, embed=quant_matrix(rng, 64, arch.d_vocab)))


def _refused(arch, w) -> FieldError:
    with pytest.raises(FieldError) as err:
        check_weights(arch, w)
    return err.value


def _with_block(w: Weights, i: int, **changes) -> Weights:
    blocks = list(w.blocks)
    blocks[i] = dataclasses.replace(blocks[i], **changes)
    return dataclasses.replace(w, blocks=tuple(blocks))


def test_a_block_count_or_an_embedding_that_does_not_fit_is_refused(rng):
    arch, w = llama(rng)
    err = _refused(arch, dataclasses.replace(w, blocks=w.blocks[:1]))
    assert err.loc == ("blocks",) and "1 blocks for an architecture of 2 layers" in str(err)
    err = _refused(arch, dataclasses.replace(w, embed=w.embed.T))
    assert err.loc == ("embed",)
    assert err.problem.endswith("has shape (16, 40); the architecture needs (40, 16)")


def test_learned_positions_need_a_table_as_long_as_the_context(rng):
    arch, w = bert(rng)
    for table in (None, w.pos_embed[:-1], w.pos_embed[:, :-1]):
        err = _refused(arch, dataclasses.replace(w, pos_embed=table))
        assert err.loc == ("pos_embed",) and "learned positions need a table of (12, 16)" in str(err)
    check_weights(arch, dataclasses.replace(w, pos_embed=np.concatenate([w.pos_embed, w.pos_embed])))


def test_an_untied_output_layer_needs_its_own_matrix(rng):
    arch, w = llama(rng)
    untied = arch.replace(tied_output=False)
    err = _refused(untied, w)
    assert err.loc == ("unembed",) and "shape (); the architecture needs (16, 40)" in str(err)
    err = _refused(untied, dataclasses.replace(w, unembed=w.embed))
    assert "unembed has shape (40, 16)" in str(err)
    check_weights(untied, dataclasses.replace(w, unembed=w.embed.T.copy()))


@pytest.mark.parametrize(
    ("weight", "shape", "needs"),
    [("w_q", (16, 24), (16, 32)), ("w_k", (16, 32), (16, 16)), ("w_v", (8, 16), (16, 16)),
     ("w_o", (16, 32), (32, 16))],
)  # fmt: skip
def test_a_projection_of_the_wrong_shape_is_refused_at_its_block(rng, weight, shape, needs):
    arch, w = llama(rng)
    attn = dataclasses.replace(w.blocks[1].attn, **{weight: np.zeros(shape)})
    err = _refused(arch, _with_block(w, 1, attn=attn))
    assert err.loc == (f"blocks.1.attn.{weight}",)
    assert err.problem.endswith(f"has shape {shape}; the architecture needs {needs}")


def test_the_mlp_must_be_the_kind_the_architecture_names_with_its_shapes(rng):
    arch, w = llama(rng)
    plain = MLPParams(np.zeros((16, 24)), np.zeros((24, 16)))
    err = _refused(arch, _with_block(w, 0, mlp=plain))
    assert err.loc == ("blocks.0.mlp",) and "a gated MLP needs w_gate, w_up and w_down" in str(err)
    f = w.blocks[0].mlp
    err = _refused(arch, _with_block(w, 0, mlp=SwiGLUParams(f.w_gate, f.w_up[:, :20], f.w_down)))
    assert err.loc == ("blocks.0.mlp.w_up",) and "(16, 20); the architecture needs (16, 24)" in str(err)
    err = _refused(arch, _with_block(w, 0, mlp=SwiGLUParams(f.w_gate, f.w_up, f.w_down.T)))
    assert err.loc == ("blocks.0.mlp.w_down",)

    arch, w = bert(rng)
    err = _refused(arch, _with_block(w, 1, mlp=f))
    assert err.loc == ("blocks.1.mlp",) and "a plain MLP needs w_1 and w_2" in str(err)
    m = w.blocks[1].mlp
    err = _refused(arch, _with_block(w, 1, mlp=dataclasses.replace(m, w_2=m.w_1)))
    assert err.loc == ("blocks.1.mlp.w_2",) and "(16, 32); the architecture needs (32, 16)" in str(err)


def test_a_quantised_projection_is_checked_by_its_shape_too(rng):
    arch, w = llama(rng, **Q4)
    a = w.blocks[0].attn
    wrong = AttentionParams(a.w_q, quant_matrix(rng, 64, 64), a.w_v, a.w_o)
    err = _refused(arch, _with_block(w, 0, attn=wrong))
    assert err.loc == ("blocks.0.attn.w_k",) and "(64, 64); the architecture needs (64, 32)" in str(err)
    assert isinstance(w.blocks[0], BlockParams)


def test_an_error_names_its_field_once():
    """errors.py: a problem never names its own field (str() and the page put the name in front)."""
    with pytest.raises(FieldError) as err:
        Architecture(**{**SHAPES, "n_layer": 0})
    assert str(err.value) == "n_layer is 0; it must be a whole number of at least 1"


def test_a_weights_error_names_the_weight_once(rng):
    arch, w = llama(rng)
    err = _refused(arch, dataclasses.replace(w, embed=w.embed.T))
    assert str(err) == "embed has shape (16, 40); the architecture needs (40, 16)"
