"""The page's hand-authored examples, as data.

``WORKED`` is the one-query example of the explorer: q = [2, 1] over sources
A, B, C. These are given vectors, not learned word meanings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OneQueryExample:
    """A query over labelled sources: ``keys`` is N x d_k, ``values`` N x d_v."""

    q: tuple[float, ...]
    keys: tuple[tuple[float, ...], ...]
    values: tuple[tuple[float, ...], ...]
    labels: tuple[str, ...]

    def to_dict(self) -> dict:
        return {
            "q": list(self.q),
            "keys": [list(k) for k in self.keys],
            "values": [list(v) for v in self.values],
            "labels": list(self.labels),
        }


WORKED = OneQueryExample(
    q=(2.0, 1.0),
    keys=((-1.0, 2.0), (1.0, 0.0), (0.0, 1.0)),
    values=((2.0, 0.0), (0.0, 2.0), (-1.0, -1.0)),
    labels=("A", "B", "C"),
)
