"""Standalone SVG drawings of the key space and the value space, for export.

Coordinates: one grid interval is 1 unit on both axes (equal units), y points
up. The view fits every drawn point plus the origin with a margin of one unit,
rounded out to whole units. Colours follow the page (amber q, ink keys, teal
output) and every mark also has a text label, so colour carries no meaning
alone. Labels are XML-escaped. The numbers drawn are the trace's; this module
only maps them to pixels.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from attnlab.engine.errors import FieldError
from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt

UNIT = 48  # pixels per coordinate unit
AMBER, INK, TEAL, GRID = "#b45309", "#1f2937", "#0f766e", "#d1d5db"
SOURCE_COLOURS = ("#7c3aed", "#2563eb", "#db2777", "#65a30d", "#ea580c", "#0891b2")


class _Canvas:
    def __init__(self, *, points: list, title: str) -> None:
        xs = [p[0] for p in points] + [0.0]
        ys = [p[1] for p in points] + [0.0]
        self.x0, self.x1 = math.floor(min(xs)) - 1, math.ceil(max(xs)) + 1
        self.y0, self.y1 = math.floor(min(ys)) - 1, math.ceil(max(ys)) + 1
        self.width = (self.x1 - self.x0) * UNIT
        self.height = (self.y1 - self.y0) * UNIT
        self.parts = [f"<title>{escape(title)}</title>", self._grid()]

    def px(self, p) -> tuple[float, float]:
        return (round((p[0] - self.x0) * UNIT, 3), round((self.y1 - p[1]) * UNIT, 3))

    def _grid(self) -> str:
        lines = []
        for x in range(self.x0, self.x1 + 1):
            w = 1.5 if x == 0 else 0.75
            sx = (x - self.x0) * UNIT
            lines.append(f'<line x1="{sx}" y1="0" x2="{sx}" y2="{self.height}" stroke-width="{w}"/>')
        for y in range(self.y0, self.y1 + 1):
            w = 1.5 if y == 0 else 0.75
            sy = (self.y1 - y) * UNIT
            lines.append(f'<line x1="0" y1="{sy}" x2="{self.width}" y2="{sy}" stroke-width="{w}"/>')
        return f'<g stroke="{GRID}">' + "".join(lines) + "</g>"

    def line(self, a, b, colour: str, *, dashed: bool = False, width: float = 2) -> None:
        (x1, y1), (x2, y2) = self.px(a), self.px(b)
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        self.parts.append(
            f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" '
            f'stroke-width="{width}"{dash}/>'
        )

    def dot(self, p, colour: str, label: str, *, r: float = 5) -> None:
        x, y = self.px(p)
        self.parts.append(f'<circle cx="{x}" cy="{y}" r="{r}" fill="{colour}"/>')
        self.parts.append(
            f'<text x="{x + 8}" y="{y - 8}" fill="{colour}" font-size="14" '
            f'font-family="sans-serif">{escape(label)}</text>'
        )

    def polygon(self, points, colour: str) -> None:
        coords = " ".join(f"{x},{y}" for x, y in (self.px(p) for p in points))
        self.parts.append(
            f'<polygon points="{coords}" fill="{colour}" fill-opacity="0.08" stroke="{colour}" '
            'stroke-opacity="0.5"/>'
        )

    def svg(self) -> str:
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
            f'height="{self.height}" viewBox="0 0 {self.width} {self.height}" role="img">'
            f'<rect width="{self.width}" height="{self.height}" fill="#ffffff"/>'
            + "".join(self.parts)
            + "</svg>\n"
        )


def _colour(i: int) -> str:
    return SOURCE_COLOURS[i % len(SOURCE_COLOURS)]


def key_space_svg(trace: QueryTrace) -> str:
    """Draw q (amber), the keys (ink) and q's projection onto each key (dashed)."""
    if trace.d_k != 2:
        raise FieldError("q", f"q has {trace.d_k} coordinates; the key plane needs 2")
    c = _Canvas(
        points=[trace.q, *trace.keys],
        title=f"Key space: q = {fmt.vector(trace.q)} and the keys of "
        + ", ".join(trace.labels),
    )
    for i, (label, k) in enumerate(zip(trace.labels, trace.keys)):
        c.line((0, 0), k, INK)
        kk = k[0] * k[0] + k[1] * k[1]
        if kk > 0:
            f = trace.dots[i] / kk
            c.line(trace.q, (f * k[0], f * k[1]), _colour(i), dashed=True, width=1.5)
        c.dot(k, INK, f"k_{label}")
    c.line((0, 0), trace.q, AMBER, width=3)
    c.dot(trace.q, AMBER, "q", r=7)
    return c.svg()


def value_space_svg(trace: QueryTrace) -> str:
    """Draw the values, the hull of the allowed ones, the carries tip to tail and o (teal)."""
    if trace.d_v != 2:
        raise FieldError("values", f"values have {trace.d_v} coordinates; the value plane needs 2")
    c = _Canvas(
        points=[*trace.values, trace.output],
        title=f"Value space: output o = {fmt.vector(trace.output)}",
    )
    allowed = [v for v, ok in zip(trace.values, trace.allowed) if ok]
    if len(allowed) >= 3:
        c.polygon(allowed, TEAL)
    elif len(allowed) == 2:
        c.line(allowed[0], allowed[1], TEAL, width=1)
    tip = (0.0, 0.0)
    for i, carry in enumerate(trace.carries):
        if trace.allowed[i]:
            end = (tip[0] + carry[0], tip[1] + carry[1])
            c.line(tip, end, _colour(i), width=3)
            tip = end
    for i, (label, v) in enumerate(zip(trace.labels, trace.values)):
        note = "" if trace.allowed[i] else " (blocked)"
        c.dot(v, _colour(i), f"v_{label}{note}")
    c.dot(trace.output, TEAL, "o", r=7)
    return c.svg()
