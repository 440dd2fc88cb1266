"""What one head reads and writes, in words: its query-key products before and after RoPE at one
query, its grouped-query group, and the tokens its value→output direction promotes.

Numbers in (``models/circuits/heads``: :class:`HeadReads` and, for a decoder,
:class:`HeadWrites`, read by attribute), JSON out. The products are q_i · k_j (unscaled);
the scores the softmax takes are these times ``scale``. The query's shares are one set
(:func:`attnlab.lab.numbers.percents`): they add up to 100 wherever they are shown.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.heatmap import signed
from attnlab.lab.heads import head_spoken
from attnlab.lab.realmodel.tokens import row_label, token_label
from attnlab.lab.said import said


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def group_words(layer: int, head: int, kv_head: int, group: tuple[int, ...]) -> dict:
    """The head's KV head and the query heads that share it (claims ``kv_head``, ``group``)."""
    if len(group) > 1:
        others = _listed([str(h) for h in group])
        text = (
            f"Query head {head} of layer {layer} reads KV head {kv_head}, whose keys and values query heads "
            f"{others} share (grouped-query attention). The products below are this head's own queries "
            "with that shared key."
        )
    else:
        text = f"Query head {head} of layer {layer} has its own keys and values: no other head shares them."
    return said(text, kv_head=kv_head, group=list(group))


def rope_words(before: np.ndarray, after: np.ndarray, keys: list[int], labels: list[str],
               rotated: bool) -> dict:  # fmt: skip
    """Which key has the largest product before and after RoPE (claims ``top_before``, ``top_after``)."""
    tb = max(keys, key=lambda j: (before[j], -j))
    ta = max(keys, key=lambda j: (after[j], -j))
    if not rotated:
        return said(
            f"This model adds positions to the embeddings and has no RoPE: the products are the same before "
            f"and after. The largest is with {labels[ta]}.",
            top_before=tb, top_after=ta, rope=False,
        )  # fmt: skip
    where = (
        f"with {labels[tb]} both before and after RoPE"
        if tb == ta
        else f"with {labels[tb]} before RoPE and with {labels[ta]} after"
    )
    return said(
        f"RoPE rotates each q and k by its position before the product: the largest product is {where}.",
        top_before=tb, top_after=ta, rope=True,
    )  # fmt: skip


def head_view(reads, writes, *, query: int, tokens: list[str], texts: Mapping[int, str] | None,
              rotated: bool, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: head ``reads.head`` of ``reads.layer`` at query ``query`` (``writes`` None: an encoder)."""
    labels = [row_label(i, t) for i, t in enumerate(tokens)]
    before = np.asarray(reads.dots_before[query], dtype=np.float64)
    after = np.asarray(reads.dots_after[query], dtype=np.float64)
    weights = np.asarray(reads.weights[query], dtype=np.float64)
    seen = np.flatnonzero(np.asarray(reads.allowed[query])).tolist()
    # the query's shares as one set, adding up to 100 (a blocked key holds none)
    shown = fmt.percents(np.where(np.asarray(reads.allowed[query]), weights, 0.0).tolist())
    keys = [
        {
            "index": j, "label": labels[j], "exact": tokens[j],
            "before": float(before[j]), "after": float(after[j]), "weight": float(weights[j]),
            "before_display": fmt.rounded(before[j], 2), "after_display": fmt.rounded(after[j], 2),
            "weight_display": shown[j],
            "title": f"{labels[query]} · {labels[j]}: q·k = {fmt.precise(before[j])} before RoPE, "
            f"{fmt.precise(after[j])} after; share {fmt.precise(weights[j])}",
            "how": {q: {"kind": "head_qk", "layer": int(reads.layer), "head": int(reads.head), "query": query,
                        "key": j, "quantity": q} for q in ("before", "after", "weight")},
        }
        for j in seen
    ]  # fmt: skip
    out = {
        "job": job,
        "layer": int(reads.layer),
        "head": int(reads.head),
        "kv_head": int(reads.kv_head),
        "group": list(reads.group),
        "query": query,
        "query_label": labels[query],
        "scale": float(reads.scale),
        "scale_display": fmt.significant(reads.scale),
        "title": f"{head_spoken(reads.layer, reads.head)} at query {labels[query]}",
        "group_words": group_words(reads.layer, reads.head, reads.kv_head, tuple(reads.group)),
        "rope_words": rope_words(before, after, seen, labels, rotated),
        "keys": keys,
        "columns": ["Key", "q·k before RoPE", "q·k after RoPE", "Share"],
        "scale_words": said(
            f"The softmax takes each product after RoPE times {fmt.significant(reads.scale)} "
            f"(1/√{reads.q.shape[1]}).",
            scale=float(reads.scale), d_head=int(reads.q.shape[1]),
        ),  # fmt: skip
        "writes": None,
        "no_writes": None,
    }
    if writes is None:
        out["no_writes"] = said(
            "This model is an encoder, with no unembedding: what a head writes cannot be read as tokens.",
            writes=False,
        )
        return out

    ov = {"kind": "head_ov", "layer": int(reads.layer), "head": int(reads.head), "position": query}

    def promoted(ids, logits, **fields) -> list[dict]:
        out = []
        for r, (i, v) in enumerate(zip(ids, logits)):
            shown = token_label(texts[int(i)])
            out.append({"id": int(i), **shown, "logit": float(v), "display": signed(float(v), 2),
                        "title": f"{shown['label']}: {fmt.precise(float(v))}",
                        "how": {**ov, **fields, "rank": r}})  # fmt: skip
        return out

    sources = [
        {"index": int(j), "label": labels[int(j)], "exact": tokens[int(j)], "weight": float(w),
         "weight_display": shown[int(j)] if float(w) == weights[int(j)] else fmt.percent(float(w)),
         "how": {**ov, "quantity": "source_weight", "source": s},
         "promoted": promoted(ids, lg, quantity="promoted", source=s)}
        for s, (j, w, ids, lg) in enumerate(zip(writes.sources, writes.weights, writes.promoted_ids,
                                                 writes.promoted_logits))
    ]  # fmt: skip
    written = promoted(writes.written_ids, writes.written_logits, quantity="written")
    named = _listed([w["label"] for w in written[:3]])
    out["writes"] = {
        "sources": sources,
        "written": written,
        "words": said(
            "Each key's value, through the head's rows of W_O, the final norm (its γ, and its scale frozen "
            f"at {labels[query]}) and the unembedding, raises these tokens' logits most: what the head "
            "would write if it put all its attention on that key.",
            sources=[int(j) for j in writes.sources],
        ),  # fmt: skip
        "written_words": said(
            f"Its real output at {labels[query]} (the attention-weighted mix) raises {named} most.",
            written=[int(i) for i in writes.written_ids[:3]],
        ),  # fmt: skip
    }
    return out
