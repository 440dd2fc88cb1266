"""The held A/B/C sequence: mask rules, edit rules, and agreement with a tensor reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine import attention
from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.examples import WORKED, WORKED_SEQUENCE
from attnlab.lab.explorer.sequence import STARTING, MaskRefused
from attnlab.lab.explorer.texts import explorer_label
from attnlab.lab.explorer.view import sequence_view


def engine_attention(held: seq.Held, **kw) -> tuple[list, list]:
    """The tensor engine's attention over the whole sequence: (weights (T, S), outputs (T, d_v))."""
    q, k, v = (np.array(x, dtype=np.float64) for x in (held.queries, held.keys, held.values))
    if not kw:
        kw = {"mask": np.array(held.mask)}  # True = may attend
    result = attention(q, k, v, **kw)
    return result.weights.tolist(), result.output.tolist()


def test_starting_example_is_the_page_sequence():
    assert STARTING.id == "sequence-abc-v1"
    assert STARTING.labels == ("A", "B", "C")
    assert STARTING.queries[0] == WORKED.q == (2.0, 1.0)
    assert STARTING.keys == WORKED.keys
    assert STARTING.values == WORKED.values
    # causal, top-left: row r sees sources 0..r
    assert STARTING.mask == ((True, False, False), (True, True, False), (True, True, True))
    assert (STARTING.row, STARTING.masked) == (0, False)


def test_explorer_starts_on_row0_unmasked_projection_with_the_page_numbers():
    view = sequence_view(STARTING)
    ex = view["explorer"]
    assert ex["label"]["text"] == "Row 0 (A) · unmasked projection"
    assert ex["trace"]["allowed"] == [True, True, True]
    assert ex["trace"]["output"] == [-0.00393691965450399, 0.8679552806894639]
    assert ex["trace"]["weights"] == [0.14002924504337802, 0.575975345215362, 0.28399540974126003]
    assert "not a masked sequence output" in ex["note"]["text"]


def test_masked_rows_equal_the_engines_causal_attention_exactly():
    view = sequence_view(STARTING)
    w, o = engine_attention(STARTING, causal="top_left")
    assert view["weights"] == w
    assert view["outputs"] == o
    assert engine_attention(STARTING) == (w, o)  # the held mask is the causal mask
    # row 0 sees only A: its output is v_A itself
    assert view["outputs"][0] == [2.0, 0.0]


def test_blocked_cells_are_flagged_and_still_scored():
    view = sequence_view(STARTING)
    assert view["blocked"] == [[False, True, True], [False, False, True], [False, False, False]]
    # scores of blocked cells are the dot products / sqrt(2), not a fill value
    assert view["scores"][0][1] == 2.0 / np.sqrt(2)
    assert view["weights"][0][1] == 0.0
    assert view["rows"][0]["weights_text"] == ["100%", "blocked", "blocked"]
    assert view["rows"][1]["scores_text"][2] == "blocked"


floats = st.floats(min_value=-8, max_value=8, allow_nan=False).map(lambda x: round(x, 3))
vec = st.lists(floats, min_size=2, max_size=2)
mask_row = st.lists(st.booleans(), min_size=3, max_size=3).filter(any)


@settings(max_examples=150, deadline=None)
@given(
    queries=st.lists(vec, min_size=3, max_size=3),
    keys=st.lists(vec, min_size=3, max_size=3),
    values=st.lists(vec, min_size=3, max_size=3),
    mask=st.lists(mask_row, min_size=3, max_size=3),
)
def test_masked_rows_match_float64_reference(queries, keys, values, mask):
    held = seq.held_from_dict(
        {"labels": ["A", "B", "C"], "queries": queries, "keys": keys, "values": values,
         "mask": mask}
    )
    view = sequence_view(held)
    w, o = engine_attention(held)
    # The tensor engine computes q @ k^T with BLAS (fused multiply-adds), multiplies by
    # 1/sqrt(d_k) and uses NumPy's exp; the single-query path sums left to right, divides
    # by sqrt(d_k) and uses math.exp. Bit-equal on the starting example (above); on 3,000
    # random examples about half differ in the last bits: the worst absolute difference
    # was 3.1e-15 for weights and 4.7e-15 x max|v| for outputs. Assert 1e-14 of each.
    np.testing.assert_allclose(view["weights"], w, rtol=0, atol=1e-14)
    scale = max(1.0, float(np.max(np.abs(held.values))))
    np.testing.assert_allclose(view["outputs"], o, rtol=0, atol=1e-14 * scale)
    for r in range(3):
        for i in range(3):
            if not mask[r][i]:
                assert view["weights"][r][i] == 0.0


def test_query_edit_returns_to_row0_and_leaves_other_rows_and_mask():
    held = seq.select_row(STARTING, 2)
    assert explorer_label(held)["text"] == "Row 2 (C) · masked row"
    edited = seq.apply_edit(held, {"kind": "query", "q": [3, -1]})
    assert edited.queries == ((3.0, -1.0), STARTING.queries[1], STARTING.queries[2])
    assert (edited.row, edited.masked) == (0, False)
    assert edited.mask == STARTING.mask
    assert edited.values == STARTING.values


