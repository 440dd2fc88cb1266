"""The pictures a connection lab draws, as data: every position already a fraction, every label a string.

The page draws four kinds (``js/connections/pictures.js``) and computes nothing:

- ``heatmap``: a matrix of cells, each with a ``fill`` from 0 to 1 (its ink),
  a ``sign`` (1, -1 or 0) for signed matrices, optional ``blocked`` cells and
  ``text``; ``marks`` outline a row, a column or a box of cells;
- ``lines``: series of points in the unit square (x right, y up), with the
  axes' ticks at fractions and their texts; a ``marker`` at one x;
- ``bars``: labelled bars, each a ``length`` from 0 to 1 and its text;
- ``bands``: one row per query, the interval of keys it sees as fractions,
  beside a reference interval (what it would see without the restriction).

Every picture has an ``id``, a ``title`` and a ``caption`` (the sentence that
says what it shows, for the eye and for a screen reader). Log scales and
nice ticks are chosen here, so the page only multiplies by its pixel size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from attnlab.lab import numbers as fmt


def _ratio(x: float, top: float) -> float:
    return 0.0 if top <= 0.0 else min(1.0, max(0.0, x / top))


def heatmap(
    id: str,
    title: str,
    caption: str,
    rows: Sequence[str],
    cols: Sequence[str],
    values: Sequence[Sequence[float]],
    *,
    signed: bool = False,
    blocked: Sequence[Sequence[bool]] | None = None,
    texts: Sequence[Sequence[str]] | None = None,
    marks: Sequence[dict] = (),
) -> dict:
    """A heatmap of ``values``: ink in proportion to |value| against the largest allowed |value|."""
    cells = [[float(v) for v in row] for row in values]
    allowed = [[not (blocked and blocked[i][j]) for j in range(len(row))] for i, row in enumerate(cells)]
    top = max((abs(v) for row, ok in zip(cells, allowed) for v, a in zip(row, ok) if a), default=0.0)
    return {
        "kind": "heatmap",
        "id": id,
        "title": title,
        "caption": caption,
        "rows": list(rows),
        "cols": list(cols),
        "fill": [
            [_ratio(abs(v), top) if a else 0.0 for v, a in zip(row, ok)] for row, ok in zip(cells, allowed)
        ],
        "sign": [[(v > 0) - (v < 0) for v in row] for row in cells] if signed else None,
        "blocked": [[not a for a in ok] for ok in allowed] if blocked is not None else None,
        "text": [list(r) for r in texts] if texts is not None else None,
        "marks": list(marks),
        "label_every": label_every(rows, cols),
    }


LABEL_ROOM = 45  # characters of label text that fit side by side across a heatmap (and down it)


def label_every(rows: Sequence[str], cols: Sequence[str]) -> int:
    """Label every n-th row and column, so that the labels fit side by side without overlapping."""
    longest = max((len(x) for x in (*rows, *cols)), default=1) + 1
    return max(1, math.ceil(max(len(rows), len(cols)) * longest / LABEL_ROOM))


def mark(kind: str, start: int, stop: int | None = None, *, rows: tuple[int, int] | None = None) -> dict:
    """Outline row ``start`` (``"row"``), column ``start`` (``"col"``), or columns [start, stop)
    of ``rows`` (``"box"``)."""
    out = {"kind": kind, "start": start, "stop": start + 1 if stop is None else stop}
    if rows is not None:
        out["rows"] = list(rows)
    return out


# --- axes -------------------------------------------------------------------------


def _nice_step(span: float, count: int) -> float:
    raw = span / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    for f in (1.0, 2.0, 5.0, 10.0):
        if raw <= f * power:
            return f * power
    return 10.0 * power  # pragma: no cover - the loop always returns


def tick_text(x: float) -> str:
    """A tick's number: whole numbers with thousands separators, others rounded as the page rounds."""
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}".replace("-", fmt.MINUS)
    return fmt.rounded(x).replace("-", fmt.MINUS)


def power_text(e: int) -> str:
    """10 to the power ``e``, written ``10⁶``."""
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return "1" if e == 0 else ("10" if e == 1 else "10" + str(e).translate(sup))


