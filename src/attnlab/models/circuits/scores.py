"""Every head's scores: how much of its attention falls on each pattern's cells, averaged over queries.

A head's score for a pattern is the share of its attention on the pattern's cells, averaged
over the query rows that have such a cell (TransformerLens's head detector):

- ``previous``: cell (i, i-1); ``first``: cell (i, 0), rows 1..; ``self``: cell (i, i), rows 1..;
- ``induction``: key j+1 for every earlier j whose token equals token i (the tokens right after
  every earlier occurrence of the current token);
- ``duplicate``: every earlier key holding the same token as the query;
- ``breadth``: the row's entropy over the keys it may see, divided by its largest possible value
  (log of their count), averaged over the rows that see two keys or more.

Numbers only (float64 sums): the kinds a score names, and the words, are the lab's
(:mod:`attnlab.lab.realmodel.kinds`). The census over many texts, the page's census of a text and
the circuits lab all score with :func:`head_scores` (one definition).
"""

from __future__ import annotations

import numpy as np

SCORES = ("previous", "first", "induction", "duplicate", "self", "breadth")  # every score, this order
CENSUS = ("previous", "first", "induction", "duplicate", "breadth")  # what a census averages over texts


def targets(ids, allowed: np.ndarray, score: str) -> np.ndarray:
    """(T, T) bool: ``[i, k]`` = key k is one of query i's cells for ``score`` (not breadth), if allowed."""
    ids = np.asarray(ids)
    n = len(ids)
    earlier = np.tri(n, k=-1, dtype=bool)  # k < i
    if score == "previous":
        out = np.eye(n, k=-1, dtype=bool)
    elif score == "first":
        out = np.zeros((n, n), dtype=bool)
        out[1:, 0] = True
    elif score == "self":
        out = np.eye(n, dtype=bool)
        out[0, 0] = False
    elif score == "duplicate":
        out = (ids[:, None] == ids[None, :]) & earlier
    elif score == "induction":  # key k right after an earlier occurrence of i's own token: t[k-1] == t[i]
        out = np.zeros((n, n), dtype=bool)
        out[:, 1:] = ids[:, None] == ids[None, :-1]
        out &= earlier  # k <= i-1: never the query itself
    else:
        raise ValueError(f"{score!r} has no cells; breadth is a row's entropy")
    return out & np.asarray(allowed, dtype=bool)


def query_values(weights: np.ndarray, allowed: np.ndarray, ids, score: str) -> np.ndarray:
    """(T,) float64: what each query contributes to ``score`` (its share on the cells, or its breadth); NaN
    where a query does not count (no cell; breadth: fewer than two keys seen)."""
    w = np.asarray(weights)
    ok = np.asarray(allowed, dtype=bool)
    n = w.shape[-1]
    if score == "breadth":
        seen = ok.sum(axis=1)
        entropy = _entropy(w)
        out = np.full(n, np.nan)
        wide = seen > 1
        out[wide] = entropy[wide] / np.log(seen[wide])
        return out
    cells = targets(ids, ok, score)
    sums = np.where(cells, w, 0).sum(axis=1, dtype=np.float64)
    return np.where(cells.any(axis=1), sums, np.nan)


def _entropy(w: np.ndarray) -> np.ndarray:
    """Each row's entropy of ``w`` (..., T, T), float64 sums of logarithms taken in w's own dtype."""
    # log of max(w, tiny): a zero share gives 0 * log(tiny) = 0, as 0 log 0 = 0 (no mask pass)
    plogp = np.maximum(w, np.finfo(w.dtype).tiny)
    np.log(plogp, out=plogp)
    plogp *= w
    return -plogp.sum(axis=-1, dtype=np.float64)  # (..., T)


def _mean_share(w: np.ndarray, targets: np.ndarray) -> np.ndarray | None:
    """Mean over the queries with a target of the share ``w`` (..., T, T) puts on them; None if none.

    The mean of per-query sums is the sum over every (query, target) pair divided by the
    number of queries: a gather of the pairs, not a pass over all T x T cells.
    """
    queries = int(targets.any(axis=1).sum())
    if queries == 0:
        return None
    i, k = np.nonzero(targets)  # (P,) each
    return w[..., i, k].sum(axis=-1, dtype=np.float64) / queries


def _breadth(w: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """Mean normalised row entropy of ``w`` (..., T, T) over the rows that see two keys or more."""
    wide = seen > 1  # (T,)
    if not wide.any():
        return np.zeros(w.shape[:-2])
    return (_entropy(w)[..., wide] / np.log(seen[wide])).mean(axis=-1)


def head_scores(weights: np.ndarray, allowed: np.ndarray, ids=None) -> dict[str, np.ndarray | None]:
    """Every score of every head: ``weights`` (..., T, T), ``allowed`` (T, T), ``ids`` (T,) or None.

    Returns ``{score: float64 array of shape (...)}`` for the names in :data:`SCORES`;
    ``induction`` and ``duplicate`` are ``None`` when ``ids`` is None or no token
    repeats. Sums are float64; the entropy's logarithms are taken in the weights'
    own floating dtype (a float32 trace's shares are float32 numbers).
    """
    w = np.asarray(weights)
    if not np.issubdtype(w.dtype, np.floating):
        w = w.astype(np.float64)
    ok = np.asarray(allowed, dtype=bool)
    n = w.shape[-1]
    if n > 1:
        previous = np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=-1, dtype=np.float64)
        first = w[..., 1:, 0].mean(axis=-1, dtype=np.float64)
        own = np.diagonal(w, axis1=-2, axis2=-1)[..., 1:].mean(axis=-1, dtype=np.float64)
    else:
        previous = np.zeros(w.shape[:-2])
        first = own = w[..., 0, 0].astype(np.float64)
    breadth = _breadth(w, ok.sum(axis=1))
    induction = duplicate = None
    if ids is not None:
        t = np.asarray(ids)
        if t.shape != (n,):
            raise ValueError(f"ids {t.shape} do not match weights (..., {n}, {n})")
        induction = _mean_share(w, targets(t, ok, "induction"))
        duplicate = _mean_share(w, targets(t, ok, "duplicate"))
    return {
        "previous": previous,
        "first": first,
        "induction": induction,
        "duplicate": duplicate,
        "self": own,
        "breadth": breadth,
    }