def test_value_edit_is_shared_by_every_row_and_keeps_the_view():
    held = seq.select_row(STARTING, 1)
    edited = seq.apply_edit(held, {"kind": "value", "source": 0, "coord": 1, "x": 4})
    assert edited.values[0] == (2.0, 4.0)
    assert (edited.row, edited.masked) == (1, True)
    assert edited.queries == STARTING.queries and edited.mask == STARTING.mask
    before, after = sequence_view(held), sequence_view(edited)
    # every row that allows A sees the new v_A; row 0 outputs it exactly
    assert after["outputs"][0] == [2.0, 4.0]
    for r in (1, 2):
        assert after["outputs"][r] != before["outputs"][r]
        assert after["weights"][r] == before["weights"][r]  # values never change shares


def test_reset_restores_only_the_query_and_first_value_x():
    held = seq.held_from_dict(
        {**STARTING.to_dict(), "queries": [[5, 5], [0, 1], [1, 0]],
         "values": [[9, 8], [7, 6], [5, 4]],
         "mask": [[True, True, False], [False, True, False], [True, False, True]],
         "row": 2, "masked": True}
    )
    out = seq.apply_edit(held, {"kind": "reset"})
    assert out.queries == ((2.0, 1.0), (0.0, 1.0), (1.0, 0.0))
    assert out.values == ((2.0, 8.0), (7.0, 6.0), (5.0, 4.0))
    assert out.mask == held.mask
    assert (out.row, out.masked) == (0, False)


def test_mask_toggle_changes_only_that_cell_and_the_rows_numbers():
    out = seq.apply_edit(STARTING, {"kind": "mask", "row": 2, "source": 0, "allowed": False})
    assert out.mask == ((True, False, False), (True, True, False), (False, True, True))
    view = sequence_view(out)
    _, o = engine_attention(out)
    np.testing.assert_allclose(view["outputs"], o, rtol=0, atol=1e-14)
    assert view["outputs"][:2] == sequence_view(STARTING)["outputs"][:2]


def test_mask_emptying_a_row_is_refused_and_the_mask_kept():
    with pytest.raises(MaskRefused, match=r"row 0 \(A\) with no allowed source.*unchanged") as refused:
        seq.apply_edit(STARTING, {"kind": "mask", "row": 0, "source": 0, "allowed": False})
    assert STARTING.mask[0] == (True, False, False)  # frozen: nothing changed
    assert (refused.value.loc, refused.value.type) == (("edit", "allowed"), "mask_refused")


