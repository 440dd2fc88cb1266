"""FieldError: every validator says which field is wrong as data (``loc``), not only in words."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from attnlab.engine import (
    AttentionParams,
    KVCache,
    RoPE,
    attention,
    multi_head_attention,
)
from attnlab.engine.errors import FieldError, field_text, relocate
from attnlab.engine.fast.tiled import tiled_attention
from attnlab.engine.positions import embed
from attnlab.engine.single import trace_query

Q = [2, 1]
KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]


def test_field_text_writes_names_and_indices():
    assert field_text(("keys", 2, 0)) == "keys[2][0]"
    assert field_text(("study", "before", 0, "kind")) == "study.before[0].kind"
    assert field_text(()) == "input"


def test_field_error_is_a_value_error_with_its_location():
    error = FieldError(("values", 1, 0), "is NaN; every number must be finite")
    assert isinstance(error, ValueError)
    assert (error.loc, error.field, error.type) == (("values", 1, 0), "values[1][0]", "value_error")
    assert FieldError("scale", "is 0.0").loc == ("scale",)


def test_the_problem_and_the_field_are_separate_data():
    error = FieldError(("values", 1, 1), "must be at most 1,000,000")
    assert error.problem == "must be at most 1,000,000"
    # the engine's callers read the field as they wrote it ...
    assert str(error) == "values[1][1] must be at most 1,000,000"
    # ... and whoever shows it names the field in its own words
    assert error.words(lambda loc: "Source B · value y") == "Source B · value y must be at most 1,000,000"


def test_a_problem_names_other_fields_through_refs():
    error = FieldError(("keys", 2), "has 3 coordinates; {first} has 2", first=("keys", 0))
    assert str(error) == "keys[2] has 3 coordinates; keys[0] has 2"
    assert error.words(lambda loc: f"<{len(loc)}>") == "<2> has 3 coordinates; <2> has 2"


def test_within_relocates_the_field_and_its_refs_not_the_problem():
    inner = FieldError(("q", 1), "is nan; every number must be finite")
    outer = inner.within("edit")
    assert (outer.loc, outer.problem, str(outer)) == (
        ("edit", "q", 1),
        "is nan; every number must be finite",
        "edit.q[1] is nan; every number must be finite",
    )
    derived = FieldError("q", "makes the score with {key} overflow", key=("keys", 0)).within("edit")
    assert (derived.loc, derived.refs, str(derived)) == (
        ("edit", "q"), {"key": ("edit", "keys", 0)}, "edit.q makes the score with edit.keys[0] overflow"
    )
    moved = FieldError(("edit", "q", 0), "is nan").rebased(("edit",), ("edits", 2))
    assert (type(moved), moved.loc) == (FieldError, ("edits", 2, "q", 0))


def test_relocate_matches_whole_fields_only():
    assert relocate("queries has 2 rows", ("q",), ("edit", "q")) == "queries has 2 rows"
    assert relocate("q[0] is 3", ("q",), ("edit", "q")) == "q[0] is 3"
    assert relocate("q is empty", ("q",), ("edit", "q")) == "edit.q is empty"
    assert relocate("example must be an object", (), ("example",)) == "example must be an object"


@pytest.mark.parametrize(
    ("kwargs", "loc"),
    [
        (dict(values=[[2, 0], [1e400, 2], [-1, -1]]), ("values", 1, 0)),
        (dict(values=[[2, 0], [float("inf"), 2], [-1, -1]]), ("values", 1, 0)),
        (dict(keys=[[-1, 2], [1, 0], [0, 1, 5]]), ("keys", 2)),
        (dict(q=[2, 1, 0]), ("keys", 0)),
        (dict(allowed=[False, False, False]), ("allowed",)),
        (dict(allowed=[True, None, True]), ("allowed", 1)),
        (dict(labels=["A", "B", "B"]), ("labels", 2)),
        (dict(values=[[2, 0], [0, 2]]), ("values",)),
        (dict(scale=-1.0), ("scale",)),
        (dict(scale="big"), ("scale",)),
        # derived numbers are located at the input to change
        (dict(q=[1e308, 1e308]), ("q",)),
        (dict(q=[0.0], keys=[[0.0]] * 11, values=[[sys.float_info.max]] * 11), ("values",)),
    ],
)
def test_trace_query_locates_each_error(kwargs, loc):
    with pytest.raises(FieldError) as refused:
        trace_query(**(dict(q=Q, keys=KEYS, values=VALUES) | kwargs))
    assert refused.value.loc == loc
    assert not refused.value.problem.startswith(refused.value.field)  # the problem never names its field


def _params(d_model=12, width=12):
    rng = np.random.default_rng(0)
    w_q, w_k, w_v = (rng.standard_normal((d_model, width)) for _ in range(3))
    return AttentionParams(w_q=w_q, w_k=w_k, w_v=w_v, w_o=rng.standard_normal((width, d_model)))


def _cache_then_wrong_width():
    cache = KVCache()
    cache.append(np.ones((2, 3, 4)), np.ones((2, 3, 4)))
    cache.append(np.ones((3, 1, 4)), np.ones((3, 1, 4)))


X = np.ones((5, 12))
q3, k3, v3 = np.ones((4, 3)), np.ones((6, 3)), np.ones((6, 2))


@pytest.mark.parametrize(
    ("call", "loc"),
    [
        (lambda: attention("abc", k3, v3), ("q",)),
        (lambda: attention(q3, k3, np.ones((6,))), ("v",)),
        (lambda: attention(q3, np.ones((6, 4)), v3), ("q",)),
        (lambda: attention(q3, k3, np.ones((5, 2))), ("k",)),
        (lambda: attention(q3, k3, np.full((6, 2), np.nan)), ("v",)),
        (lambda: attention(q3, k3, v3, causal="diagonal"), ("causal",)),
        (lambda: attention(q3, k3, v3, mask=np.ones((3, 6), bool)), ("mask",)),
        (lambda: attention(q3, k3, v3, mask=np.full((4, 6), np.nan)), ("mask",)),
        (lambda: attention(q3, k3, v3, key_padding_mask=np.ones(6)), ("key_padding_mask",)),
        (lambda: attention(q3, k3, v3, scale=float("inf")), ("scale",)),
        (lambda: attention(np.ones((2, 4, 3)), np.ones((3, 6, 3)), np.ones((3, 6, 2))), ("k",)),
        (lambda: attention(np.ones((3, 4, 3)), np.ones((2, 6, 3)), np.ones((2, 6, 2)), enable_gqa=True),
         ("q",)),
        (lambda: tiled_attention(q3, k3, v3, block_q=0), ("block_q",)),
        (lambda: tiled_attention(q3, k3, v3, backend="cuda"), ("backend",)),
        (lambda: multi_head_attention(X, _params(), n_head=5), ("n_head",)),
        (lambda: multi_head_attention(X, _params(d_model=10), n_head=4), ("w_q",)),
        (lambda: multi_head_attention(X, _params(), n_head=4, n_kv_head=0), ("n_kv_head",)),
        (lambda: multi_head_attention(X, _params(), n_head=4, context=X, rope=RoPE(head_dim=4)),
         ("context",)),
        (lambda: RoPE(head_dim=3), ("head_dim",)),
        (lambda: RoPE(head_dim=4, convention="neox"), ("convention",)),
        (lambda: embed(np.ones((10, 4)), [0, 10], field="positions"), ("positions",)),
        (_cache_then_wrong_width, ("k",)),
    ],
)
def test_array_engine_locates_each_error_at_its_argument(call, loc):
    with pytest.raises(FieldError) as refused:
        call()
    assert refused.value.loc == loc
    assert str(refused.value).startswith(refused.value.field + " ")
    assert not refused.value.problem.startswith(refused.value.field + " ")  # the problem never names it
