"""The explorer's geometry: projections, tip-to-tail carries, hull, pie, views."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.single import trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.explorer.geometry import (
    convex_hull,
    edge_point,
    geometry,
    off_plot,
    pie,
    plane_view,
    projection,
    score_axis,
    tip_to_tail,
)

coord = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False)
vec2 = st.tuples(coord, coord)


def worked(q=WORKED.q, allowed=None):
    return trace_query(q, WORKED.keys, WORKED.values, allowed=allowed)


def test_projection_of_the_worked_query():
    assert projection((2.0, 1.0), (1.0, 0.0)) == (2.0, 0.0)
    assert projection((2.0, 1.0), (0.0, 1.0)) == (0.0, 1.0)
    assert projection((2.0, 1.0), (-1.0, 2.0)) == (-0.0, 0.0)  # perpendicular
    assert projection((3.0, 4.0), (1.0, 1.0)) == (3.5, 3.5)


def test_projection_of_a_zero_or_huge_key_is_none():
    assert projection((1.0, 1.0), (0.0, 0.0)) is None
    assert projection((1.0, 1.0), (1e200, 1e200)) is None


@given(vec2, vec2)
def test_the_drop_from_q_is_perpendicular_to_the_key(q, k):
    p = projection(q, k)
    if p is None:
        return
    residual = (q[0] - p[0], q[1] - p[1])
    scale = math.hypot(*q) * math.hypot(*k) + 1.0
    assert abs(residual[0] * k[0] + residual[1] * k[1]) <= 1e-12 * scale


def test_tip_to_tail_ends_exactly_at_the_output():
    t = worked()
    arrows = tip_to_tail(t)
    assert arrows[0]["start"] == [0.0, 0.0]
    for a, b in zip(arrows, arrows[1:]):
        assert a["end"] == b["start"]
    assert arrows[-1]["end"] == list(t.output)


@settings(max_examples=60)
@given(vec2, st.lists(st.tuples(vec2, vec2), min_size=1, max_size=6))
def test_tip_to_tail_is_bit_for_bit_the_output(q, sources):
    keys = [k for k, _ in sources]
    values = [v for _, v in sources]
    t = trace_query(q, keys, values)
    assert tip_to_tail(t)[-1]["end"] == list(t.output)


def test_blocked_sources_have_no_arrow_and_no_hull_vertex():
    t = worked(allowed=[True, False, True])
    assert [a["index"] for a in tip_to_tail(t)] == [0, 2]
    assert geometry(t)["hull"] == [[-1.0, -1.0], [2.0, 0.0]]


def test_convex_hull_cases():
    assert convex_hull([(2, 0), (0, 2), (-1, -1)]) == [[-1.0, -1.0], [2.0, 0.0], [0.0, 2.0]]
    assert convex_hull([(0, 0), (1, 1), (2, 2)]) == [[0.0, 0.0], [2.0, 2.0]]
    assert convex_hull([(1, 1), (1, 1)]) == [[1.0, 1.0]]
    square = convex_hull([(0, 0), (1, 0), (1, 1), (0, 1), (0.5, 0.5)])
    assert square == [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]


@settings(max_examples=60)
@given(vec2, st.lists(st.tuples(vec2, vec2), min_size=3, max_size=6))
def test_output_lies_inside_the_hull(q, sources):
    t = trace_query(q, [k for k, _ in sources], [v for _, v in sources])
    hull = convex_hull(t.values)
    if len(hull) < 3:
        return
    o = t.output
    for a, b in zip(hull, hull[1:] + hull[:1]):
        cross = (b[0] - a[0]) * (o[1] - a[1]) - (b[1] - a[1]) * (o[0] - a[0])
        assert cross >= -1e-9 * (1 + max(abs(c) for v in t.values for c in v)) ** 2


def test_pie_slices_run_in_source_order_and_reach_the_whole():
    t = worked()
    slices = pie(t)
    assert [s["index"] for s in slices] == [0, 1, 2]
    assert slices[0]["start"] == 0.0
    assert slices[0]["end"] == t.weights[0]
    assert abs(slices[-1]["end"] - 1.0) <= 1e-15


def test_plane_view_is_square_on_the_grid_and_holds_the_points():
    view = plane_view([(2, 0), (0, 2), (-1, -1)], min_half=2.0)
    assert {k: v for k, v in view.items() if k != "ticks"} == {
        "xmin": -2.0, "xmax": 3.0, "ymin": -2.0, "ymax": 3.0, "step": 1.0
    }  # fmt: skip
    big = plane_view([(300, -10), (0, 40)], min_half=2.0)
    assert big["xmax"] - big["xmin"] == big["ymax"] - big["ymin"]
    assert (big["xmax"] - big["xmin"]) / big["step"] <= 24
    assert big["xmin"] <= 0 and big["xmax"] >= 300 and big["ymin"] <= -10 and big["ymax"] >= 40


@given(st.lists(vec2, min_size=1, max_size=8), st.sampled_from([1.0, 4.0]), st.booleans())
def test_a_window_numbers_at_most_six_grid_lines_per_axis_with_zero_among_them(points, min_half, centered):
    view = plane_view(points, min_half=min_half, centered=centered)
    step, ticks = view["step"], view["ticks"]
    for axis, lo, hi in (("x", view["xmin"], view["xmax"]), ("y", view["ymin"], view["ymax"])):
        at = [t["at"] for t in ticks[axis]]
        assert 1 <= len(at) <= 6 and at == sorted(at)
        assert all(lo <= a <= hi and a / step == round(a / step) for a in at)
        assert 0.0 in at  # the origin is always inside the window, never on its edge
        assert [t["text"] for t in ticks[axis]] == [fmt.tick(a) for a in at]
    assert view["ymin"] not in [t["at"] for t in ticks["y"]]  # the x numbers stand on the bottom line


def test_a_wide_window_numbers_its_lines_in_short_exponents():
    view = plane_view([(3e6, -1e6)], min_half=1.0)
    texts = [t["text"] for t in view["ticks"]["x"]]
    assert "0" in texts and any("e6" in t for t in texts)
    assert all("+" not in t and "-" not in t for t in texts)  # short exponents, true minus signs


def test_key_view_holds_still_under_a_drag_and_grows_for_a_far_query():
    views = {str(geometry(worked(q=(x, y)))["key_view"]) for x in (-3, 0, 3.5) for y in (-3, 2)}
    assert len(views) == 1
    far = geometry(worked(q=(9.0, 1.0)))["key_view"]
    assert far["xmax"] >= 9.0


def test_score_axis():
    assert score_axis([0.0, 1.414, 0.707]) == [-4.5, 4.5]
    assert score_axis([-7.0, 1.0]) == [-7.5, 7.5]


def test_a_huge_q_keeps_the_key_plane_and_is_marked_off_plot():
    """q = [-1e300, 1e300] leaves the window on the keys; q becomes an edge marker."""
    g = geometry(worked(q=(-1e300, 1e300)))
    assert {k: v for k, v in g["key_view"].items() if k != "ticks"} == {
        "xmin": -4.0, "xmax": 4.0, "ymin": -4.0, "ymax": 4.0, "step": 1.0
    }  # fmt: skip
    assert g["key_off"] == [{"kind": "q", "index": None, "edge": [-4.0, 4.0]}]
    assert g["value_off"] == []


def test_huge_values_never_blank_the_value_plane():
    t = trace_query(WORKED.q, WORKED.keys, [(1e308, 0.0), (0.0, 1e308), (1.0, 1.0)])
    g = geometry(t)
    view = g["value_view"]
    assert view is not None and view["xmax"] - view["xmin"] <= 10
    off = {(o["kind"], o["index"]): o["edge"] for o in g["value_off"]}
    assert set(off) == {("output", None), ("value", 0), ("value", 1)}
    # each marker sits on the window's edge, on the ray from the origin
    assert off[("value", 0)][1] == 0.0 and off[("value", 0)][0] == pytest.approx(view["xmax"])
    assert off[("value", 1)][0] == 0.0 and off[("value", 1)][1] == pytest.approx(view["ymax"])
    ox, oy = t.output
    ex, ey = off[("output", None)]
    assert ey == pytest.approx(view["ymax"]) and ex / ey == pytest.approx(ox / oy)


def test_edge_point_and_off_plot_for_infinities_and_nan():
    view = {"xmin": -2.0, "xmax": 3.0, "ymin": -2.0, "ymax": 3.0, "step": 1.0}
    assert edge_point(view, (math.inf, 5.0)) == [3.0, 0.0]
    assert edge_point(view, (-math.inf, -math.inf)) == [-2.0, -2.0]
    assert edge_point(view, (math.nan, 1.0)) is None
    assert off_plot(view, [("q", None, (1.0, 1.0))]) == []
    assert off_plot(view, [("q", None, (1e200, 0.0))]) == [{"kind": "q", "index": None, "edge": [3.0, 0.0]}]
    assert off_plot(None, [("q", None, (1e200, 0.0))]) == []


def test_the_drawing_limit_is_the_labs_input_limit():
    """What the lab accepts (±1,000,000) is drawn in full; only traces past it get markers."""
    from attnlab.lab.explorer.geometry import DRAW_LIMIT
    from attnlab.lab.limits import MAX_MAGNITUDE

    assert DRAW_LIMIT == MAX_MAGNITUDE
    g = geometry(trace_query((1e6, -1e6), WORKED.keys, [(1e6, 0.0), (0.0, 1e6), (-1e6, -1e6)]))
    assert g["key_off"] == [] and g["value_off"] == []
    assert g["key_view"]["xmax"] >= 1e6 and g["value_view"]["xmin"] <= -1e6