@pytest.mark.parametrize(
    ("edit", "loc", "message"),
    [
        ({"kind": "query", "q": [1]}, ("edit", "q"), r"^edit\.q has 1 entry; it needs 2"),
        ({"kind": "query", "q": [1, float("nan")]}, ("edit", "q", 1), r"^edit\.q\[1\] is nan"),
        ({"kind": "query", "q": [2e6, 0]}, ("edit", "q", 0), r"^edit\.q\[0\] must be at most 1,000,000$"),
        ({"kind": "value", "source": 3, "coord": 0, "x": 1}, ("edit", "source"), r"^edit\.source is 3"),
        ({"kind": "value", "source": 0, "coord": 0, "x": "2"}, ("edit", "x"), r"^edit\.x must be a number"),
        ({"kind": "values", "values": [[1, 2], [3, 4], [5]]}, ("edit", "values", 2),
         r"^edit\.values\[2\] has 1 entry"),
        ({"kind": "mask", "row": 0, "source": 1, "allowed": 1}, ("edit", "allowed"),
         r"^edit\.allowed must be true or false"),
        ({"kind": "select", "row": -1}, ("edit", "row"), r"^edit\.row is -1"),
        ({"kind": "paint"}, ("edit", "kind"), r"^edit\.kind is 'paint'"),
    ],
)
def test_bad_edits_name_the_field(edit, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        seq.apply_edit(STARTING, edit)
    assert refused.value.loc == loc


@pytest.mark.parametrize(
    ("change", "loc", "message"),
    [
        ({"queries": [[1, 2], [3, 4]]}, ("queries",), "queries has 2 rows; the held example has 3"),
        ({"keys": [[1, 2], [3, 4], [5, "x"]]}, ("keys", 2, 1), r"keys\[2\]\[1\] must be a number"),
        ({"mask": [[False, False, False], [True, True, False], [True, True, True]]}, ("mask", 0),
         r"^mask\[0\] allows no source in row 0 \(A\); a row needs at least one"),
        ({"mask": [[True, 1, True], [True] * 3, [True] * 3]}, ("mask", 0, 1),
         r"mask\[0\]\[1\] must be true or false"),
        ({"labels": ["A", "A", "C"]}, ("labels", 1), r"labels\[1\] repeats"),
        ({"row": 3}, ("row",), "row is 3"),
        ({"values": None}, ("values",), "values must be a list of 3 rows"),
    ],
)
def test_held_from_dict_refuses_bad_examples(change, loc, message):
    with pytest.raises(FieldError, match=message) as refused:
        seq.held_from_dict({**STARTING.to_dict(), **change})
    assert refused.value.loc == loc


def test_an_engine_error_in_a_row_is_located_at_that_rows_query(monkeypatch):
    # Within ±1e6 no score can overflow, so the engine's refusal is simulated: the
    # engine says q (its argument); for row 1 of the held example that is queries[1].
    real = seq.trace_query

    def refuse_row_1(q, keys, values, **kw):
        if list(q) == list(STARTING.queries[1]):
            raise FieldError("q", "makes the score with {key} overflow: q·k is inf", key=("keys", 0))
        return real(q, keys, values, **kw)

    monkeypatch.setattr(seq, "trace_query", refuse_row_1)
    with pytest.raises(FieldError, match=r"^queries\[1\] makes the score with keys\[0\] overflow") as refused:
        seq.held_from_dict(STARTING.to_dict())
    assert (refused.value.loc, refused.value.refs) == (("queries", 1), {"key": ("keys", 0)})


def test_round_trip_through_dict():
    held = seq.apply_edit(STARTING, {"kind": "value", "source": 2, "coord": 0, "x": -0.0})
    again = seq.held_from_dict(held.to_dict())
    assert again == held
    assert str(again.values[2][0]) == "-0.0"


# -- an example of one query: the page's own examples are held examples too ---------------------

one_mask = st.integers(min_value=1, max_value=8).flatmap(
    lambda n: st.tuples(
        st.lists(vec, min_size=n, max_size=n),
        st.lists(vec, min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n).filter(any),
    )
)


@settings(max_examples=100, deadline=None)
@given(example=one_mask, q=vec, scale=st.none() | st.floats(min_value=0.05, max_value=4))
def test_an_example_of_one_query_is_its_trace_and_keeps_its_mask(example, q, scale):
    keys, values, allowed = example
    labels = [f"s{i}" for i in range(len(keys))]
    held = seq.held_from_dict({"labels": labels, "queries": [q], "keys": keys, "values": values,
                               "mask": [allowed], "scale": scale})
    assert not held.sequence
    want = trace_query(q, keys, values, labels=labels, allowed=allowed, scale=scale)
    assert held.explorer_trace() == want
    view = sequence_view(held)
    assert view["outputs"] == [list(want.output)]
    assert view["explorer"]["label"]["text"] == f"Your own example · one query over {len(keys)} source" + (
        "" if len(keys) == 1 else "s")
    moved = seq.apply_edit(held, {"kind": "query", "q": [1, -1]})
    want = trace_query([1, -1], keys, values, labels=labels, allowed=allowed, scale=scale)
    assert moved.explorer_trace() == want  # a query edit keeps the one query's mask
    assert seq.apply_edit(held, {"kind": "reset"}) == STARTING  # Reset: the worked sequence
    assert seq.held_from_dict(held.to_dict()) == held


def test_a_mask_edit_of_one_query_cannot_empty_it():
    held = seq.held_from_dict({"labels": ["x", "y"], "queries": [[1, 0]], "keys": [[1, 0], [0, 1]],
                               "values": [[1, 1], [2, 2]], "mask": [[True, False]]})
    with pytest.raises(MaskRefused, match="would leave the query with no allowed source"):
        seq.apply_edit(held, {"kind": "mask", "row": 0, "source": 0, "allowed": False})
    both = seq.apply_edit(held, {"kind": "mask", "row": 0, "source": 1, "allowed": True})
    assert both.explorer_trace().allowed == (True, True)


@pytest.mark.parametrize(
    ("change", "loc"),
    [
        ({"queries": [[1, 2], [3, 4]]}, ("queries",)),  # 3 sources: 1 query or 3
        ({"labels": [f"s{i}" for i in range(9)]}, ("labels",)),  # at most 8 sources
        ({"queries": [[1, 2]], "mask": STARTING.to_dict()["mask"]}, ("mask",)),  # one mask row per query
        ({"scale": 0}, ("scale",)),
    ],
)
def test_the_shape_of_a_held_example_is_checked_at_its_field(change, loc):
    with pytest.raises(FieldError) as refused:
        seq.held_from_dict({**STARTING.to_dict(), **change})
    assert refused.value.loc == loc


def test_the_worked_sequence_is_declared_once_with_the_worked_example():
    assert STARTING.to_dict() == {**WORKED_SEQUENCE.to_dict(), "row": 0, "masked": False, "scale": None}
    assert WORKED_SEQUENCE.example is WORKED


def test_an_example_of_one_query_named_a_b_c_is_not_taken_for_the_worked_sequence():
    """The own example form starts from the worked labels: practice must still say it does not fit."""
    from attnlab.lab.notebook import practice

    own = seq.held_from_dict({"labels": ["A", "B", "C"], "queries": [[2, 1]], "keys": list(WORKED.keys),
                              "values": list(WORKED.values), "mask": [[True, True, True]]})
    for c in practice.challenges():
        if c.get("by_role"):
            continue
        why = practice.misfit(c, own)
        assert why is not None and "A/B/C" in why, c["id"]
        assert practice.answer(c["id"], own)["text"] == why
