"""The page's hand-authored examples, as data.

``WORKED`` is the one-query example of the explorer: q = [2, 1] over sources
A, B, C. ``WORKED_SEQUENCE`` is the A/B/C sequence around it, which the page
starts with (``lab.explorer.sequence.STARTING``): token r's query, the same keys
and values, and a causal mask; its row 0 is ``WORKED``. These are given vectors,
not learned word meanings, and they are declared here only: the page gets them
in its first answer (``GET /api/example``).
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


@dataclass(frozen=True)
class SequenceExample:
    """The worked sequence: ``WORKED`` is row 0; ``queries[r]`` is token r's query.

    ``mask[r][i]`` True means row r may attend to source i (causal, top-left here).
    """

    id: str
    example: OneQueryExample
    queries: tuple[tuple[float, ...], ...]
    mask: tuple[tuple[bool, ...], ...]

    def to_dict(self) -> dict:
        """The held example's plain data (``lab.explorer.sequence.held_from_dict``)."""
        one = self.example.to_dict()
        return {
            "id": self.id,
            "labels": one["labels"],
            "queries": [list(q) for q in self.queries],
            "keys": one["keys"],
            "values": one["values"],
            "mask": [list(r) for r in self.mask],
        }


WORKED_SEQUENCE = SequenceExample(
    id="sequence-abc-v1",
    example=WORKED,
    queries=(WORKED.q, (1.0, 2.0), (-1.0, 1.0)),
    mask=((True, False, False), (True, True, False), (True, True, True)),
)