def axis(label: str, lo: float, hi: float, *, log: bool = False, count: int = 5) -> dict:
    """An axis from ``lo`` to ``hi`` (linear, or base-10 log): its ticks at fractions.

    Returns ``{"label", "lo", "hi", "log", "ticks": [{"at", "text"}]}``; :func:`place` maps a value.
    """
    if log:
        lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        hi_e = max(hi_e, lo_e + 1)
        lo, hi = 10.0**lo_e, 10.0**hi_e
        every = max(1, math.ceil((hi_e - lo_e) / 6))
        ticks = [
            {"at": (e - lo_e) / (hi_e - lo_e), "text": power_text(e)} for e in range(lo_e, hi_e + 1, every)
        ]
        return {"label": label, "lo": lo, "hi": hi, "log": True, "ticks": ticks}
    if hi <= lo:
        hi = lo + 1.0
    step = _nice_step(hi - lo, count)
    lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    n = round((hi - lo) / step)
    ticks = [{"at": i / n, "text": tick_text(round(lo + i * step, 12))} for i in range(n + 1)]
    return {"label": label, "lo": lo, "hi": hi, "log": False, "ticks": ticks}


def place(ax: dict, x: float) -> float:
    """Where ``x`` falls on axis ``ax``, from 0 (its low end) to 1 (its high end), clamped."""
    if ax["log"]:
        x = max(x, ax["lo"])
        at = (math.log10(x) - math.log10(ax["lo"])) / (math.log10(ax["hi"]) - math.log10(ax["lo"]))
    else:
        at = (x - ax["lo"]) / (ax["hi"] - ax["lo"])
    return min(1.0, max(0.0, at))


def lines(
    id: str,
    title: str,
    caption: str,
    x: dict,
    y: dict,
    series: Sequence[dict],
    *,
    marker: float | None = None,
    marker_text: str = "",
) -> dict:
    """A line chart: ``series`` are ``{"name", "cls", "xs", "ys"}`` in data units, placed on the
    axes ``x`` and ``y``."""
    placed = []
    for s in series:
        points = [[place(x, a), place(y, b)] for a, b in zip(s["xs"], s["ys"])]
        placed.append({"name": s["name"], "cls": s["cls"], "points": points, "dots": s.get("dots", True)})
    return {
        "kind": "lines",
        "id": id,
        "title": title,
        "caption": caption,
        "x": {"label": x["label"], "ticks": x["ticks"]},
        "y": {"label": y["label"], "ticks": y["ticks"]},
        "series": placed,
        "marker": None if marker is None else {"at": place(x, marker), "text": marker_text},
    }


def bars(
    id: str, title: str, caption: str, items: Sequence[dict], *, log: bool = False, top: float | None = None
) -> dict:
    """Labelled bars: ``items`` are ``{"label", "value", "text", "cls"}`` (``"marked": True`` outlines one).

    A bar's length is its value over the largest (``top`` when given); on a log
    scale, its place between the smallest value's power of ten and the largest's.
    Negative values are drawn to the left of a middle line (``"signed": True``).
    """
    values = [float(it["value"]) for it in items]
    signed = any(v < 0 for v in values)
    if log:
        ax = axis("", min(v for v in values if v > 0), max(values), log=True)
        lengths = [place(ax, v) if v > 0 else 0.0 for v in values]
    else:
        most = top if top is not None else max((abs(v) for v in values), default=0.0)
        lengths = [_ratio(abs(v), most) for v in values]
    out = []
    for it, length, v in zip(items, lengths, values):
        out.append(
            {
                "label": it["label"],
                "length": length,
                "negative": v < 0,
                "text": it["text"],
                "cls": it.get("cls", ""),
                "marked": bool(it.get("marked", False)),
            }
        )
    return {
        "kind": "bars",
        "id": id,
        "title": title,
        "caption": caption,
        "bars": out,
        "signed": signed,
        "log": log,
    }


def bands(
    id: str,
    title: str,
    caption: str,
    n: int,
    seen: Sequence[tuple[int, int]],
    reference: Sequence[tuple[int, int]],
    *,
    row: int | None = None,
    rows_label: str = "",
    cols_label: str = "",
) -> dict:
    """One band per query row: the keys ``[start, stop)`` it sees and its ``reference`` keys,
    as fractions of n."""
    return {
        "kind": "bands",
        "id": id,
        "title": title,
        "caption": caption,
        "rows": n,
        "seen": [[a / n, b / n] for a, b in seen],
        "reference": [[a / n, b / n] for a, b in reference],
        "row": row,
        "rows_label": rows_label,
        "cols_label": cols_label,
    }
