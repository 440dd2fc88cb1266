"""What a shown set of percentages must satisfy, checked from the texts alone.

``total(texts)`` adds shown percents exactly (``Decimal``): a bound counts as its rounded value
(``"<0.01%"`` as 0, ``">99.99%"`` as 100), which is what it rounds to. ``check_set(texts, shares)``
asserts the promises of :func:`attnlab.lab.numbers.percents` for one set: the texts add up to
exactly 100, each is within one point of its share, none that is not 0 reads ``0%`` and none short
of the whole reads ``100%``.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal


def value(text: str) -> Decimal:
    """A shown percent as its rounded number: ``"94.5%"`` -> 94.5, ``"<0.01%"`` -> 0, ``">99.99%"`` -> 100."""
    body = text.removesuffix("%")
    if body.startswith("<"):
        return Decimal(0)
    if body.startswith(">"):
        return Decimal(100)
    return Decimal(body)


def total(texts: Sequence[str]) -> Decimal:
    return sum((value(t) for t in texts), Decimal(0))


def check_set(texts: Sequence[str], shares: Sequence[float]) -> None:
    """``texts`` are the whole set ``shares`` as shown: they add up to 100 and say each share truly."""
    assert len(texts) == len(shares)
    assert total(texts) == 100, texts
    nonzero = sum(1 for s in shares if s != 0.0)
    for text, share in zip(texts, shares):
        assert abs(float(value(text)) - 100 * share) < 1.0, (text, share)  # within one point
        if share != 0.0:
            assert text != "0%" and value(text) != 0 or text.startswith("<"), (text, share)
        if nonzero > 1:
            assert text != "100%" and (value(text) != 100 or text.startswith(">")), (text, share)
