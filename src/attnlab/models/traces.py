"""What a real model's attention did on one text, kept compactly: q, k and v per layer.

Shapes (``T`` tokens): ``q`` is ``(n_layer, n_head, T, d_head)`` and ``k``, ``v``
are ``(n_layer, n_kv_head, T, d_head)`` (after RoPE for q and k in a RoPE model),
float32 as the model computed them. ``allowed`` is ``(T, T)``: ``True`` = the
query may attend the key (all ``True`` for an encoder, the lower triangle for a
causal decoder). A head's ``scores`` (the scaled dot products ``q . k * scale``
before the mask) and ``weights`` ``(T, T)`` (row = query token, column = key
token) are recomputed from q, k, v on demand (:meth:`ModelTrace.head_weights`,
:meth:`~ModelTrace.head_scores`, :meth:`~ModelTrace.layer_weights`) by the
engine's own :func:`attnlab.engine.attention.attend`, called as the model's
blocks called it (``attend_options``), so they are the model's bits exactly;
the last few layers computed stay in a small process-wide cache. A trace made
without details keeps only ``weights`` ``(n_layer, n_head, T, T)`` (nothing to
recompute from); a model may also give ``weights`` and ``scores`` with details
(the toy model), and then they are kept as given.
With details, a model that generates also keeps ``logits`` ``(T, vocab)``
(row i: the next-token logits after token i), and every model keeps
``journey`` (:mod:`attnlab.models.journey`: each token's path through the blocks).
``path`` is what the model's products ran on, said where the trace is made: ``"q4_1"``
(SmolLM2 on the file's blocks) or ``"float32"`` (float weights); ``None`` where the
model does not say (the toy). A trace keeps it wherever it goes (the worker's pipe, a
spill to disk), so "How is this computed?" says which path the page shows.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from attnlab.engine.attention import attend
from attnlab.engine.threads import one_blas_thread
from attnlab.models.errors import Refusal

THUMB = 32  # a thumbnail's side, in cells, at most: a longer text's tokens are cut into runs

# recomputed layers kept, all traces together: a 256-token SmolLM2 layer's scores and weights are
# 4.7 MB, a MiniLM one's 6.3 MB (so a head's neighbours, and a second look, cost no recompute)
LAYER_CACHE_BYTES = 32 * 2**20


class _Layers:
    """Recomputed ``(scores, weights)`` by (trace, layer), least recently used out first, in a byte cap."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._bytes = 0

    def get(self, key: tuple[str, int], compute) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        pair = compute()  # outside the lock: two threads may both compute it, to the same bits
        for a in pair:
            a.flags.writeable = False
        size = sum(int(a.nbytes) for a in pair)
        with self._lock:
            if key not in self._kept:
                self._kept[key] = pair
                self._bytes += size
            while self._bytes > self.cap and len(self._kept) > 1:
                _, old = self._kept.popitem(last=False)
                self._bytes -= sum(int(a.nbytes) for a in old)
        return pair


LAYERS = _Layers(LAYER_CACHE_BYTES)


