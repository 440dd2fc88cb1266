"""The bridge's strings: one real row shown in the explorer's terms, every sentence with its claims.

:func:`display` is the explorer's strings (:func:`attnlab.lab.explorer.display.display_strings`)
trimmed to what the bridge draws per source (``KEPT``: no per-source vectors), plus every key at
full precision and each token's exact text; :func:`plane_labels` names the ``LABELLED`` largest
shares in the plane and says why only those; :func:`bridge_words` gives the title, the lede, the
three steps' headings and the disclosures' summaries. The scale is what it is everywhere: the factor
each dot product is multiplied by (``0.125``, shown as ``1/√64 = 0.125``).

The bridge view (:func:`bridge_view`): one real query row shown in the explorer's terms.

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
  scale as a multiplier (:func:`display`): the page formats nothing;
- ``words`` and ``text``: the row's Match / Share / Mix sentences
  (:func:`attnlab.lab.realmodel.neuron.row_words`: the top 5 named), the title
  and the lede (:func:`bridge_words`), each
  sentence with its claims;
- ``geometry.pie``: the explorer's shares strip (ordered partial sums);
- ``plane``: the plane of q and its top key (:func:`attnlab.lab.realmodel.neuron.plane`):
  q lies in it, so ``q . k = |q| * x_k`` for every key and every score is kept
  by the projection; what it drops is said (``leaves_out``). ``view`` is the
  square window (:func:`attnlab.lab.explorer.geometry.plane_view`); every key is a
  point, only the ``LABELLED`` largest shares carry a label (``labelled``).
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.display import display_strings
from attnlab.lab.explorer.geometry import pie, plane_view
from attnlab.lab.heads import head_spoken
from attnlab.lab.realmodel.neuron import plane, ranked, row_place, row_words, scale_text
from attnlab.lab.realmodel.query import query_row
from attnlab.lab.said import said

LABELLED = 5  # keys named in the plane: the largest shares (more would overprint)
# the explorer's per-source strings the bridge draws (its score table and shares strip): the rest are
# d-number vectors and the explorer's own pictures' labels, N x d strings a real row does not need
KEPT = ("index", "label", "allowed", "dot", "score", "share", "percent", "share_mark")


def display(row: QueryTrace, tokens: Sequence[str]) -> dict:
    """The explorer's display strings for ``row``, without the per-source vectors, keys at full precision.

    ``tokens``: the trace's token texts (each source's ``exact``, its hover title).
    """
    d = display_strings(row)
    sources = []
    for src, key, exact in zip(d["sources"], row.keys, tokens):
        slim = {k: src[k] for k in KEPT}
        slim["exact"] = exact
        slim["key_precise"] = fmt.precise_vector(key)
        slim["summary"] = f"k of {src['label']} · score {src['score']} · share {src['percent']}"
        sources.append(slim)
    return {
        "q": d["q"],
        "q_precise": d["q_precise"],
        "scale": fmt.rounded(row.scale),  # multiplied, as the score header says ("q·k × 0.125")
        "scale_shown": scale_text(row.scale, row.d_k),
        "scale_precise": fmt.precise(row.scale),
        "m": d["m"],
        "z": d["z"],
        "m_z_precise": d["m_z_precise"],
        "output_precise": d["output_precise"],
        "sources": sources,
        "labels": {"score_header": d["labels"]["score_header"]},  # the explorer's score table's column
        "words": d["words"],  # the explorer's pictures' fixed words (the score table's caption, columns)
    }


def plane_labels(row: QueryTrace, plane: dict, tokens: Sequence[str]) -> dict:
    """Which plane points carry a label (the largest shares), their hover titles and the notes."""
    named = set(ranked(row)[:LABELLED])
    q_len = plane["q"][0]
    shown = fmt.percents(row.weights)  # the row's set, as the bridge's table shows it
    keys = []
    for k in plane["keys"]:
        i = k["index"]
        keys.append({**k, "labelled": i in named, "score": row.scores[i], "exact": tokens[i], "title": (
            f"{k['label']}: along q {fmt.rounded(k['x'])}, up {fmt.rounded(k['y'])}; "
            f"score {fmt.rounded(row.scores[i])} = |q| {fmt.rounded(q_len)} × {fmt.rounded(k['x'])} "
            f"× scale {fmt.rounded(row.scale)}; share {shown[i]}; "
            f"the plane shows {fmt.percent(k['kept'])} of its length"
        )})  # fmt: skip
    n = len(keys)
    shown = min(LABELLED, n)
    note = (
        f"All {n} keys the query may see are drawn as points, and only the {shown} with the largest "
        "shares are labelled (more labels would overprint): hover a point for its numbers, or read "
        "every key's in the list above."
        if n > shown
        else f"All {fmt.plural(n, 'key')} the query may see {'is' if n == 1 else 'are'} drawn and labelled."
    )
    return {
        "keys": keys,
        "labels_note": said(note, drawn=n, labelled=sorted(named)),
        "exact": said(
            "q lies in this plane, so each key's dot product with q is |q| times its coordinate along q, "
            "and the projection keeps every score exactly (the scores above are the engine's).",
            keeps="scores",
        ),
        "q_display": f"q (|q| = {fmt.rounded(q_len)})",
    }


def bridge_words(row: QueryTrace, *, layer: int, head: int, query: int) -> dict:
    """The bridge's title, lede (one sentence, with its claims) and the disclosures' summaries."""
    allowed = len(row.allowed_indices)
    blocked = len(row.blocked)
    seen = (f" ({allowed} may be seen, and the causal mask blocks {fmt.plural(blocked, 'later token')})"
            if blocked else "")  # fmt: skip
    return {
        "title": f"{head_spoken(layer, head)} · query {row.labels[query]}: one real row in the explorer",
        "lede": said(
            f"The explorer's calculation runs on this head's real vectors, q and "
            f"{fmt.plural(row.n_sources, 'key')} of d_k = {fmt.plural(row.d_k, 'number')} each at full "
            f"precision{seen}, with values of d_v = {fmt.plural(row.d_v, 'number')}, read-only because they "
            "come from the model.",
            keys=row.n_sources,
            allowed=allowed,
            blocked=blocked,
            d_k=row.d_k,
            d_v=row.d_v,
        ),
        "q_summary": f"q of {row.labels[query]}: {fmt.plural(row.d_k, 'number')} at full precision",
        "keys_summary": f"Every key: {fmt.plural(row.n_sources, 'key')} × {fmt.plural(row.d_k, 'number')} at "
        "full precision",
        "output_summary": f"The output: {fmt.plural(row.d_v, 'number')} at full precision",
        "strip_label": "Attention shares as a strip in token order; the numbers are in the table above",
        "no_plane": "This row's plane cannot be drawn.",
        "match": "1 · Match",
        "share": "2 · Share",
        "mix": "3 · Mix",
        "table_region": "Scores and shares of every key",
    }


def _plane(row, tokens) -> dict:
    p = plane(row)
    p.update(plane_labels(row, p, tokens))
    p["view"] = plane_view([p["q"], *((k["x"], k["y"]) for k in p["keys"])], min_half=1.0, centered=True)
    return p


def bridge_view(trace, layer: int, head: int, query: int) -> dict:
    """JSON-ready bridge for ``trace`` (details needed); ``FieldError`` at a bad index's field."""
    trace.check(layer=layer, head=head)
    trace.check_token("query", query)
    row = query_row(trace, layer, head, query)
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
