"""The words of one real query row, of the neuron view and of the plane of q and its top key.

Every sentence is :func:`attnlab.lab.said.said`: its text and the facts it
asserts. A row's shares are one set (:func:`attnlab.lab.numbers.percents`): every
view of the row shows the same texts, adding up to 100, and "the rest" is 100 less
the named ones. A row's labels are the trace's (``"5 ⏎"``: tokens made visible by
:func:`attnlab.lab.realmodel.tokens.token_label`). Only the ``TOP`` largest
shares or scores are named; the claims list exactly those, with their numbers.

:func:`neuron_view` is the neuron view: the q and k coordinates behind one score, then the row, in
the explorer's terms. For (layer, head, query i, key j) of a kept trace with details:

- ``q`` and ``k`` (d_k coordinates each; RoPE models: after rotation),
  ``products[d] = q[d] * k[d]``, ``running[d]`` the ordered sum of products
  0..d (left to right from 0.0, :func:`attnlab.engine.single.ordered_sum`),
  ``dot = running[-1]``, ``score = dot * scale``;
- the row: the explorer's calculation of query i over every key
  (:func:`attnlab.models.rows.explorer_row`), so ``dot`` and ``score`` equal
  that row's ``dots[j]`` and ``scores[j]``, and both equal ``trace_query`` on
  the same vectors;
- the words (above): Match / Share / Mix for that row (the top 5 named), the sum and
  the softmax in sentences, each with its claims;
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
from attnlab.lab.realmodel.query import query_row
from attnlab.lab.said import said

TOP = 5
BARS = ("q", "k", "products", "running")  # the neuron view's rows of bars, top to bottom


def ranked(row: QueryTrace) -> list[int]:
    """Allowed keys, largest share first (ties: the earlier key)."""
    return sorted(row.allowed_indices, key=lambda i: (-row.weights[i], i))


def by_score(row: QueryTrace) -> list[int]:
    """Allowed keys, highest score first (ties: the earlier key)."""
    return sorted(row.allowed_indices, key=lambda i: (-row.scores[i], i))


def scale_text(scale: float, d_k: int) -> str:
    """The scale as the page writes it: ``1/√64 = 0.125`` when it is exactly 1/sqrt(d_k)."""
    if scale == 1.0 / math.sqrt(d_k):
        return f"1/√{d_k} = {fmt.rounded(scale)}"
    return fmt.rounded(scale)


def _named(row: QueryTrace, order: list[int], shown) -> str:
    text = ", ".join(f"{row.labels[i]} {shown(i)}" for i in order[:TOP])
    rest = len(order) - TOP
    return text + (f" and {rest} more" if rest > 0 else "")


def row_words(row: QueryTrace, index: int) -> dict[str, dict]:
    """Summary, Match, Share and Mix of a real row, one sentence each, naming at most the top 5 keys."""
    order = ranked(row)
    scored = by_score(row)
    top = order[0]
    n_allowed = len(order)
    blocked = len(row.blocked)
    rest_mass = max(1.0 - ordered_sum(row.weights[i] for i in order[:TOP]), 0.0)
    shown = fmt.percents(row.weights)  # the row's shares as one set, adding up to 100
    length = math.sqrt(ordered_sum(x * x for x in row.output))
    blocked_note = f", and the causal mask blocks the {blocked} later tokens" if blocked else ""
    summary = said(
        f"Query {row.labels[index]} lines up most with {row.labels[scored[0]]}'s key "
        f"(score {fmt.rounded(row.scores[scored[0]])}), so {row.labels[top]} takes "
        f"{shown[top]} of its attention{blocked_note}.",
        query=row.labels[index],
        top_score=row.labels[scored[0]],
        score=row.scores[scored[0]],
        top=row.labels[top],
        share=row.weights[top],
        blocked=blocked,
    )
    match = said(
        f"Match: q ({fmt.plural(row.d_k, 'number')}) meets {fmt.plural(n_allowed, 'key')}, each dot product "
        "times the scale "
        f"{fmt.rounded(row.scale)} is a score, and the highest scores are "
        f"{_named(row, scored, lambda i: fmt.rounded(row.scores[i]))}.",
        d_k=row.d_k,
        keys=n_allowed,
        scale=row.scale,
        highest=[[row.labels[i], row.scores[i]] for i in scored[:TOP]],
        more=max(n_allowed - TOP, 0),
    )
    # the rest as 100 less the five shown, so the words add up to 100 as the table does
    rest_shown = fmt.percent_together(row.weights, order[TOP:]) if n_allowed > TOP else None
    rest = f", and the rest hold {rest_shown} together" if rest_shown else ""
    share = said(
        "Share: softmax subtracts the largest score, exponentiates and divides by the sum, and the "
        f"largest shares are {_named(row, order, lambda i: shown[i])}{rest}.",
        largest=[[row.labels[i], row.weights[i]] for i in order[:TOP]],
        shown=[shown[i] for i in order[:TOP]],
        rest=rest_mass if n_allowed > TOP else None,
        rest_shown=rest_shown,
    )
    mix = said(
        f"Mix: the output adds the values ({fmt.plural(row.d_v, 'number')} each) weighted by their shares, "
        f"{shown[top]} of it from {row.labels[top]}'s value, and its length is "
        f"{fmt.rounded(length)}.",
        d_v=row.d_v,
        top=row.labels[top],
        share=row.weights[top],
        length=length,
    )
    return {"summary": summary, "match": match, "share": share, "mix": mix}


def plane_words(row: QueryTrace, *, top: int | None, mean_kept: float) -> dict:
    """The plane's caption, what it leaves out and its two axes (``top``: the top key, or None)."""
    top_label = row.labels[top] if top is not None else None
    through = f"{top_label}'s key" if top_label else "no other direction (every key is parallel to q)"
    left = max(row.d_k - 2, 0)
    return {
        "heading": "A projection, not the whole picture.",
        "caption": said(
            f"A projection: the plane through q and {through}, with each key's coordinate along q "
            "across (its score is exactly |q| × across × scale, so the Match is shown in full) and its "
            "part along the top key, square to q, up.",
            top=top_label,
        ),
        "leaves_out": said(
            f"It leaves out the other {left} directions of each key (on average the plane shows "
            f"{fmt.percent(mean_kept)} of a key's length) and the values, since the Mix happens in "
            f"{row.d_v} dimensions.",
            directions_left=left,
            mean_kept=mean_kept,
            d_v=row.d_v,
        ),
        "axes": ["along q", f"toward {top_label}'s key, square to q" if top_label else "none"],
    }