@dataclass(frozen=True, kw_only=True, eq=False)
class ModelTrace:
    """One forward pass's attention: q, k, v (with details) or every head's weights (without).

    ``attend_options``: how the model's blocks called ``attend`` (``causal``,
    ``enable_gqa``, ``key_padding``: the text's key padding row with a batch axis
    of one, as an encoder's blocks pass it), so a head is recomputed as it was computed.
    """

    model: str
    tokens: list[str]
    ids: list[int]
    allowed: np.ndarray
    scale: float
    kv_groups: list[list[int]]  # kv_groups[g] = the query heads that share KV head g
    weights: np.ndarray | None = None  # kept as given (no details, or a model that gives them)
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    scores: np.ndarray | None = None  # kept as given, like weights
    logits: np.ndarray | None = None
    journey: dict[str, np.ndarray] | None = None
    attend_options: dict = field(default_factory=dict)
    path: str | None = None  # what the products ran on: "q4_1" or "float32" (None: not said)
    key: str = field(default_factory=lambda: uuid.uuid4().hex)  # its layers in the recompute cache

    def arrays(self) -> dict[str, np.ndarray]:
        """Every array the trace holds, by name (``journey.<name>`` for the journey's)."""
        names = ("weights", "allowed", "q", "k", "v", "scores", "logits")
        kept = {name: getattr(self, name) for name in names}
        kept.update({f"journey.{k}": a for k, a in (self.journey or {}).items()})
        return {name: a for name, a in kept.items() if a is not None}

    @property
    def n_layer(self) -> int:
        return (self.weights if self.weights is not None else self.q).shape[0]

    @property
    def n_head(self) -> int:
        return (self.weights if self.weights is not None else self.q).shape[1]

    # -- a head's scores and weights --------------------------------------------

    def _layer(self, layer: int) -> tuple[np.ndarray | None, np.ndarray]:
        """``(scores, weights)`` of every head of ``layer``, each ``(n_head, T, T)`` float32."""
        self.check(layer=layer)
        if self.weights is not None:
            return (None if self.scores is None else self.scores[layer]), self.weights[layer]
        if self.q is None or self.k is None or self.v is None:
            raise ValueError("this trace has no q, k, v: make it with details=True")
        return LAYERS.get((self.key, layer), lambda: self._attend(layer))

    def _attend(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """The engine's ``attend`` on the kept q, k, v of ``layer``, called as the model's blocks called it.

        Every head at once, in the shapes the blocks had (a batch axis of one for an
        encoder), inside one BLAS thread as the model ran: the same products, the same bits.
        """
        o = self.attend_options
        q, k, v = (np.asarray(a[layer]) for a in (self.q, self.k, self.v))  # (H, T, d), (H_kv, T, d)
        batched = bool(o.get("key_padding"))
        if batched:
            q, k, v = q[None], k[None], v[None]  # (1, H, T, d)
        padding = self.allowed[:1][None] if batched else None  # (1, 1, T): True = real token
        with one_blas_thread():
            res = attend(
                q, k, v, mask=None, causal=o.get("causal"), scale=None, key_padding_mask=padding,
                enable_gqa=bool(o.get("enable_gqa")), return_trace=True, check_values=False,
            )  # fmt: skip
        scores, weights = res.trace["scores"], res.weights
        return (scores[0], weights[0]) if batched else (scores, weights)

    def layer_weights(self, layer: int) -> np.ndarray:
        """Every head's weights in ``layer``, ``(n_head, T, T)`` float32, read-only."""
        return self._layer(layer)[1]

    def layer_scores(self, layer: int) -> np.ndarray:
        """Every head's scaled scores in ``layer`` (before the mask), ``(n_head, T, T)`` float32."""
        scores = self._layer(layer)[0]
        if scores is None:
            raise ValueError("this trace has no scores: make it with details=True")
        return scores

    def head_weights(self, layer: int, head: int) -> np.ndarray:
        """Head ``head`` of ``layer``'s weights ``(T, T)``: row = query token, column = key token."""
        self.check(layer=layer, head=head)
        return self.layer_weights(layer)[head]

    def head_scores(self, layer: int, head: int) -> np.ndarray:
        """Head ``head`` of ``layer``'s scaled scores ``(T, T)`` (``q . k * scale``, before the mask)."""
        self.check(layer=layer, head=head)
        return self.layer_scores(layer)[head]

    def all_weights(self) -> np.ndarray:
        """Every layer's and head's weights ``(n_layer, n_head, T, T)``: large; the model view's, once."""
        if self.weights is not None:
            return self.weights
        return np.stack([self._attend(layer)[1] for layer in range(self.n_layer)])

    @property
    def causal(self) -> bool:
        return not bool(self.allowed.all())

    def check(self, *, layer: int | None = None, head: int | None = None) -> None:
        """Refuse a layer or head index outside the model: ``FieldError`` at ``layer`` or ``head``."""
        for what, value, size in (("layer", layer, self.n_layer), ("head", head, self.n_head)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
                raise Refusal((what,), "no_such_index", value, self.model, what, size)

    def check_token(self, field: str, value: int) -> None:
        """Refuse ``value`` unless it indexes a token of the text (a bool does not): ``FieldError`` at it."""
        n = len(self.tokens)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            raise Refusal((field,), "no_such_token", value, n)

    def kv_head(self, head: int) -> int:
        """The KV head that query head ``head`` reads (GQA: ``head // group size``)."""
        return next(g for g, members in enumerate(self.kv_groups) if head in members)

    def layer_dict(self, layer: int, *, details: bool = False) -> dict:
        """JSON-ready: every head's weights in ``layer`` (and q, k, v, scores with details)."""
        self.check(layer=layer)
        out: dict = {"layer": layer, "weights": self.layer_weights(layer).astype(float).tolist()}
        if details and self.q is not None:
            s = np.where(self.allowed, self.layer_scores(layer).astype(float), np.nan)
            out["scores"] = [[[None if np.isnan(x) else x for x in row] for row in h] for h in s]
            for name in ("q", "k", "v"):
                out[name] = getattr(self, name)[layer].astype(float).tolist()
        return out

    def summary_dict(self) -> dict:
        """JSON-ready description without the big arrays."""
        return {
            "model": self.model,
            "tokens": list(self.tokens),
            "ids": list(self.ids),
            "n_layer": self.n_layer,
            "n_head": self.n_head,
            "n_kv_head": len(self.kv_groups),
            "kv_groups": [list(g) for g in self.kv_groups],
            "causal": self.causal,
            "scale": self.scale,
        }


def bins(n_tokens: int, size: int) -> list[list[int]]:
    """``size`` runs ``[start, end)`` covering tokens 0..n_tokens-1, as even as possible."""
    edges = [(r * n_tokens) // size for r in range(size + 1)]
    return [[edges[r], edges[r + 1]] for r in range(size)]


def thumbnails(weights: np.ndarray, allowed: np.ndarray, size: int) -> np.ndarray:
    """Block maxima of ``weights`` (..., T, T) on a ``size x size`` grid; NaN where all blocked."""
    n = weights.shape[-1]
    starts = np.array([b[0] for b in bins(n, size)])
    w = np.where(allowed, weights, -np.inf)
    rows = np.maximum.reduceat(w, starts, axis=-2)
    cells = np.maximum.reduceat(rows, starts, axis=-1).astype(np.float64)
    return np.where(np.isneginf(cells), np.nan, cells)


def overview(trace) -> dict:
    """The numbers of the model view: ``size`` (a thumbnail's side), ``cells`` (L, H, size, size) every
    head's block maxima (NaN where all blocked) and ``scores`` (score -> (L, H) float64, or None: every
    head's scores, :func:`attnlab.models.circuits.scores.head_scores`). The worker that made the trace
    computes them with it (the heavy part: every layer's weights), so the page's first request only words
    them."""
    from attnlab.models.circuits.scores import head_scores

    size = min(len(trace.tokens), THUMB)
    weights = trace.all_weights()  # (L, H, T, T)
    return {"size": size, "cells": thumbnails(weights, trace.allowed, size),
            "scores": head_scores(weights, trace.allowed, trace.ids)}  # fmt: skip
