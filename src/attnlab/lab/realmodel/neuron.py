"""The words of one real query row, of the neuron view and of the plane of q and its top key.

Every sentence is :func:`attnlab.lab.said.said`: its text and the facts it
asserts. A row's shares are one set (:func:`attnlab.lab.numbers.percents`): every
view of the row shows the same texts, adding up to 100, and "the rest" is 100 less
the named ones. A row's labels are the trace's (``"5 ⏎"``: tokens made visible by
:func:`attnlab.lab.realmodel.tokens.token_label`). Only the ``TOP`` largest
shares or scores are named; the claims list exactly those, with their numbers.
"""

from __future__ import annotations

import math

from attnlab.engine.single import QueryTrace, ordered_sum
from attnlab.lab import numbers as fmt
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
