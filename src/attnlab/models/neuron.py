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
- words: Match / Share / Mix for that row, summarised (the top 5 named);
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
from attnlab.lab import numbers as fmt

TOP = 5


def products_and_sums(q: tuple[float, ...], k: tuple[float, ...]) -> tuple[list[float], list[float]]:
    """``q[d] * k[d]`` and their running ordered sums (the last is ``ordered_sum`` of them all)."""
    products = [a * b for a, b in zip(q, k)]
    running = [ordered_sum(products[: d + 1]) for d in range(len(products))]
    return products, running


def _ranked(row: QueryTrace) -> list[int]:
    """Allowed keys, largest share first (ties: the earlier key)."""
    return sorted(row.allowed_indices, key=lambda i: (-row.weights[i], i))


def _names(row: QueryTrace, order: list[int], what) -> str:
    shown = ", ".join(f"{row.labels[i]} {what(i)}" for i in order[:TOP])
    rest = len(order) - TOP
    return shown + (f", and {rest} more" if rest > 0 else "")


def words(row: QueryTrace, index: int) -> dict[str, str]:
    """Summary, Match, Share and Mix for a real row, each naming at most the top 5 keys."""
    order = _ranked(row)
    by_score = sorted(row.allowed_indices, key=lambda i: (-row.scores[i], i))
    top = order[0]
    rest_mass = 1.0 - sum(row.weights[i] for i in order[:TOP])
    blocked = len(row.blocked)
    blocked_note = f" {blocked} later tokens are blocked by the causal mask." if blocked else ""
    norm_out = math.sqrt(ordered_sum(x * x for x in row.output))
    return {
        "summary": (
            f"Query {row.labels[index]} lines up most with {row.labels[by_score[0]]}'s key "
            f"(score {fmt.rounded(row.scores[by_score[0]])}), so {row.labels[top]} takes "
            f"{fmt.percent(row.weights[top])} of its attention.{blocked_note}"
        ),
        "match": (
            f"Match: q ({row.d_k} numbers) meets {len(row.allowed_indices)} keys; each dot product "
            f"times the scale {fmt.rounded(row.scale)} is a score. Highest scores: "
            f"{_names(row, by_score, lambda i: fmt.rounded(row.scores[i]))}."
        ),
        "share": (
            "Share: softmax subtracts the largest score, exponentiates and divides by the sum. "
            f"Largest shares: {_names(row, order, lambda i: fmt.percent(row.weights[i]))}"
            + (f"; the rest hold {fmt.percent(max(rest_mass, 0.0))} together." if len(order) > TOP else ".")
        ),
        "mix": (
            f"Mix: the output is the shares times the values ({row.d_v} numbers each), added: "
            f"{fmt.percent(row.weights[top])} of {row.labels[top]}'s value, and so on. "
            f"Its length is {fmt.rounded(norm_out)}."
        ),
    }


def _norm(x) -> float:
    return math.sqrt(ordered_sum(a * a for a in x))


def plane(row: QueryTrace) -> dict:
    """The plane of q and its top key, as described in the module docstring."""
    q = row.q
    q_len = _norm(q)
    e1 = [a / q_len for a in q] if q_len > 0 else [0.0] * len(q)
    e2 = None
    top = None
    for i in _ranked(row):
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
        keys.append({"index": i, "label": row.labels[i], "x": x, "y": y, "kept": min(kept, 1.0),
                     "share": row.weights[i]})  # fmt: skip
    top_label = row.labels[top] if top is not None else None
    mean_kept = sum(k["kept"] for k in keys) / len(keys)
    return {
        "caption": (
            "A projection: the plane through q and "
            + (f"{top_label}'s key" if top_label else "no other direction (every key is parallel to q)")
            + ". Across, each key's coordinate along q: its score is exactly |q| × across × scale, "
            "so the Match is shown in full. Up: its part along the top key, square to q."
        ),
        "leaves_out": (
            f"It leaves out the other {max(row.d_k - 2, 0)} directions of each key (on average the plane "
            f"shows {fmt.percent(mean_kept)} of a key's length) and the values: the Mix happens in "
            f"{row.d_v} dimensions."
        ),
        "top_key": top,
        "top_label": top_label,
        "axes": ["along q", f"toward {top_label}'s key, square to q" if top_label else "none"],
        "q": [q_len, 0.0],
        "keys": keys,
    }


def check_token(trace, field: str, value: int) -> None:
    """ValueError naming ``field`` unless ``value`` is a token index of ``trace`` (a bool is not)."""
    n = len(trace.tokens)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        raise ValueError(f"{field} {value!r} does not exist; the text has tokens 0..{n - 1}")


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
    """JSON-ready neuron view of ``trace`` (details needed); ValueError names a bad field."""
    check_token(trace, "query", query)
    check_token(trace, "key", key)
    row = trace.query_row(layer, head, query)
    products, running = products_and_sums(row.q, row.keys[key])
    rank = _ranked(row)
    weights_display = [fmt.percent(w) if ok else "—" for w, ok in zip(row.weights, row.allowed)]
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
        "dot_display": fmt.rounded(running[-1]),
        "scale": row.scale,
        "scale_display": f"1/√{row.d_k} = {fmt.rounded(row.scale)}",
        "score": running[-1] * row.scale,
        "score_display": fmt.rounded(running[-1] * row.scale),
        "row": {
            "labels": list(row.labels),
            "allowed": list(row.allowed),
            "scores": [s if ok else None for s, ok in zip(row.scores, row.allowed)],
            "m": row.m,
            "exps": list(row.exps),
            "z": row.z,
            "weights": list(row.weights),
            "weights_display": weights_display,
            "key_share": row.weights[key],
            "key_share_display": weights_display[key],
            "key_rank": rank.index(key) + 1 if key in rank else None,
        },
        "words": words(row, query),
        "plane": plane(row),
    }
