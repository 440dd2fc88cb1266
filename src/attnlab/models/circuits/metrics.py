"""The numbers circuits compare: probabilities, loss, logit difference, fraction recovered, cosine.

All in float64, from the model's float32 (or float64) outputs.

- ``probabilities(logits)``: softmax over the last axis, exp(z - max) / sum, as the
  next-token view's ``p_model``;
- ``position_loss(logits, ids)``: loss[i] = -log p_i(ids[i + 1]), i = 0..T-2
  (natural log; the last position has no next token in the text);
- ``logit_difference(a, b)``: logit(right answer) - logit(other answer);
- ``fraction_recovered(patched, clean, corrupt)``: (patched - corrupt) / (clean - corrupt):
  0 = the corrupted run's metric, 1 = the clean run's; NaN where clean == corrupt;
- ``cosine(a, b)``: a.b / (|a| |b|) along the last axis (0 where either is 0).
"""

from __future__ import annotations

import numpy as np


def probabilities(logits: np.ndarray) -> np.ndarray:
    """Softmax of ``logits`` (..., V) in float64 along the last axis."""
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z - z.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def log_probabilities(logits: np.ndarray) -> np.ndarray:
    """log softmax of ``logits`` (..., V) in float64: z - max - log(sum(exp(z - max)))."""
    z = np.asarray(logits, dtype=np.float64)
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def position_loss(logits: np.ndarray, ids) -> np.ndarray:
    """(T-1,): the cross-entropy of each next token in the text, -log p_i(ids[i+1])."""
    ids = np.asarray(ids, dtype=np.int64)
    logp = log_probabilities(np.asarray(logits)[:-1])
    return -logp[np.arange(len(ids) - 1), ids[1:]]


def logit_difference(right, other) -> np.ndarray | float:
    """logit(right) - logit(other), in float64 (a float for two numbers)."""
    out = np.asarray(right, dtype=np.float64) - np.asarray(other, dtype=np.float64)
    return float(out) if out.ndim == 0 else out


def fraction_recovered(patched, clean, corrupt) -> np.ndarray | float:
    """(patched - corrupt) / (clean - corrupt), float64; NaN where clean == corrupt."""
    patched = np.asarray(patched, dtype=np.float64)
    gap = np.float64(clean) - np.float64(corrupt)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (patched - np.float64(corrupt)) / gap if gap != 0 else np.full(patched.shape, np.nan)
    return float(out) if out.ndim == 0 else out


def cosine(a, b) -> np.ndarray | float:
    """Cosine similarity of a and b along the last axis, float64 (0 where either is all zeros)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.sqrt((a * a).sum(axis=-1)) * np.sqrt((b * b).sum(axis=-1))
    dots = (a * b).sum(axis=-1)
    out = np.divide(dots, norms, out=np.zeros(np.shape(dots)), where=norms > 0)
    return float(out) if out.ndim == 0 else out


def kl_divergence(p, q) -> np.ndarray:
    """KL(p || q) along the last axis, float64 (nats); terms where p is 0 count 0."""
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log(p) - np.log(q)), 0.0)
    return terms.sum(axis=-1)


def ranked(logits: np.ndarray, top: int) -> np.ndarray:
    """Per row of ``logits`` (..., V): the ids of the ``top`` largest, largest first, ties to the lower id."""
    z = np.asarray(logits)
    top = min(top, z.shape[-1])
    flat = z.reshape(-1, z.shape[-1])
    out = np.empty((flat.shape[0], top), dtype=np.int64)
    for r, row in enumerate(flat):
        part = np.argpartition(-row, top - 1)[:top] if top < row.size else np.arange(row.size)
        out[r] = part[np.lexsort((part, -row[part]))]
    return out.reshape(*z.shape[:-1], top)


def rank_of(logits: np.ndarray, token: int) -> np.ndarray:
    """Per row (..., V): how many tokens rank above ``token`` (0 = top; ties: lower id first)."""
    z = np.asarray(logits)
    mine = z[..., token : token + 1]
    above = (z > mine).sum(axis=-1)
    tied_before = (z[..., :token] == mine).sum(axis=-1)
    return above + tied_before
