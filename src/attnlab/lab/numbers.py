"""Display rounding shared by everything that shows numbers.

Three decimals as on the page (0.576, 1.414, 14%), trailing zeros trimmed,
computed with Python's ``round`` so the page, the words and the generated
program's ``show`` print the same strings. ``precise`` is the full-precision
form (shortest round-tripping repr, ``-0`` kept, ``.0`` trimmed).
"""

from __future__ import annotations

from collections.abc import Iterable

MINUS = "\u2212"


def _trim(text: str) -> str:
    return text[:-2] if text.endswith(".0") else text


def precise(x: float) -> str:
    """Return ``x`` at full precision: ``float(precise(x)) == x``, -0.0 kept."""
    return _trim(repr(float(x)))


def rounded(x: float, digits: int = 3) -> str:
    """Return ``x`` rounded to ``digits`` decimals with trailing zeros trimmed.

    A value that rounds to zero prints ``0``, -0.0 included: a rounded
    display never shows ``-0`` (``precise`` keeps the sign).
    """
    r = round(float(x), digits)
    if r == 0.0:
        return "0"
    return _trim(repr(r))


def percent(w: float) -> str:
    """Return a share as a whole percentage; never '0%' or '100%' when it is not."""
    p = round(float(w) * 100)
    if p == 0 and w > 0.0:
        return "<1%"
    if p == 100 and w < 1.0:
        return ">99%"
    return f"{p}%"


def vector(xs: Iterable[float], digits: int = 3) -> str:
    """Return a list as the page writes it: ``[-0.004, 0.868]``."""
    return "[" + ", ".join(rounded(x, digits) for x in xs) + "]"


def precise_vector(xs: Iterable[float]) -> str:
    """Return a list at full precision: ``[0.28005849008675604, 0]``."""
    return "[" + ", ".join(precise(x) for x in xs) + "]"


def point(xs: Iterable[float], digits: int = 3) -> str:
    """Return coordinates as the page's prose writes them: ``(−1, 2)``."""
    return "(" + ", ".join(rounded(x, digits).replace("-", MINUS) for x in xs) + ")"