def key_point_title(row: QueryTrace, i: int, *, x: float, y: float, kept: float) -> str:
    """A plane point's hover label: its coordinates, score, share and the part of it shown."""
    return (
        f"{row.labels[i]}: across {fmt.rounded(x)}, up {fmt.rounded(y)}; "
        f"share {fmt.percents(row.weights)[i]}; the plane shows {fmt.percent(kept)} of its length"
    )


def bar_titles(q, k, products, running) -> dict[str, list[str]]:
    """Each bar's hover title in the neuron view, its number at full precision: ``"q[3] = 0.25"``."""
    return {
        "q": [f"q[{d}] = {fmt.precise(x)}" for d, x in enumerate(q)],
        "k": [f"k[{d}] = {fmt.precise(x)}" for d, x in enumerate(k)],
        "products": [f"q[{d}] × k[{d}] = {fmt.precise(x)}" for d, x in enumerate(products)],
        "running": [f"sum of the products 0..{d} = {fmt.precise(x)}" for d, x in enumerate(running)],
    }


def neuron_words(row: QueryTrace, query: int, key: int, *, layer: int, head: int, dot: float,
                 rank: int | None) -> dict:  # fmt: skip
    """The neuron view's headings, bar names and sentences for (query, key) of ``row``."""
    q_label, k_label = row.labels[query], row.labels[key]
    bars = {
        "q": f"q of {q_label} ({fmt.plural(row.d_k, 'number')})",
        "k": f"k of {k_label}",
        "products": "q[d] × k[d]",
        "running": "running sum, left to right",
        "region": "Coordinates of q, k and their products",
    }
    score = dot * row.scale
    allowed = row.allowed[key]
    share = row.weights[key]
    shown = fmt.percents(row.weights)  # the row's shares as one set, adding up to 100
    return {
        "title": f"Query {q_label} · key {k_label} · layer {layer}, head {head}",
        "blocked": None
        if allowed
        else said(
            f"{q_label} may not see {k_label} (causal), so its share is 0.", blocked=k_label, share=0.0
        ),
        "bars": bars,
        "bar_labels": {k: f"{bars[k]}: {fmt.plural(row.d_k, 'coordinate')}" for k in BARS},
        "sum": said(
            f"q · k = {fmt.rounded(dot)} (the ordered sum of the {row.d_k} products), and times the scale "
            f"{scale_text(row.scale, row.d_k)} it is the score {fmt.rounded(score)}.",
            dot=dot,
            d_k=row.d_k,
            scale=row.scale,
            score=score,
        ),
        "softmax": said(
            f"Softmax over the row gives {k_label} {shown[key]}"
            + (f" (rank {rank} of {len(row.allowed_indices)})." if rank is not None else "."),
            key=k_label,
            share=share,
            rank=rank,
        ),
        "dot_display": fmt.rounded(dot),
        "scale_display": scale_text(row.scale, row.d_k),
        "score_display": fmt.rounded(score),
        "weights_display": [p if ok else "—" for p, ok in zip(shown, row.allowed)],
        "words": row_words(row, query),
    }


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
    row = query_row(trace, layer, head, query)
    products, running = products_and_sums(row.q, row.keys[key])
    rank = ranked(row)
    key_rank = rank.index(key) + 1 if key in rank else None
    words = neuron_words(row, query, key, layer=layer, head=head, dot=running[-1], rank=key_rank)
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
        "dot_display": words["dot_display"],
        "scale": row.scale,
        "scale_display": words["scale_display"],
        "score": running[-1] * row.scale,
        "score_display": words["score_display"],
        "row": {
            "labels": list(row.labels),
            "allowed": list(row.allowed),
            "scores": [s if ok else None for s, ok in zip(row.scores, row.allowed)],
            "m": row.m,
            "exps": list(row.exps),
            "z": row.z,
            "weights": list(row.weights),
            "weights_display": words["weights_display"],
            "key_share": row.weights[key],
            "key_share_display": words["weights_display"][key],
            "key_rank": key_rank,
        },
        "text": {
            **{k: words[k] for k in ("title", "blocked", "bars", "bar_labels", "sum", "softmax")},
            "bar_titles": bar_titles(row.q, row.keys[key], products, running),
        },
        "words": words["words"],
        "plane": plane(row),
    }
