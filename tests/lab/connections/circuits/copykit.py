"""Synthetic runs in the shape ``models.labs.circuits.copying`` records them (no model), and the
induction score computed here, apart from the lab's code, from its definition."""

from __future__ import annotations

import math

import numpy as np

from attnlab.lab.connections.circuits.copying import choose
from attnlab.lab.connections.live import Measured
from attnlab.lab.realmodel.census import SCORES


def _rows(rng, n: int, spread: float) -> list[list[float]]:
    return [(rng.standard_normal(i + 1) * spread).tolist() for i in range(n)]


def run_data(seed: int, *, layers: int = 4, heads: int = 3, tested: int = 2, words: int = 5, repeats: int = 2,
             how: str = "mean", spread: float = 3.0) -> dict:  # fmt: skip
    """A recorded run: random scores (the heads chosen by the lab's rule from them) and random rows."""
    rng = np.random.default_rng(seed)
    ids = np.tile(rng.choice(1000, words, replace=False), repeats).tolist()
    scores = {name: rng.random((layers, heads)).tolist() for name in SCORES}
    (layer, head), chosen = choose(scores["induction"], scores["previous"], tested)
    n = len(ids)
    return {
        "ids": ids,
        "tokens": [f" w{i}" for i in ids],
        "scores": scores,
        "how": how,
        "induction_head": [layer, head],
        "tested": [list(h) for h in chosen],
        "scale": 0.125,
        "rows": {"clean": _rows(rng, n, spread), "keys": [_rows(rng, n, spread) for _ in chosen],
                 "all": [_rows(rng, n, spread) for _ in chosen]},  # fmt: skip
    }


def measured(data: dict) -> dict:
    return {"copying": Measured("done", data=data, title="SmolLM2-135M-Instruct")}


def induction(rows, ids) -> float:
    """The induction score by its definition: per query with targets (keys k, 1 <= k <= i - 1, whose
    previous token is the query's token), the softmax weight on them; the mean over those queries."""
    total, queries = 0.0, 0
    for i, row in enumerate(rows):
        top = max(row)
        e = [math.exp(x - top) for x in row]
        z = math.fsum(e)
        targets = [k for k in range(1, i) if ids[k - 1] == ids[i]]
        if targets:
            queries += 1
            total += math.fsum(e[k] for k in targets) / z
    return total / queries
