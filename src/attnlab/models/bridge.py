"""The bridge to real models: one real query row shown in the explorer's terms.

For (layer, head, query i) of a kept trace with details, the row is the
explorer's own calculation (:meth:`ModelTrace.query_row` ->
:func:`attnlab.models.rows.explorer_row`, i.e. ``trace_query`` on the head's
real q, keys and values, at any length), so every number here is ``==`` to
``trace_query`` on the same vectors. The answer has:

- ``trace``: the row's numbers at full precision (JSON floats round-trip):
  ``q`` (d_k), ``keys`` (N x d_k), ``dots``, ``scores``, ``m``, ``exps``,
  ``z``, ``weights`` (N), ``output`` (d_v), ``allowed`` (True = may attend;
  a causal model's later tokens are blocked), ``labels``, ``scale``
  (multiplied: ``1/sqrt(d_k)``);
- ``display``: the explorer's strings (:func:`attnlab.lab.display.display_strings`)
  trimmed of the per-source vectors, plus ``key_precise`` per source (every
  coordinate, shortest round-tripping form) and ``q_precise``: the page
  formats nothing;
- ``words``: the explorer's Match / Share / Mix sentences for a real row
  (:func:`attnlab.models.neuron.words`: the top 5 named);
- ``geometry.pie``: the explorer's shares strip (ordered partial sums);
- ``plane``: the plane of q and its top key (:func:`attnlab.models.neuron.plane`):
  q lies in it, so ``q . k = |q| * x_k`` for every key and every score is kept
  by the projection; what it drops is said (``leaves_out``). ``view`` is the
  square window (:func:`attnlab.lab.geometry.plane_view`); every key is a
  point, only the ``LABELLED`` largest shares carry a label (``labelled``).
"""

from __future__ import annotations

import math

from attnlab.lab import numbers as fmt
from attnlab.lab.display import display_strings
from attnlab.lab.geometry import pie, plane_view
from attnlab.models.neuron import check_token, plane, row_place, words

LABELLED = 5  # keys named in the plane: the largest shares (more would overprint)
HEAVY = ("key", "value", "carry", "precise")  # per-source vectors: N x d strings the bridge sends once


def _scale_text(scale: float, d_k: int) -> str:
    """The score table's divisor: ``√d_k`` when the model's scale is exactly 1/sqrt(d_k)."""
    return f"√{d_k}" if scale == 1.0 / math.sqrt(d_k) else fmt.rounded(1.0 / scale)


def _display(row) -> dict:
    d = display_strings(row)
    sources = []
    for src, key in zip(d["sources"], row.keys):
        slim = {k: v for k, v in src.items() if k not in HEAVY}
        slim["key_precise"] = fmt.precise_vector(key)
        sources.append(slim)
    return {
        "q": d["q"],
        "q_precise": d["q_precise"],
        "scale": _scale_text(row.scale, row.d_k),
        "scale_precise": fmt.precise(row.scale),
        "m": d["m"],
        "z": d["z"],
        "m_z_precise": d["m_z_precise"],
        "output_precise": d["output_precise"],
        "sources": sources,
    }


def _plane(row) -> dict:
    p = plane(row)
    by_share = sorted(row.allowed_indices, key=lambda i: (-row.weights[i], i))
    named = set(by_share[:LABELLED])
    q_len = p["q"][0]
    for k in p["keys"]:
        i = k["index"]
        k["labelled"] = i in named
        k["score"] = row.scores[i]
        k["title"] = (
            f"{k['label']}: along q {fmt.rounded(k['x'])}, up {fmt.rounded(k['y'])}; "
            f"score {fmt.rounded(row.scores[i])} = |q| {fmt.rounded(q_len)} × {fmt.rounded(k['x'])} "
            f"× scale {fmt.rounded(row.scale)}; share {fmt.percent(row.weights[i])}; "
            f"the plane shows {fmt.percent(k['kept'])} of its length"
        )
    n = len(p["keys"])
    shown = min(LABELLED, n)
    p["view"] = plane_view([p["q"], *((k["x"], k["y"]) for k in p["keys"])], min_half=1.0, centered=True)
    p["labels_note"] = (
        f"All {n} keys the query may see are drawn as points; only the {shown} with the largest "
        "shares are labelled (more labels would overprint). Hover a point for its numbers; every "
        "key's are in the list above."
        if n > shown
        else f"All {n} keys the query may see are drawn and labelled."
    )
    p["exact"] = (
        "q lies in this plane, so each key's dot product with q is |q| times its coordinate along q: "
        "the projection keeps every score exactly (the scores above are the engine's)."
    )
    p["q_display"] = f"q (|q| = {fmt.rounded(q_len)})"
    return p


def bridge_view(trace, layer: int, head: int, query: int) -> dict:
    """JSON-ready bridge for ``trace`` (details needed); ValueError names a bad field."""
    check_token(trace, "query", query)
    row = trace.query_row(layer, head, query)
    allowed = len(row.allowed_indices)
    blocked = len(row.blocked)
    return {
        **row_place(trace, layer, head, query, row),
        "d_k": row.d_k,
        "d_v": row.d_v,
        "n_keys": row.n_sources,
        "title": f"Layer {layer}, head {head} · query {row.labels[query]}: one real row in the explorer",
        "lede": (
            f"The explorer's calculation on this head's real vectors: q and {row.n_sources} keys of "
            f"d_k = {row.d_k} numbers each, at full precision"
            + (
                f" ({allowed} may be seen; {blocked} later tokens are blocked by the causal mask)"
                if blocked
                else ""
            )
            + f". Values have d_v = {row.d_v} numbers. Read-only: these vectors come from the model."
        ),
        "trace": {
            "q": list(row.q),
            "keys": [list(k) for k in row.keys],
            "labels": list(row.labels),
            "allowed": list(row.allowed),
            "scale": row.scale,
            "d_k": row.d_k,
            "d_v": row.d_v,
            "dots": list(row.dots),
            "scores": list(row.scores),
            "m": row.m,
            "exps": list(row.exps),
            "z": row.z,
            "weights": list(row.weights),
            "output": list(row.output),
            "blocked": list(row.blocked),
            "underflowed": list(row.underflowed),
        },
        "display": _display(row),
        "words": words(row, query),
        "geometry": {"pie": pie(row)},
        "plane": _plane(row),
    }
