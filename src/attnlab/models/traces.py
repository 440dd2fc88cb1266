"""What a real model's attention did on one text: every layer's and head's weights.

Shapes (``T`` tokens): ``weights`` and ``scores`` are ``(n_layer, n_head, T, T)``,
row = query token, column = key token; ``q`` is ``(n_layer, n_head, T, d_head)``
and ``k``, ``v`` are ``(n_layer, n_kv_head, T, d_head)`` (after RoPE for q and k
in a RoPE model). ``allowed`` is ``(T, T)``: ``True`` = the query may attend the
key (all ``True`` for an encoder, the lower triangle for a causal decoder).
``scores`` are the scaled dot products ``q . k * scale`` before the mask.
With details, a model that generates also keeps ``logits`` ``(T, vocab)``
(row i: the next-token logits after token i), and every model keeps
``journey`` (:mod:`attnlab.models.journey`: each token's path through the blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.single import QueryTrace
from attnlab.lab.realmodel.tokens import row_label
from attnlab.models.rows import explorer_row


@dataclass(frozen=True, kw_only=True, eq=False)
class ModelTrace:
    """One forward pass's attention; q, k, v and scores only when details were asked for."""

    model: str
    tokens: list[str]
    ids: list[int]
    weights: np.ndarray
    allowed: np.ndarray
    scale: float
    kv_groups: list[list[int]]  # kv_groups[g] = the query heads that share KV head g
    q: np.ndarray | None = None
    k: np.ndarray | None = None
    v: np.ndarray | None = None
    scores: np.ndarray | None = None
    logits: np.ndarray | None = None
    journey: dict[str, np.ndarray] | None = None

    def arrays(self) -> list[np.ndarray]:
        """Every array the trace holds (for its size in memory)."""
        kept = [self.weights, self.allowed, self.q, self.k, self.v, self.scores, self.logits]
        kept += list((self.journey or {}).values())
        return [a for a in kept if a is not None]

    @property
    def n_layer(self) -> int:
        return self.weights.shape[0]

    @property
    def n_head(self) -> int:
        return self.weights.shape[1]

    @property
    def causal(self) -> bool:
        return not bool(self.allowed.all())

    def check(self, *, layer: int | None = None, head: int | None = None) -> None:
        """Refuse a layer or head index outside the model, naming the valid range."""
        for field, value, size in (("layer", layer, self.n_layer), ("head", head, self.n_head)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
                raise ValueError(f"{field} {value!r} does not exist; {self.model} has {field}s 0..{size - 1}")

    def kv_head(self, head: int) -> int:
        """The KV head that query head ``head`` reads (GQA: ``head // group size``)."""
        return next(g for g, members in enumerate(self.kv_groups) if head in members)

    def labels(self) -> list[str]:
        """Unique, short, printable labels for the tokens, as the explorer needs: ``"3 cat"``, ``"4 ⏎"``.

        A token is shown by :func:`attnlab.lab.realmodel.tokens.token_label` (a space as ␣,
        a line break as ⏎, a tab as ⇥, other unprintable characters as ``⟨U+XXXX⟩``), so
        every token a tokenizer makes is a label the explorer's row accepts.
        """
        return [row_label(i, t) for i, t in enumerate(self.tokens)]

    def query_row(self, layer: int, head: int, index: int) -> QueryTrace:
        """Token ``index``'s query in ``layer``/``head`` as the explorer computes one query.

        Runs the explorer's calculation (:func:`attnlab.models.rows.explorer_row`:
        ``trace_query``, exact ordered sums) on the real q, keys and values, so its
        shares equal ``weights[layer, head, index]`` up to the model's float32
        rounding. Needs a trace made with details.
        """
        self.check(layer=layer, head=head)
        if self.q is None or self.k is None or self.v is None:
            raise ValueError("this trace has no q, k, v: make it with details=True")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.tokens):
            raise ValueError(f"token {index!r} does not exist; the text has tokens 0..{len(self.tokens) - 1}")
        g = self.kv_head(head)
        return explorer_row(
            self.q[layer, head, index].astype(float).tolist(),
            self.k[layer, g].astype(float).tolist(),
            self.v[layer, g].astype(float).tolist(),
            labels=self.labels(),
            allowed=self.allowed[index].tolist(),
            scale=self.scale,
        )

    def layer_dict(self, layer: int, *, details: bool = False) -> dict:
        """JSON-ready: every head's weights in ``layer`` (and q, k, v, scores with details)."""
        self.check(layer=layer)
        out: dict = {"layer": layer, "weights": self.weights[layer].astype(float).tolist()}
        if details and self.scores is not None:
            s = np.where(self.allowed, self.scores[layer].astype(float), np.nan)
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
