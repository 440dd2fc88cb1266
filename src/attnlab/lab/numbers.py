"""Display rounding shared by everything that shows numbers.

Three decimals as on the page (0.576, 1.414, 14%), trailing zeros trimmed,
computed with Python's ``round`` so the page, the words and the generated
program's ``show`` print the same strings. ``precise`` is the full-precision
form (shortest round-tripping repr, ``-0`` kept, ``.0`` trimmed).

Percentages come in two kinds. A share or probability shown alone is
:func:`percent` (whole percents, two significant digits near 0 and near 100).
A set of shares shown together (a row of attention, a pie, a table's row) is
:func:`percents`: rounded by largest remainder so the shown numbers add up to
exactly 100. A difference said in words is :func:`difference` of the shown
numbers, and a count with its noun is :func:`plural`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from decimal import Decimal

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


SET_DECIMALS = (0, 1, 2)  # a set's precision: whole percents, then tenths, then hundredths
SMALLEST_SIGNIFICANT = 1e-4  # in percent: below it a lone share is written 4.6e-5%, not 0.000046%


def _significant(x: float, digits: int = 2) -> str:
    """``x`` (0 < x < 1, in percent) to ``digits`` significant digits: ``0.50``, ``0.0046``, ``4.6e-5``."""
    mantissa, _, exponent = f"{x:.{digits - 1}e}".partition("e")
    e = int(exponent)
    if x < SMALLEST_SIGNIFICANT:
        return f"{mantissa}e{e}"
    return f"{x:.{digits - 1 - e}f}"


def percent(w: float, decimals: int = 0, significant: int = 2) -> str:
    """Return one share or probability shown alone, in percent: never ``0%`` or ``100%`` when it is not.

    From 1% to 99%, rounded to ``decimals``, trailing zeros trimmed (``14%``; ``93.4%`` with
    one). Below 1%, ``significant`` digits (two: ``0.50%``, ``0.0046%``; below 0.0001% in
    e-notation, ``4.6e-5%``); above 99%, 100 less that many significant digits of what is
    missing (``99.60%``; beyond 99.9999%, ``>99.9999%``). A value outside 0..1 (an interval's
    end) is no share: rounded to ``decimals`` (``-47.1%``). A set of shares shown together is
    :func:`percents`, so that it adds up.
    """
    w = float(w)
    x = 100.0 * w
    if w == 0.0 or w == 1.0:
        return f"{round(x)}%"
    if 1.0 <= x <= 99.0 or not 0.0 < w < 1.0:
        return f"{rounded(x, decimals)}%"
    if x < 1.0:
        return f"{_significant(x, significant)}%"
    missing = 100.0 * (1.0 - w)  # 1 - w is exact here (Sterbenz), 100 - x would not be
    if missing < SMALLEST_SIGNIFICANT:
        return ">99.9999%"
    return f"{100 - Decimal(_significant(missing, significant))}%"


def percent_pair(a: float, b: float) -> tuple[str, str]:
    """Return two probabilities shown side by side (before and after) as :func:`percent` does, with
    more digits, both alike, when that would read the same for two different numbers: ``50.12%`` and
    ``50.13%``, ``0.00461%`` and ``0.00462%``. Equal numbers read the same."""
    if a == b or percent(a) != percent(b):
        return percent(a), percent(b)
    for more in range(1, 17):
        pair = percent(a, more, 2 + more), percent(b, more, 2 + more)
        if pair[0] != pair[1]:
            return pair
    return precise(100 * a) + "%", precise(100 * b) + "%"


def share_units(shares: Sequence[float], decimals: int = 0) -> tuple[list[int], int]:
    """Return a set's shares as whole units of ``10**-d`` percent, and that ``d``.

    ``shares`` are the parts of one whole (non-negative, summing to 1 within 1%, so a float16
    row's rounding passes and a partial set does not; they are divided by their own exact sum).
    Largest remainder (Hamilton's method), in exact integer arithmetic: each share gets the whole
    units of its quota ``share / sum x 100 x 10**d``, and the units left over go one each to the
    largest remainders; a tie in remainder goes to the larger full-precision share, then to the
    earlier index. The units sum to exactly ``100 * 10**d``.

    ``d`` is the first precision from ``decimals`` on (up to the last of ``SET_DECIMALS``, or
    ``decimals`` itself if larger) at which no share that is not 0 gets 0 units and no share
    short of the whole gets them all; past the last, it is the last.
    """
    units, d = _share_units(tuple(float(s) for s in shares), decimals)
    return list(units), d


@functools.lru_cache(maxsize=64)  # a row's views ask for the same set again (each key's hover title)
def _share_units(floats: tuple[float, ...], decimals: int) -> tuple[tuple[int, ...], int]:
    if any(not math.isfinite(x) or x < 0 for x in floats):
        raise ValueError("shares must be finite and not negative")
    # exact: every float is n / 2**k, so over the common denominator 2**K they are whole numbers
    ratios = [x.as_integer_ratio() for x in floats]
    k = max((den.bit_length() for _, den in ratios), default=1) - 1
    parts = [num << (k - den.bit_length() + 1) for num, den in ratios]
    total = sum(parts)
    if total == 0:
        return (0,) * len(parts), decimals
    if abs(total - (1 << k)) * 100 > (1 << k):  # a float16 row sums to 1 within 1e-2
        raise ValueError(f"shares sum to {math.fsum(floats)}, not 1: pass the whole set")
    units: list[int] = []
    d = decimals
    for d in range(decimals, max(decimals, SET_DECIMALS[-1]) + 1):
        whole = 100 * 10**d
        split = [divmod(p * whole, total) for p in parts]  # the quota's whole units and its remainder
        units = [u for u, _ in split]
        order = sorted(range(len(parts)), key=lambda i: (-split[i][1], -parts[i], i))
        for i in order[: whole - sum(units)]:
            units[i] += 1
        if all((u > 0 or p == 0) and (u < whole or p == total) for u, p in zip(units, parts)):
            break
    return tuple(units), d


def _unit_text(units: int, d: int, exact: int) -> str:
    """``units`` of ``10**-d`` percent as text; ``exact``: -1 for a true 0, 1 for the whole, 0 else."""
    if exact:
        return "0%" if exact < 0 else "100%"
    step = Decimal(1).scaleb(-d)
    if units == 0:
        return f"<{step}%"
    if units == 100 * 10**d:
        return f">{100 - step}%"
    return f"{Decimal(units).scaleb(-d)}%"


def percents(shares: Sequence[float], decimals: int = 0) -> list[str]:
    """Return a set of shares (the parts of one whole) as percentages that add up to exactly 100.

    Rounded by largest remainder (:func:`share_units`: ties to the larger full-precision
    share, then to the earlier index), all at one precision: whole percents (``A 34% · B 33%
    · C 33%``) or ``decimals``, or tenths or hundredths when fewer would show a share that is
    not 0 as ``0%`` or one short of the whole as ``100%`` (``A 0.4% · B 99.6%``). A share still
    below a hundredth of a percent shows ``<0.01%`` (its rounded value, 0, and the direction)
    and the one that then holds every unit ``>99.99%``. A share of exactly 0 is ``0%``, the
    whole ``100%``.
    """
    units, d = share_units(shares, decimals)
    nonzero = sum(1 for s in shares if float(s) != 0.0)
    return [
        _unit_text(u, d, -1 if float(s) == 0.0 else 1 if nonzero == 1 else 0) for u, s in zip(units, shares)
    ]


def percent_together(shares: Sequence[float], group: Iterable[int], decimals: int = 0) -> str:
    """Return what the shares at the indices ``group`` hold together: the sum of their shown percents.

    The same rounding as :func:`percents` of ``shares``, so a group and the rest add up to exactly
    100, as do the top five named one by one and "the rest" (``percent_together(shares, others)``).
    ``<0.01%`` when the group rounds to no unit but is not 0, ``100%`` only when it is everything.
    """
    units, d = share_units(shares, decimals)
    group = set(group)
    inside = [float(s) for i, s in enumerate(shares) if i in group]
    if not any(inside):
        return "0%"
    if not any(float(s) for i, s in enumerate(shares) if i not in group):
        return "100%"
    return _unit_text(sum(u for i, u in enumerate(units) if i in group), d, 0)


def shown_value(text: str) -> Decimal:
    """The number a shown text says, exactly: ``"94.5%"`` -> ``Decimal("94.5")``, ``"−3"`` -> -3.

    A text that gives only a bound (``"<0.01%"``, ``">99.9999%"``) says no single number: ValueError.
    """
    body = text.strip().removesuffix("%").replace(MINUS, "-")
    if body[:1] in "<>":
        raise ValueError(f"{text!r} is a bound, not a number")
    return Decimal(body)


def difference(a: str, b: str) -> str:
    """Return ``a - b`` for two numbers as shown, exactly: ``difference("94.5%", "94.3%") == "0.2"``.

    A sentence that shows two rounded numbers states the difference of those, whatever the
    full-precision difference rounds to (0.1 for 94.54 and 94.35). Trailing zeros trimmed,
    never ``-0``.
    """
    d = shown_value(a) - shown_value(b)
    if d == 0:
        return "0"
    text = format(d, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def plural(n: int | str, noun: str, plural_form: str | None = None) -> str:
    """Return a count and its noun, agreeing: ``1 token``, ``2 tokens``, ``1,024 entries``.

    The plural adds ``s`` unless ``plural_form`` is given (``plural(n, "entry", "entries")``).
    ``n`` may be a number as already shown (``"0.2"`` points, ``"1"`` point): singular only for 1.
    """
    text = n if isinstance(n, str) else f"{n:,}"
    one = text.lstrip("+-" + MINUS) == "1"
    return f"{text} {noun if one else plural_form or noun + 's'}"


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
