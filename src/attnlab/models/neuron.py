"""The neuron view: the q and k coordinates behind one score, then the row, in the explorer's terms.

For (layer, head, query i, key j) of a kept trace with details:

- ``q`` and ``k`` (d_k coordinates each; RoPE models: after rotation),
  ``products[d] = q[d] * k[d]``, ``running[d]`` the ordered sum of products
  0..d (left to right from 0.0, :func:`attnlab.engine.single.ordered_sum`),
  ``dot = running[-1]``, ``score = dot * scale``;
- the row: the explorer's calculation of query i over every key
  (:func:`attnlab.models.rows.explorer_row`), so ``dot`` and ``score`` equal
  that row's ``dots[j]`` and ``scores[j]``, and both equal ``trace_query`` on
  the same vectors;
- the words (:mod:`attnlab.lab.realmodel.neuron`): Match / Share / Mix for that
  row (the top 5 named), the sum and the softmax in sentences, each with its claims;
- ``plane``: a 2-D view that is honest about what it drops. Axis x is the unit
  vector along q, axis y the top key's part square to q (the top key: the
  largest share other than any key parallel to q). Since q lies in the plane,
  ``q . k = |q| * x_k`` for every key: the Match is shown without loss. What the
  plane leaves out: each key's part outside it (``kept`` = the share of its
  length the plane shows) and the values (the Mix happens in d_v dimensions).
"""

from __future__ import annotations

import math

from attnlab.engine.single import QueryTrace, ordered_sum
from attnlab.lab.realmodel.neuron import bar_titles, key_point_title, neuron_words, plane_words, ranked


def products_and_sums(q: tuple[float, ...], k: tuple[float, ...]) -> tuple[list[float], list[float]]:
    """``q[d] * k[d]`` and their running ordered sums (the last is ``ordered_sum`` of them all)."""
    products = [a * b for a, b in zip(q, k)]
    running = [ordered_sum(products[: d + 1]) for d in range(len(products))]
    return products, running


def _norm(x) -> float:
    return math.sqrt(ordered_sum(a * a for a in x))


def plane(row: QueryTrace) -> dict:
    """The plane of q and its top key, as described in the module docstring."""
    q = row.q
    q_len = _norm(q)
    e1 = [a / q_len for a in q] if q_len > 0 else [0.0] * len(q)
    e2 = None
    top = None
    for i in ranked(row):
        k = row.keys[i]
        along = ordered_sum(a * b for a, b in zip(k, e1))
        square = [a - along * b for a, b in zip(k, e1)]
        size = _norm(square)
        if size > 1e-9 * max(_norm(k), 1e-300):
            e2, top = [a / size for a in square], i
            break
    keys = []
    for i in row.allowed_indices:
        k = row.keys[i]
        x = ordered_sum(a * b for a, b in zip(k, e1))
        y = ordered_sum(a * b for a, b in zip(k, e2)) if e2 is not None else 0.0
        length = _norm(k)
        kept = math.sqrt(x * x + y * y) / length if length > 0 else 1.0
        kept = min(kept, 1.0)
        title = key_point_title(row, i, x=x, y=y, kept=kept)
        share = row.weights[i]
        keys.append({"index": i, "label": row.labels[i], "x": x, "y": y, "kept": kept, "share": share,
                     "title": title})  # fmt: skip
    mean_kept = sum(k["kept"] for k in keys) / len(keys)
    return {
        **plane_words(row, top=top, mean_kept=mean_kept),
        "top_key": top,
        "top_label": row.labels[top] if top is not None else None,
        "mean_kept": mean_kept,
        "q": [q_len, 0.0],
        "keys": keys,
    }


def row_place(trace, layer: int, head: int, query: int, row: QueryTrace) -> dict:
    """Where a row of ``trace`` stands, the first keys of the neuron view and the bridge alike."""
    return {
        "layer": layer,
        "head": head,
        "kv_head": trace.kv_head(head),
        "query": query,
        "query_label": row.labels[query],
    }


def neuron_view(trace, layer: int, head: int, query: int, key: int) -> dict:
    """JSON-ready neuron view of ``trace`` (details needed); ``FieldError`` at a bad index's field."""
    trace.check(layer=layer, head=head)
    trace.check_token("query", query)
    trace.check_token("key", key)
    row = trace.query_row(layer, head, query)
    products, running = products_and_sums(row.q, row.keys[key])
    rank = ranked(row)
    key_rank = rank.index(key) + 1 if key in rank else None
    said = neuron_words(row, query, key, layer=layer, head=head, dot=running[-1], rank=key_rank)
    return {
        **row_place(trace, layer, head, query, row),
        "key": key,
        "key_label": row.labels[key],
        "allowed": row.allowed[key],
        "d_k": row.d_k,
        "q": list(row.q),
        "k": list(row.keys[key]),
        "products": products,
        "running": running,
        "dot": running[-1],
        "dot_display": said["dot_display"],
        "scale": row.scale,
        "scale_display": said["scale_display"],
        "score": running[-1] * row.scale,
        "score_display": said["score_display"],
        "row": {
            "labels": list(row.labels),
            "allowed": list(row.allowed),
            "scores": [s if ok else None for s, ok in zip(row.scores, row.allowed)],
            "m": row.m,
            "exps": list(row.exps),
            "z": row.z,
            "weights": list(row.weights),
            "weights_display": said["weights_display"],
            "key_share": row.weights[key],
            "key_share_display": said["weights_display"][key],
            "key_rank": key_rank,
        },
        "text": {
            **{k: said[k] for k in ("title", "blocked", "bars", "bar_labels", "sum", "softmax")},
            "bar_titles": bar_titles(row.q, row.keys[key], products, running),
        },
        "words": said["words"],
        "plane": plane(row),
    }
