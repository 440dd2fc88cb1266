"""The exact one-query engine: the page's worked example, properties, bad input."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.errors import FieldError
from attnlab.engine.single import (
    MAX_DIM,
    MAX_SOURCES,
    default_labels,
    ordered_sum,
    trace_query,
)

Q = [2, 1]
KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]


def test_worked_example_holds_exactly():
    t = trace_query(Q, KEYS, VALUES)
    assert t.labels == ("A", "B", "C")
    assert t.dots == (0.0, 2.0, 1.0)
    assert t.scores == (0.0, 1.414213562373095, 0.7071067811865475)
    assert t.m == 1.414213562373095
    assert t.z == 1.736185425829454
    assert t.weights == (0.14002924504337802, 0.575975345215362, 0.28399540974126003)
    assert t.carries == (
        (0.28005849008675604, 0.0),
        (0.0, 1.151950690430724),
        (-0.28399540974126003, -0.28399540974126003),
    )
    assert t.output == (-0.00393691965450399, 0.8679552806894639)
    assert t.exps == tuple(math.exp(s - t.m) for s in t.scores)
    assert t.blocked == () and t.underflowed == ()
    assert (t.d_k, t.d_v, t.n_sources) == (2, 2, 3)


def test_trace_is_immutable():
    t = trace_query(Q, KEYS, VALUES)
    with pytest.raises(AttributeError):
        t.weights = (1.0, 0.0, 0.0)  # type: ignore[misc]


def test_negative_zero_in_inputs_is_kept():
    t = trace_query([-0.0, 1.0], [[-0.0, 1.0], [1.0, 0.0]], [[-0.0, 2.0], [1.0, 1.0]])
    assert math.copysign(1.0, t.q[0]) == -1.0
    assert math.copysign(1.0, t.keys[0][0]) == -1.0
    assert math.copysign(1.0, t.values[0][0]) == -1.0
    assert t.to_dict()["q"][0] == 0.0 and math.copysign(1, t.to_dict()["q"][0]) == -1


def test_sums_run_left_to_right_from_zero():
    # (1e16 + 1) - 1e16 is 0 left to right, 1 in another order: the engine must give 0.
    t = trace_query([1.0, 1.0, 1.0], [[1e16, 1.0, -1e16]], [[1.0]], scale=1.0)
    assert t.dots == (ordered_sum([1e16, 1.0, -1e16]),)
    assert t.dots == (0.0,)


def test_default_scale_divides_by_sqrt_dk_and_explicit_scale_multiplies():
    t = trace_query([3.0, 0.0, 0.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[1.0], [0.0]])
    assert t.scores == (3.0 / math.sqrt(3), 0.0)
    t2 = trace_query([3.0, 0.0, 0.0], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [[1.0], [0.0]], scale=0.5)
    assert t2.scores == (1.5, 0.0) and t2.scale == 0.5


def test_blocked_sources_are_kept_apart_from_underflow():
    t = trace_query([2, 1], KEYS, VALUES, allowed=[True, True, False])
    assert t.blocked == (2,)
    assert t.weights[2] == 0.0 and t.exps[2] == 0.0 and t.carries[2] == (0.0, 0.0)
    assert t.m == max(t.scores[0], t.scores[1])
    assert t.weights[0] + t.weights[1] == pytest.approx(1.0, abs=1e-15)

    tiny = trace_query([1000.0], [[1.0], [0.0]], [[1.0], [2.0]], scale=1.0)
    assert tiny.weights == (1.0, 0.0)
    assert tiny.underflowed == (1,) and tiny.blocked == ()


def test_labels_default_spreadsheet_style():
    assert default_labels(3) == ("A", "B", "C")
    assert default_labels(28)[25:] == ("Z", "AA", "AB")
    t = trace_query([1.0], [[1.0]] * 3, [[1.0]] * 3, labels=["x", "y", "z"])
    assert t.labels == ("x", "y", "z")


def test_size_limits_are_accepted_at_the_limit():
    t = trace_query([0.5] * MAX_DIM, [[1.0] * MAX_DIM] * MAX_SOURCES, [[1.0] * MAX_DIM] * MAX_SOURCES)
    assert t.n_sources == MAX_SOURCES and t.d_k == MAX_DIM
    assert t.weights == (1 / 64,) * 64


def test_max_sources_lifts_only_the_cap_on_sources():
    keys = [[1.0, 0.0], [0.0, 1.0]] * 128  # 256 sources: a real model's row
    values = [[2.0, 0.0], [0.0, 2.0]] * 128
    with pytest.raises(FieldError, match=r"^keys has 256 sources; the limit is 64$"):
        trace_query([1.0, 2.0], keys, values)  # the explorer's cap by default
    t = trace_query([1.0, 2.0], keys, values, max_sources=256)
    small = trace_query([1.0, 2.0], keys[:2], values[:2])
    assert t.n_sources == 256 and t.scores[:2] == small.scores and t.m == small.m
    assert t.weights[0] == t.weights[254] and t.weights[1] == t.weights[255]
    with pytest.raises(FieldError, match=r"^keys has 256 sources; the limit is 255$"):
        trace_query([1.0, 2.0], keys, values, max_sources=255)
    with pytest.raises(FieldError, match=r"^q has 65 coordinates; the limit is 64$"):
        trace_query([1.0] * 65, [[1.0] * 65] * 100, [[1.0]] * 100, max_sources=256)  # d_k keeps its cap


# --- properties ----------------------------------------------------------------

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw, min_sources=1):
    n = draw(st.integers(min_value=min_sources, max_value=8))
    d_k = draw(st.integers(min_value=1, max_value=5))
    d_v = draw(st.integers(min_value=1, max_value=4))
    q = draw(st.lists(finite, min_size=d_k, max_size=d_k))
    keys = draw(st.lists(st.lists(finite, min_size=d_k, max_size=d_k), min_size=n, max_size=n))
    values = draw(st.lists(st.lists(finite, min_size=d_v, max_size=d_v), min_size=n, max_size=n))
    allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if not any(allowed):
        allowed[draw(st.integers(min_value=0, max_value=n - 1))] = True
    return q, keys, values, allowed


@settings(max_examples=200, deadline=None)
@given(problems())
def test_weights_are_a_distribution_and_output_stays_in_the_hull(problem):
    q, keys, values, allowed = problem
    t = trace_query(q, keys, values, allowed=allowed)
    assert math.fsum(t.weights) == pytest.approx(1.0, abs=1e-15)
    assert all(0.0 <= w <= 1.0 for w in t.weights)
    for j, o in enumerate(t.output):
        coords = [v[j] for v, ok in zip(values, allowed) if ok]
        slack = 1e-12 * max(1.0, max(abs(c) for c in coords))
        assert min(coords) - slack <= o <= max(coords) + slack


dyadic = st.integers(min_value=-20 * 1024, max_value=20 * 1024).map(lambda i: i / 1024)


@settings(max_examples=200, deadline=None)
@given(st.lists(dyadic, min_size=1, max_size=8), dyadic)
def test_adding_a_constant_to_every_score_changes_no_weight(scores, c):
    # With d_k = 1, q = [1] and scale 1 the keys are the scores; dyadic numbers keep
    # the shift itself exact, so only the softmax's own arithmetic is under test.
    values = [[float(i)] for i in range(len(scores))]
    t = trace_query([1.0], [[s] for s in scores], values, scale=1.0)
    shifted = trace_query([1.0], [[s + c] for s in scores], values, scale=1.0)
    assert shifted.scores == tuple(s + c for s in t.scores)
    for w, w2 in zip(t.weights, shifted.weights):
        assert abs(w - w2) <= 1e-15


@settings(max_examples=200, deadline=None)
@given(problems(), st.randoms(use_true_random=False))
def test_permuting_sources_permutes_the_trace(problem, rng):
    q, keys, values, allowed = problem
    n = len(keys)
    order = list(range(n))
    rng.shuffle(order)
    labels = default_labels(n)
    t = trace_query(q, keys, values, labels=labels, allowed=allowed)
    p = trace_query(
        q,
        [keys[i] for i in order],
        [values[i] for i in order],
        labels=[labels[i] for i in order],
        allowed=[allowed[i] for i in order],
    )
    assert p.labels == tuple(t.labels[i] for i in order)
    assert p.dots == tuple(t.dots[i] for i in order)
    assert p.scores == tuple(t.scores[i] for i in order)
    assert p.m == t.m
    # Z and the output are ordered sums, so a permutation may change the last bits.
    for i, src in enumerate(order):
        assert p.weights[i] == pytest.approx(t.weights[src], rel=1e-14, abs=1e-300)
    for o1, o2 in zip(p.output, t.output):
        assert o1 == pytest.approx(o2, rel=1e-12, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(problems(min_sources=2), st.data())
def test_blocked_sources_get_zero_and_do_not_affect_the_output(problem, data):
    q, keys, values, allowed = problem
    if all(allowed):
        allowed[0] = False
        if not any(allowed):
            return
    t = trace_query(q, keys, values, allowed=allowed)
    changed_keys = [k if ok else data.draw(st.lists(finite, min_size=len(k), max_size=len(k)))
                    for k, ok in zip(keys, allowed)]
    changed_values = [v if ok else data.draw(st.lists(finite, min_size=len(v), max_size=len(v)))
                      for v, ok in zip(values, allowed)]
    t2 = trace_query(q, changed_keys, changed_values, allowed=allowed)
    for i, ok in enumerate(allowed):
        if not ok:
            assert t.weights[i] == 0.0 and t.exps[i] == 0.0
            assert all(c == 0.0 for c in t.carries[i])
    assert t2.weights == t.weights
    assert t2.output == t.output
    assert t2.m == t.m and t2.z == t.z


# --- bad input -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(q=[float("nan"), 1]), r"q\[0\] is NaN"),
        (dict(q=[2, float("inf")]), r"q\[1\] is \+inf"),
        (dict(keys=[[-1, 2], [1, -float("inf")], [0, 1]]), r"keys\[1\]\[1\] is -inf"),
        (dict(values=[[2, 0], [0, 2], [-1, float("nan")]]), r"values\[2\]\[1\] is NaN"),
        (dict(q=["2", 1]), r"q\[0\] must be a number, not str"),
        (dict(q=[True, 1]), r"q\[0\] must be a number, not bool"),
        (dict(q=[None, 1]), r"q\[0\] must be a number, not NoneType"),
        (dict(q=[10**400, 1]), r"q\[0\] is too large for a float"),
        (dict(q="2,1"), r"q must be a list of numbers"),
        (dict(keys=[[-1, 2], [1, 0, 3], [0, 1]]), r"keys\[1\] has 3 coordinates; keys\[0\] has 2"),
        (dict(q=[2, 1, 0]), r"keys\[0\] has 2 coordinates; q has 3"),
        (dict(values=[[2, 0], [0, 2]]), r"values has 2 sources; keys has 3"),
        (dict(values=[[2, 0], [0], [-1, -1]]), r"values\[1\] has 1 coordinate; values\[0\] has 2"),  # agrees
        (dict(keys=[], values=[]), r"keys is empty"),
        (dict(q=[]), r"q is empty"),
        (dict(keys=[[1.0, 0.0]] * 65, values=[[1.0, 0.0]] * 65), r"keys has 65 sources; the limit is 64"),
        (dict(q=[1.0] * 65), r"q has 65 coordinates; the limit is 64"),
        (dict(allowed=[False, False, False]), r"allowed blocks every source"),
        (dict(allowed=[True, 1, True]), r"allowed\[1\] must be true or false"),
        (dict(allowed=[True, True]), r"allowed has 2 entries; there are 3 sources"),
        (dict(scale=0.0), r"scale is 0.0; it must be finite and positive"),
        (dict(scale=-1.0), r"scale is -1.0; it must be finite and positive"),
        (dict(scale=float("inf")), r"scale is \+inf"),
        (dict(scale=float("nan")), r"scale is NaN"),
        (dict(labels=["A", "", "C"]), r"labels\[1\] is empty"),
        (dict(labels=["A", "B", "A"]), r"labels\[2\] repeats labels\[0\]"),
        (dict(labels=["A", "B"]), r"labels has 2 entries; there are 3 sources"),
        (dict(labels=["A", 7, "C"]), r"labels\[1\] must be a string, not int"),
        (dict(labels=["A", "B\n", "C"]), r"labels\[1\] contains a control"),
        (dict(labels=["A", "B" * 33, "C"]), r"labels\[1\] has 33 characters; the limit is 32"),
    ],
)
def test_bad_input_names_the_field_and_index(kwargs, message):
    args = dict(q=Q, keys=KEYS, values=VALUES) | kwargs
    with pytest.raises(FieldError, match=message) as refused:
        trace_query(**args)
    # located at the field the message starts with (keys[1][1] is ("keys", 1, 1))
    assert str(refused.value).startswith(refused.value.field + " ")


def test_overflowing_scores_are_refused_at_q():
    with pytest.raises(FieldError, match=r"^q makes the score with keys\[0\] overflow") as refused:
        trace_query([1e308, 1e308], [[1e308, 1e308]], [[1.0]])
    assert refused.value.loc == ("q",)  # the learner's control, not the derived score
    assert refused.value.refs == {"key": ("keys", 0)}  # the derived score's key, as data

