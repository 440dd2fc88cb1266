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
- ``display``: the explorer's strings trimmed of the per-source vectors, plus
  ``key_precise`` and ``exact`` (the token's text) per source, ``q_precise``, and the
  scale as a multiplier (:func:`attnlab.lab.realmodel.bridge.display`): the page formats nothing;
- ``words`` and ``text``: the row's Match / Share / Mix sentences
  (:func:`attnlab.lab.realmodel.neuron.row_words`: the top 5 named), the title
  and the lede (:func:`attnlab.lab.realmodel.bridge.bridge_words`), each
  sentence with its claims;
- ``geometry.pie``: the explorer's shares strip (ordered partial sums);
- ``plane``: the plane of q and its top key (:func:`attnlab.models.neuron.plane`):
  q lies in it, so ``q . k = |q| * x_k`` for every key and every score is kept
  by the projection; what it drops is said (``leaves_out``). ``view`` is the
  square window (:func:`attnlab.lab.explorer.geometry.plane_view`); every key is a
  point, only the ``LABELLED`` largest shares carry a label (``labelled``).
"""

from __future__ import annotations

from attnlab.lab.explorer.geometry import pie, plane_view
from attnlab.lab.realmodel.bridge import LABELLED, bridge_words, display, plane_labels
from attnlab.lab.realmodel.neuron import row_words
from attnlab.models.neuron import plane, row_place

__all__ = ["LABELLED", "bridge_view"]


def _plane(row, tokens) -> dict:
    p = plane(row)
    p.update(plane_labels(row, p, tokens))
    p["view"] = plane_view([p["q"], *((k["x"], k["y"]) for k in p["keys"])], min_half=1.0, centered=True)
    return p


def bridge_view(trace, layer: int, head: int, query: int) -> dict:
    """JSON-ready bridge for ``trace`` (details needed); ``FieldError`` at a bad index's field."""
    trace.check(layer=layer, head=head)
    trace.check_token("query", query)
    row = trace.query_row(layer, head, query)
    text = bridge_words(row, layer=layer, head=head, query=query)
    return {
        **row_place(trace, layer, head, query, row),
        "d_k": row.d_k,
        "d_v": row.d_v,
        "n_keys": row.n_sources,
        "title": text.pop("title"),
        "lede": text.pop("lede"),
        "text": text,
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
        "display": display(row, trace.tokens),
        "words": row_words(row, query),
        "geometry": {"pie": pie(row)},
        "plane": _plane(row, trace.tokens),
    }
