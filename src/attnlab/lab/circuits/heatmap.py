"""A grid of numbers drawn as coloured cells (layers × heads, layers × positions), with every
cell's printed value and its hover words.

``grid(values, ...)``: ``values`` (R, C) float, NaN where a cell has no number (a patch not
computed, a score a head does not have). ``scale`` says how the page colours a value:

- ``"share"``: a share in [0, 1], ink growing with it (the Real model view's square-root ink);
- ``"signed"``: a signed number; ``limit`` is the value drawn at full colour, blue above 0,
  red below (beyond ±limit drawn as ±limit).

The page maps a value to a colour and places the strings; it formats nothing. ``hows`` (when
given) holds each cell's number descriptor for "How is this computed?" (``lab/realmodel/program``'s
``{"kind", ...fields}``), ``None`` where the cell has no number. A cell whose words state numbers
of their own (a patch's metric beside its fraction) writes them as parts (``lab/circuits/marks``):
``pieces`` then holds each cell's words as the page places them under the map once the cell is
picked, its numbers marked (``None`` where a cell's words mark none).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.marks import joined, pieces
from attnlab.lab.said import said

Words = Callable[[int, int, float | None], str]
Parts = Callable[[int, int, float | None], str | list]  # a string, or parts with marked numbers


def finite_or_none(x: float) -> float | None:
    """``x`` as a float, or None where it is NaN (JSON has no NaN)."""
    return None if not np.isfinite(x) else float(x)


def grid(
    values: np.ndarray,
    *,
    rows: Sequence[str],
    columns: Sequence[str],
    cell: Words,
    title: Parts,
    scale: str,
    limit: float = 1.0,
    legend: dict,
    label: str,
    how: Callable[[int, int], dict | None] | None = None,
) -> dict:
    """JSON-ready grid: per cell the value (``None`` where NaN), the text it shows and its hover title.

    ``cell(i, j, v)`` and ``title(i, j, v)`` write cell (i, j) (``v`` None where NaN); ``title``
    may answer parts (strings and numbers, ``marks.number``) for words whose numbers are marked;
    ``legend``: a sentence (with claims) saying what the colours mean; ``label``: the
    picture's name for screen readers.
    """
    v = np.asarray(values, dtype=np.float64)
    out_values, cells, titles, marked = [], [], [], []
    for i in range(v.shape[0]):
        row = [finite_or_none(x) for x in v[i]]
        out_values.append(row)
        cells.append([cell(i, j, x) for j, x in enumerate(row)])
        words = [title(i, j, x) for j, x in enumerate(row)]
        titles.append([w if isinstance(w, str) else joined(w) for w in words])
        placed = [None if isinstance(w, str) else pieces(w) for w in words]
        marked.append([p if p and any(not isinstance(x, str) for x in p) else None for p in placed])
    out = {
        "rows": list(rows),
        "columns": list(columns),
        "values": out_values,
        "cells": cells,
        "titles": titles,
        "scale": scale,
        "limit": float(limit),
        "legend": legend,
        "label": label,
    }
    if any(p is not None for row in marked for p in row):
        out["pieces"] = marked
    if how is not None:
        out["hows"] = [[how(i, j) if out_values[i][j] is not None else None for j in range(v.shape[1])]
                       for i in range(v.shape[0])]  # fmt: skip
    return out


def signed(x: float, digits: int = 3) -> str:
    """A signed number as the page prints a contribution: ``+5.21``, ``−0.4``, ``0``."""
    text = fmt.rounded(x, digits)
    if text == "0":
        return text
    return "+" + text if x > 0 else text.replace("-", fmt.MINUS)


def signed_legend(limit: float, *, above: str, below: str, blank: str | None = None) -> dict:
    """The colours of a signed grid: ``above`` (blue) and ``below`` (red) 0, full at ±``limit``."""
    at = fmt.rounded(limit, 3)
    text = f"Blue: {above}; red: {below}; white: 0. Full colour at ±{at} (beyond it, drawn as ±{at})."
    if blank:
        text += f" Blank: {blank}."
    return said(text, limit=float(limit), blank=blank is not None)


def share_legend(what: str, *, blank: str | None = None) -> dict:
    """The ink of a share grid: darker = larger ``what`` (0 faint, 1 full)."""
    text = f"Darker = higher {what}, from 0 (faint) to 1 (full ink; the ink grows with the square root)."
    if blank:
        text += f" Blank: {blank}."
    return said(text, limit=1.0, blank=blank is not None)
