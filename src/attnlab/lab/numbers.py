"""Display rounding shared by everything that shows numbers.

Three decimals as on the page (0.576, 1.414, 14%), trailing zeros trimmed,
computed with Python's ``round`` so the page, the words and the generated
program's ``show`` print the same strings. ``precise`` is the full-precision
form (shortest round-tripping repr, ``-0`` kept, ``.0`` trimmed).
"""

from __future__ import annotations

import math
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


def significant(x: float, digits: int = 3) -> str:
    """Return a factor as the page writes it: like :func:`rounded` from 0.1 up (``0.5``,
    ``0.707``, ``1000000``), below that to ``digits`` significant digits (``0.05``,
    ``0.0005``, ``1e-09``), so a small factor such as a scale never shows as ``0``.
    """
    x = float(x)
    if x == 0.0 or abs(x) >= 0.1 or not math.isfinite(x):
        return rounded(x, digits)
    return f"{x:.{digits}g}"


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


def tick(x: float) -> str:
    """Return a grid line's or an axis end's number: ``−3``, ``4.5``, ``2e5`` (e-notation from 1e5,
    its mantissa shortest), with a true minus sign."""
    x = float(x)
    if abs(x) >= 1e5 and math.isfinite(x):
        mantissa, _, exponent = f"{x:.15e}".partition("e")
        text = f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    else:
        text = rounded(x)
    return text.replace("-", MINUS)


def scientific(x: float, digits: int = 2) -> str:
    """Return ``x`` with ``digits`` significant digits in scientific notation: ``2.2e-16``, ``1e-15``.

    Zero prints ``0``.
    """
    if x == 0.0:
        return "0"
    mantissa, _, exponent = f"{float(x):.{digits - 1}e}".partition("e")
    return f"{_trim(mantissa)}e{int(exponent)}"
