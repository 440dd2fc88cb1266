"""Switch heads off: zero or mean ablation of query heads' outputs, and what it changes.

Ablation acts on a head's output z *before* W_O (its slice of the heads side by side),
at every position: "zero" sets it to 0, "mean" to the head's mean over this text's
positions in the run without ablation (summed in float64, rounded to the model's dtype).
The head's attention pattern is left alone: removing a pattern is another experiment.
The ablated run recomputes from the lowest ablated layer on (the unablated run's
residual stream enters it).

- :func:`ablate`: both runs, the replaced values and the heads;
- :func:`next_token_change` (decoder): each position's next-token probabilities, top
  tokens and loss, before and after;
- :func:`layer_change` (both; the encoder's view): how the residual stream leaving a
  layer moved, position by position, and the pooled embedding's cosine (encoder).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from attnlab.models.circuits import checks, metrics
from attnlab.models.circuits.edits import SetHead
from attnlab.models.circuits.runs import Cache, resume, run
from attnlab.models.errors import Refusal


@dataclass(frozen=True, eq=False, kw_only=True)
class Ablation:
    """``before`` and ``after`` runs; ``heads`` ((layer, head), ...) in the order given; ``how``
    "zero" or "mean"; ``values`` (n_heads, d_head): what each head's z was set to at every position."""

    heads: tuple[tuple[int, int], ...]
    how: str
    before: Cache
    after: Cache
    values: np.ndarray


def head_means(cache: Cache, heads: Sequence[tuple[int, int]]) -> np.ndarray:
    """(n_heads, d_head): each head's z averaged over the positions of ``cache``'s text (float64 sum)."""
    z = np.stack([cache.z[layer, :, head] for layer, head in heads]) if heads else cache.z[:0, 0]
    return z.astype(np.float64).mean(axis=1).astype(cache.z.dtype)


def ablate(model, text_ids_or_cache, heads: Sequence[tuple[int, int]], *, how: str = "zero") -> Ablation:
    """Ablate ``heads`` ((layer, head) pairs) on token ids or an unablated :class:`Cache`."""
    how = checks.choice(how, checks.HOWS, loc=("how",))
    chosen = _heads(model, heads)
    before = text_ids_or_cache if isinstance(text_ids_or_cache, Cache) else run(model, text_ids_or_cache)
    if before.edits:
        raise Refusal(("before",), "circuits.already_edited")
    if how == "zero":
        values = np.zeros((len(chosen), model.arch.d_head), dtype=before.z.dtype)
    else:
        values = head_means(before, chosen)
    edits = [SetHead(layer, head, values[i]) for i, (layer, head) in enumerate(chosen)]
    start = min((layer for layer, _ in chosen), default=model.arch.n_layer)
    after = resume(model, before, start, edits=edits, logits=before.logits is not None)
    return Ablation(heads=chosen, how=how, before=before, after=after, values=values)


def next_token_change(a: Ablation, *, top: int = 5) -> dict[str, np.ndarray]:
    """Per position, before and after (decoder). Positions 0..T-1 for the distributions; the
    loss and the next token's probability at 0..T-2 (the text's next token is known there).

    ``next_ids`` (T-1,); ``p_next_before``/``after`` (T-1,) float64; ``loss_before``/``after``
    (T-1,) (nats); ``top_ids_before``/``after`` (T, top) (ties: lower id first) with
    ``top_p_before``/``after`` (T, top); ``kl`` (T,): KL(before || after) in nats.
    """
    if a.before.logits is None or a.after.logits is None:
        raise Refusal(("model",), "circuits.no_unembedding", a.before.model)
    ids = np.asarray(a.before.ids, dtype=np.int64)
    rows = np.arange(len(ids) - 1)
    pb, pa = metrics.probabilities(a.before.logits), metrics.probabilities(a.after.logits)
    tb, ta = metrics.ranked(a.before.logits, top), metrics.ranked(a.after.logits, top)
    return {
        "next_ids": ids[1:],
        "p_next_before": pb[rows, ids[1:]],
        "p_next_after": pa[rows, ids[1:]],
        "loss_before": metrics.position_loss(a.before.logits, ids),
        "loss_after": metrics.position_loss(a.after.logits, ids),
        "top_ids_before": tb,
        "top_p_before": np.take_along_axis(pb, tb, axis=-1),
        "top_ids_after": ta,
        "top_p_after": np.take_along_axis(pa, ta, axis=-1),
        "kl": metrics.kl_divergence(pb, pa),
    }


def layer_change(a: Ablation, layer: int) -> dict[str, np.ndarray | float | None]:
    """How the residual stream leaving ``layer`` moved, per position (T,), float64.

    ``norm_before`` |x|, ``change`` |x_after - x_before|, ``cosine`` cos(x_before, x_after);
    ``pooled_cosine``: cos of the sentence embeddings before and after (encoder; None for a decoder).
    """
    layer = checks.index(layer, a.before.n_layer, loc=("layer",), model=a.before.model, what="layer")
    xb = a.before.resid[layer + 1].astype(np.float64)
    xa = a.after.resid[layer + 1].astype(np.float64)
    pooled = None
    if a.before.pooled is not None:
        pooled = metrics.cosine(a.before.pooled, a.after.pooled)
    return {
        "layer": layer,
        "norm_before": np.sqrt((xb * xb).sum(axis=-1)),
        "change": np.sqrt(((xa - xb) ** 2).sum(axis=-1)),
        "cosine": metrics.cosine(xb, xa),
        "pooled_cosine": pooled,
    }


def _heads(model, heads) -> tuple[tuple[int, int], ...]:
    out = []
    for i, pair in enumerate(heads):
        if isinstance(pair, str | bytes) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise Refusal(("heads", i), "circuits.not_a_head", pair)
        layer = checks.index(pair[0], model.arch.n_layer, loc=("heads", i, 0), model=model.name, what="layer")
        head = checks.index(pair[1], model.arch.n_head, loc=("heads", i, 1), model=model.name, what="head")
        if (layer, head) not in out:
            out.append((layer, head))
    return tuple(out)
