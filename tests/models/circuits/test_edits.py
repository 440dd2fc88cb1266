"""Interventions sorted by where they act, checked against the model, and written into copies."""

from __future__ import annotations

import pickle
from types import SimpleNamespace

import numpy as np
import pytest

from attnlab.engine.errors import FieldError
from attnlab.engine.hooks import block_names
from attnlab.models.circuits.edits import SetHead, SetMLP, SetResid, plan

# the shapes plan() reads, SmolLM2's (30 layers, 9 query heads of 64, d_model 576, pre-norm)
ARCH = SimpleNamespace(n_layer=30, n_head=9, n_kv_head=3, d_head=64, d_model=576, norm_placement="pre",
                       positions="rope")
STACK = SimpleNamespace(name="smollm2", arch=ARCH, dtype=np.float32)
T = 5


def test_each_intervention_goes_where_it_acts_and_the_lowest_sets_the_start():
    rng = np.random.default_rng(0)
    p = plan(STACK, T, [
        SetHead(7, 4, np.zeros(64)),
        SetMLP(9, rng.standard_normal((T, 576))),
        SetResid(3, "post", rng.standard_normal(576), (1, -1)),
        SetResid(12, "mid", rng.standard_normal(576)),
        SetResid(20, "pre", rng.standard_normal((T, 576)), (0,)),
    ])  # fmt: skip
    assert p.start == 4  # the residual leaving block 3 enters block 4
    assert sorted(p.points) == [4, 20]
    assert {layer: sorted(hooks) for layer, hooks in p.blocks.items()} == {7: ["z"], 9: ["mlp"], 12: ["mid"]}
    write = p.points[4][0]
    assert write.rows.tolist() == [1, 4]  # -1 is the last position
    assert p.blocks[7]["z"][0].cols == slice(4 * 64, 5 * 64)  # query head 4's columns
    assert plan(STACK, T, [SetResid(29, "post", np.zeros(576))]).start == 30  # only the final norm reruns
    assert plan(STACK, T, []).start == 30


def test_a_head_write_touches_its_columns_at_its_positions_in_a_copy():
    z = np.arange(T * 9 * 64, dtype=np.float32).reshape(T, 9, 64)  # hook_z: (pos, head, d_head)
    value = np.full((T, 64), -1.0)
    p = plan(STACK, T, [SetHead(2, 8, value, (0, 3))])
    kept = []
    hooks = dict(p.hooks(0, 30, {"z": lambda layer, a: kept.append((layer, a))}))
    out = hooks[block_names(2).z](z, block_names(2).z)
    assert out is not z and out.flags.c_contiguous and out.dtype == np.float32 and out.shape == z.shape
    expected = z.copy()
    expected[[0, 3], 8] = -1.0
    np.testing.assert_array_equal(out, expected)
    assert kept[0][0] == 2 and kept[0][1] is out  # the recorder sees what goes on
    assert z[0, 8, 0] == 8 * 64  # the input is never written into
    assert block_names(2).resid_mid not in hooks and block_names(2).mlp_out not in hooks
    assert [name for name, _ in p.hooks(0, 30)] == [block_names(2).z]  # nothing to do elsewhere


def test_mid_is_where_the_norm_placement_puts_it():
    for placement, name in (("pre", block_names(4).resid_mid), ("post", block_names(4).ln1)):
        model = SimpleNamespace(name="m", arch=SimpleNamespace(**{**vars(ARCH), "norm_placement": placement}),
                                dtype=np.float32)  # fmt: skip
        hooks = dict(plan(model, T, [SetResid(4, "mid", np.ones(576))]).hooks(0, 30))
        out = hooks[name](np.zeros((T, 576), np.float32), name)
        assert out.min() == 1.0 and len(hooks) == 1


def test_residual_points_are_written_and_left_alone_elsewhere():
    x = np.zeros((T, 576), np.float32)
    p = plan(STACK, T, [SetResid(5, "pre", np.ones(576), (2,))])
    assert p.at_point(4, x) is x
    assert p.at_point(5, x)[2].min() == 1.0 and p.at_point(5, x)[[0, 1, 3, 4]].max() == 0.0


@pytest.mark.parametrize(
    ("edit", "loc"),
    [
        (SetHead(30, 0, np.zeros(64)), ("edits", 0, "layer")),
        (SetHead(0, 9, np.zeros(64)), ("edits", 0, "head")),
        (SetHead(0, 0, np.zeros(63)), ("edits", 0, "value")),
        (SetHead(0, 0, np.zeros(64), (T,)), ("edits", 0, "positions", 0)),
        (SetResid(0, "middle", np.zeros(576)), ("edits", 0, "site")),
        (SetMLP(True, np.zeros(576)), ("edits", 0, "layer")),
    ],
)
def test_interventions_outside_the_model_are_refused_at_their_field(edit, loc):
    with pytest.raises(FieldError) as error:
        plan(STACK, T, [edit])
    assert error.value.loc == loc


def test_interventions_are_plain_data():
    edit = SetHead(1, 2, np.arange(64.0), (0, 1))
    again = pickle.loads(pickle.dumps(edit))
    assert (again.layer, again.head, again.positions) == (1, 2, (0, 1))
    np.testing.assert_array_equal(again.value, edit.value)
