"""The circuits lab's numbers: which heads the census names on the probe, and how much the
previous-token heads feed the induction head's keys, read from SmolLM2's recorded run.

The run (``models.labs.circuits.copying``) records, on the probe's tokens:

- ``scores``: every head's five census scores (``lab.realmodel.census.SCORES``; each
  ``(n_layer, n_head)``), from the trace as ``attnlab census`` scores a text;
- the heads :func:`choose` picks from them: the induction head (the largest induction
  score; ties: the lower layer, then the lower head) and the ``tested`` previous-token
  heads (the largest previous-token scores in the layers below it; same ties);
- ``rows``: the induction head's scaled scores ``q_i · k_j / √d_head`` (float64 from the
  model's float32 q and k after RoPE, recomputed from the residual stream entering its
  layer), row i holding keys 0..i: ``clean`` (the run as it is), and for each tested head,
  with that head ablated (its output z before W_O set to its mean over the probe's positions,
  or to 0; every block from its layer on run again), ``keys`` (the clean queries against the
  keys of the ablated run) and ``all`` (queries and keys both from the ablated run).

K-composition, by ablation: the induction head's keys read what a previous-token head wrote
when switching that head off changes the induction head's pattern through its keys alone.
Here (:class:`Copying`) each set of rows becomes weights (a float64 softmax of each row over
the keys the query may see) and then the induction score
(:func:`attnlab.models.circuits.scores.head_scores`); a tested head's ``drop`` is the clean
score minus the keys-only score.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attnlab.models.circuits.scores import head_scores
from attnlab.models.labs.circuits import choose  # noqa: F401 - the heads the lab tests, chosen there


def weights(rows) -> np.ndarray:
    """(T, T) float64 weights from lower-triangular rows (row i: the scaled scores of keys 0..i)."""
    n = len(rows)
    w = np.zeros((n, n))
    for i, row in enumerate(rows):
        s = np.asarray(row, dtype=np.float64)
        e = np.exp(s - s.max())
        w[i, : i + 1] = e / e.sum()
    return w


def induction_score(rows, ids) -> float:
    """The induction score of the pattern ``rows`` make on tokens ``ids``."""
    n = len(ids)
    score = head_scores(weights(rows)[None], np.tri(n, dtype=bool), np.asarray(ids))["induction"]
    return float(score[0])


@dataclass(frozen=True)
class Copying:
    """SmolLM2's recorded run on the probe (``data``: the run's plain JSON, see the module)."""

    data: dict

    @property
    def ids(self) -> list[int]:
        return self.data["ids"]

    @property
    def tokens(self) -> list[str]:
        return self.data["tokens"]

    @property
    def how(self) -> str:
        return self.data["how"]

    def scores(self, name: str) -> np.ndarray:
        """Every head's score ``name`` on the probe, (n_layer, n_head) float64."""
        return np.asarray(self.data["scores"][name], dtype=np.float64)

    @property
    def shape(self) -> tuple[int, int]:
        return self.scores("previous").shape

    @property
    def head(self) -> tuple[int, int]:
        return tuple(self.data["induction_head"])

    @property
    def tested(self) -> list[tuple[int, int]]:
        return [tuple(h) for h in self.data["tested"]]

    @cached_property
    def clean(self) -> float:
        """The induction head's induction score, recomputed from its clean queries and keys."""
        return induction_score(self.data["rows"]["clean"], self.ids)

    @cached_property
    def keys(self) -> list[float]:
        """Per tested head: the score with the keys of the run without that head."""
        return [induction_score(r, self.ids) for r in self.data["rows"]["keys"]]

    @cached_property
    def every(self) -> list[float]:
        """Per tested head: the score with queries and keys both from the run without that head."""
        return [induction_score(r, self.ids) for r in self.data["rows"]["all"]]

    @property
    def drops(self) -> list[float]:
        """Per tested head: clean minus keys-only, the share of induction its keys lose."""
        return [self.clean - k for k in self.keys]

    @property
    def feeder(self) -> int | None:
        """The index of the tested head whose ablation drops the score most through the keys (ties: first)."""
        if not self.tested:
            return None
        d = self.drops
        return max(range(len(d)), key=lambda i: (d[i], -i))

    def previous(self, head: tuple[int, int]) -> float:
        return float(self.scores("previous")[head])

    def pattern(self, which: str = "clean", index: int = 0) -> np.ndarray:
        """The head's weights (T, T): ``clean``, or ``keys``/``all`` without tested head ``index``."""
        rows = self.data["rows"][which] if which == "clean" else self.data["rows"][which][index]
        return weights(rows)
