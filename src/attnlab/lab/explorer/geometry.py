"""The explorer's geometry, computed in Python so the page only draws it.

Everything here reads a :class:`~attnlab.engine.single.QueryTrace` and never
recomputes attention:

- ``projection``: where q lands along each key, ``((q·k) / (k·k)) k``, with
  both dot products as ordered sums from 0.0 (``None`` for a zero key, or when
  the numbers overflow);
- ``tip_to_tail``: the allowed sources' carries ``w_i v_i`` laid end to end in
  source order; each tip is an ordered partial sum from 0.0, so the last tip is
  the engine's output bit for bit;
- ``convex_hull``: the hull of the allowed values (the shape the output can
  never leave: a point, a segment, a triangle for three, a polygon for more),
  counter-clockwise, for 2-D values;
- ``pie``: each allowed source's slice as [start, end) fractions of the whole,
  ordered partial sums of the weights;
- ``plane_view`` / ``score_axis``: the square, equal-unit windows and the score
  axis that fit what is drawn, with a grid step of 1 unit while that stays
  readable;
- ``off_plot``: the points a window cannot hold (beyond ``DRAW_LIMIT`` or not
  finite), each with the spot on the window's edge where the ray from the
  origin towards it leaves the plane. The page draws a marker there and a
  note, so a plane is never blank and never shows an old point.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from attnlab.engine.single import QueryTrace, ordered_sum
from attnlab.lab.explorer.compare import reference_query
from attnlab.lab.limits import MAX_MAGNITUDE
from attnlab.lab.numbers import tick

Point = tuple[float, ...]

# A plane never shows more than this many grid intervals across, and numbers at most this many per axis.
MAX_GRID_LINES = 24
MAX_TICKS = 6
# The key plane always spans at least -KEY_MIN_HALF..KEY_MIN_HALF so q has room.
KEY_MIN_HALF = 4.0
VALUE_MIN_HALF = 2.0
# Coordinates beyond this are drawn as off-plot markers, not fitted. It is the
# lab's one input limit (lab.limits.MAX_MAGNITUDE), so whatever the lab accepts
# is drawn in full; the markers are the safety net for traces built without
# that check (a real model's row, say: a plane is then still never blank).
DRAW_LIMIT = MAX_MAGNITUDE


def _finite(xs: Iterable[float]) -> bool:
    return all(math.isfinite(x) for x in xs)


def projection(q: Sequence[float], k: Sequence[float]) -> Point | None:
    """Return the point ``((q·k) / (k·k)) k`` on key ``k``'s line, or None.

    None means the projection does not exist (a zero key) or would not be
    finite (coordinates so large that k·k overflows).
    """
    kk = ordered_sum(kj * kj for kj in k)
    if kk == 0.0 or not math.isfinite(kk):
        return None
    t = ordered_sum(qj * kj for qj, kj in zip(q, k)) / kk
    point = tuple(t * kj for kj in k)
    return point if math.isfinite(t) and _finite(point) else None


def tip_to_tail(trace: QueryTrace) -> list[dict]:
    """Return one arrow per allowed source: ``{"index", "start", "end"}``.

    Arrows follow source order; ``start`` of the first is the origin and each
    ``end`` is the ordered partial sum of the carries so far.
    """
    tip = [0.0] * trace.d_v
    arrows = []
    for i in trace.allowed_indices:
        start = list(tip)
        tip = [t + c for t, c in zip(tip, trace.carries[i])]
        arrows.append({"index": i, "start": start, "end": list(tip)})
    return arrows


def _cross(o: Point, a: Point, b: Point) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def convex_hull(points: Iterable[Sequence[float]]) -> list[list[float]]:
    """Return the 2-D convex hull counter-clockwise (Andrew's monotone chain).

    Duplicates collapse; collinear points give the two ends of the segment,
    a single point gives itself.
    """
    pts = sorted({(float(p[0]), float(p[1])) for p in points})
    if len(pts) <= 2:
        return [list(p) for p in pts]
    lower: list[Point] = []
    for p in pts:
        while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[Point] = []
    for p in reversed(pts):
        while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return [list(p) for p in lower[:-1] + upper[:-1]]


def pie(trace: QueryTrace) -> list[dict]:
    """Return ``{"index", "start", "end"}`` fractions for each allowed source."""
    slices = []
    at = 0.0
    for i in trace.allowed_indices:
        end = at + trace.weights[i]
        slices.append({"index": i, "start": at, "end": end})
        at = end
    return slices


def _nice_step(span: float) -> float:
    """Return 1, or the smallest 1/2/5 x 10^k keeping <= MAX_GRID_LINES intervals."""
    if span <= MAX_GRID_LINES:
        return 1.0
    raw = span / MAX_GRID_LINES
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if factor * power >= raw:
            return factor * power
    return 10.0 * power  # pragma: no cover - the loop always returns


def plane_view(points: Iterable[Sequence[float]], *, min_half: float, centered: bool = False) -> dict | None:
    """Return a square window ``{"xmin","xmax","ymin","ymax","step"}`` around ``points``.

    The window contains every point and the origin with at least half a unit
    of margin, spans at least ``2 * min_half`` and its edges sit on the grid
    (multiples of ``step``). Equal units on both axes: it is a square.
    ``centered`` puts the origin in the middle. None when the points are not
    2-D or not finite.
    """
    pts = [(float(p[0]), float(p[1])) for p in points if len(p) == 2]
    pts.append((0.0, 0.0))
    if not _finite(c for p in pts for c in p):
        return None
    xmin = min(p[0] for p in pts) - 0.5
    xmax = max(p[0] for p in pts) + 0.5
    ymin = min(p[1] for p in pts) - 0.5
    ymax = max(p[1] for p in pts) + 0.5
    if centered:
        cx = cy = 0.0
        half = max(min_half, -xmin, xmax, -ymin, ymax)
    else:
        cx, cy = (xmin + xmax) / 2, (ymin + ymax) / 2
        half = max(min_half, (xmax - xmin) / 2, (ymax - ymin) / 2)
    if not math.isfinite(half) or half > 1e150:
        return None
    step = _nice_step(2 * half)
    x0 = math.floor((cx - half) / step) * step
    y0 = math.floor((cy - half) / step) * step
    size = math.ceil(max(cx + half - x0, cy + half - y0) / step) * step
    view = {"xmin": x0, "xmax": x0 + size, "ymin": y0, "ymax": y0 + size, "step": step}
    return {**view, "ticks": ticks(view)}


def ticks(view: dict) -> dict:
    """Return the numbered grid lines of a window: ``{"x": [...], "y": [...]}``, each
    ``{"at", "text"}`` (a multiple of ``step`` and its number, :func:`attnlab.lab.numbers.tick`).

    Every n-th line is numbered, so at most ``MAX_TICKS`` per axis and 0 whenever it is on the
    grid; the y axis leaves out its bottom line (the x numbers stand there).
    """
    step = view["step"]
    count = round((view["xmax"] - view["xmin"]) / step)
    every = math.ceil((count + 1) / MAX_TICKS)  # count + 1 lines, every n-th numbered

    def numbered(lo: float, skip_first: bool) -> list[dict]:
        out = []
        for i in range(1 if skip_first else 0, count + 1):
            k = round(lo / step) + i  # lo sits on the grid: the line's value is k * step
            if k % every == 0:
                out.append({"at": k * step, "text": tick(k * step)})
        return out

    return {"x": numbered(view["xmin"], False), "y": numbered(view["ymin"], True)}


def drawable(p: Sequence[float]) -> bool:
    """True for a finite 2-D point within ``DRAW_LIMIT`` on both axes."""
    return len(p) == 2 and _finite(p) and max(abs(c) for c in p) <= DRAW_LIMIT


def inside(view: dict, p: Sequence[float]) -> bool:
    return view["xmin"] <= p[0] <= view["xmax"] and view["ymin"] <= p[1] <= view["ymax"]


def edge_point(view: dict, p: Sequence[float]) -> list[float] | None:
    """Where the ray from the origin towards ``p`` leaves ``view`` (None for NaN or 0).

    Infinite coordinates point along their sign; the origin is always inside
    the view, so the ray leaves it at one point.
    """
    if any(math.isnan(c) for c in p):
        return None
    if any(math.isinf(c) for c in p):
        p = [math.copysign(1.0, c) if math.isinf(c) else 0.0 for c in p]
    t = math.inf
    for c, lo, hi in ((p[0], view["xmin"], view["xmax"]), (p[1], view["ymin"], view["ymax"])):
        if c > 0:
            t = min(t, hi / c)
        elif c < 0:
            t = min(t, lo / c)
    if not math.isfinite(t):
        return None
    return [t * p[0], t * p[1]]


def off_plot(view: dict | None, named: Iterable[tuple[str, int | None, Sequence[float]]]) -> list[dict]:
    """Return ``{"kind", "index", "edge"}`` for each named point ``view`` cannot hold."""
    if view is None:
        return []
    out = []
    for kind, index, p in named:
        if not (drawable(p) and inside(view, p)):
            out.append({"kind": kind, "index": index, "edge": edge_point(view, p)})
    return out


def key_view(trace: QueryTrace) -> dict | None:
    """Return the key plane's window: centred, fitting the keys and q = [2, 1].

    It does not follow q while q stays inside it, so the plane holds still
    under a drag; a q typed outside it widens the window to include q. Keys
    or a q beyond ``DRAW_LIMIT`` are left out of the fit (see ``off_plot``).
    """
    base = [k for k in trace.keys if drawable(k)] + [reference_query(trace.d_k)]
    view = plane_view(base, min_half=KEY_MIN_HALF, centered=True)
    if view is None:
        return None
    if not drawable(trace.q) or inside(view, trace.q):
        return view
    return plane_view([*base, trace.q], min_half=KEY_MIN_HALF, centered=True)


def score_axis(scores: Sequence[float]) -> list[float]:
    """Return a symmetric axis ``[-b, b]`` for the scaled scores (b a multiple of 1.5, >= 4.5)."""
    top = max(abs(s) for s in scores)
    bound = max(4.5, math.ceil(top / 1.5) * 1.5)
    return [-bound, bound]


def geometry(trace: QueryTrace, *, reference: QueryTrace | None = None) -> dict:
    """Return everything the two planes, the pie and the strips draw.

    ``reference`` (the same inputs with q = [2, 1]) adds its pie (the dashed
    boundaries) and puts its output in the value view so the hollow ring stays
    in frame (the key view always holds q = [2, 1]).
    """
    allowed_values = [trace.values[i] for i in trace.allowed_indices]
    value_points = [*trace.values, trace.output]
    if reference is not None:
        value_points.append(reference.output)
    # The tip-to-tail path can wander outside the values' box when carries
    # point different ways, so the value view fits every tip as well.
    arrows = tip_to_tail(trace)
    value_points.extend(a["end"] for a in arrows)
    kview = key_view(trace) if trace.d_k == 2 else None
    drawn = [p for p in value_points if drawable(p)]
    vview = plane_view(drawn, min_half=VALUE_MIN_HALF) if trace.d_v == 2 else None
    key_named = [("q", None, trace.q), *(("key", i, k) for i, k in enumerate(trace.keys))]
    value_named = [("output", None, trace.output), *(("value", i, v) for i, v in enumerate(trace.values))]
    return {
        "projections": [None if (p := projection(trace.q, k)) is None else list(p) for k in trace.keys],
        "arrows": arrows,
        "hull": convex_hull(allowed_values) if trace.d_v == 2 else None,
        "pie": pie(trace),
        "reference_pie": None if reference is None else pie(reference),
        "key_view": kview,
        "value_view": vview,
        "key_off": off_plot(kview, key_named),
        "value_off": off_plot(vview, value_named),
        "score_axis": (axis := score_axis(trace.scores)),
        "score_ticks": [tick(end) for end in axis],
    }
