"""Every display string for one query's trace, built in one place.

Public API (stable; ``lab/explorer/answer.py``, ``lab/explorer/view.py``,
``lab/notebook/playback.py`` and ``lab/realmodel`` use it):

- :func:`display_strings` ``(trace) -> dict``: what the explorer writes for a
  :class:`~attnlab.engine.single.QueryTrace`: q, scale, m, Z, output and one
  entry per source (key, value, dot, score, share, percent, carry, precise),
  each rounded by :mod:`attnlab.lab.numbers` (3 decimals, never ``-0``) or at
  full precision (``*_precise``, ``q_coords``, ``values_coords``: ``-0`` kept,
  because those are what the learner typed and what reproduces the numbers).
- :func:`reference_strings` ``(reference) -> dict``: the comparison's rounded
  numbers (q, scores, weights, output) for the reference trace.
- :func:`comparison` ``(trace) -> (dict, reference | None)``: the comparison
  with q = [2, 1] over the same keys and values, its strings included.
- :func:`row_strings` ``(trace) -> dict``: one held-sequence row as the table
  writes it (``"blocked"`` where the mask refuses a source, never a share of 0).
- :func:`share_percents` ``(trace) -> list``: the sources' shares in percent, one set
  rounded to add up to exactly 100 (largest remainder); the pie, the table, the strip,
  the cards and the words all show these.
- :func:`labels` ``(trace) -> dict``: the explorer's headers, titles, formulas
  and hints that depend on the numbers, each ``{"text": ..., "claims": {...}}``
  (the facts the text asserts, which ``tests/lab/explorer/test_claims.py``
  checks against the trace). ``display_strings`` serves them as ``labels``.

The scale has one meaning everywhere: the factor the engine applies to each
dot product. The default (``trace.scale is None``) divides by √d_k, and a
label says "q·k / √2" only then; an explicit scale multiplies ("q·k × 0.5").

A blocked source (``trace.allowed[i]`` false) shows ``"blocked"`` for its share
and percent; its dot and score are still computed and shown, as the engine does.
"""

from __future__ import annotations

import math

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.compare import compare, reference_for, reference_query
from attnlab.lab.explorer.geometry import convex_hull
from attnlab.lab.said import said

NOTATION_LIMIT = 8  # the explorer's most sources (and q's coordinates) written out in the notation
COUNT_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight")
# The q handle's arrow keys move q by QUERY_STEP (with Shift by QUERY_BIG_STEP); the page
# takes both from the answer (``query_steps``), and the handle's name says them.
QUERY_STEP = 0.1
QUERY_BIG_STEP = 1.0
# The pictures' fixed words: the same in every answer, so a widget or the playback draws
# with them as the page does (each picture's number-dependent labels are per source below).
PICTURE_WORDS = {
    "keys_zoomed": "keys, zoomed in",
    "values_2d_only": "The value plane draws 2-D values only.",
    "score_table": "Scores and shares by source",
    "source": "Source",
    "share": "Share",
    "handle_role": "draggable point",
    "match_help": "Drag anywhere in the plane, or focus q and use the arrow keys "
    f"(Shift for steps of {fmt.rounded(QUERY_BIG_STEP)}).",
}


def share_percents(trace: QueryTrace) -> list[str]:
    """Each source's share in percent as every view of the trace shows it, ``"blocked"`` where masked.

    The shares are one set, rounded together by :func:`attnlab.lab.numbers.percents`: the
    allowed sources' percents add up to exactly 100.
    """
    shown = fmt.percents(trace.weights)
    return [text if ok else "blocked" for text, ok in zip(shown, trace.allowed)]


def _source(trace: QueryTrace, i: int, percent: str) -> dict:
    label = trace.labels[i]
    ok = trace.allowed[i]
    carry = trace.carries[i]
    precise = (
        f"{label}: key={fmt.precise_vector(trace.keys[i])}; "
        f"value={fmt.precise_vector(trace.values[i])}; dot={fmt.precise(trace.dots[i])}; "
        f"score={fmt.precise(trace.scores[i])}; "
        + (
            f"share={fmt.precise(trace.weights[i])}; contribution={fmt.precise_vector(carry)}"
            if ok
            else "blocked by the mask (share 0, no contribution)"
        )
    )
    coords = ("x", "y")
    return {
        "label": label,
        "index": i,
        "allowed": ok,
        # the pictures' and the cards' names for this source
        "key_mark": f"k{label}",
        "value_mark": f"v{label}" + ("" if ok else " (blocked)"),
        "share_mark": f"{label} {percent}",
        "score_mark": f"{label} {fmt.rounded(trace.scores[i])}",
        "card_title": f"Source {label}",
        "card_index": f"index {i}",
        "carry_term": [["Carry w", label], ["v", label]],  # [text, subscript] pairs: Carry w_A v_A
        "value_legend": f"Value v{label}",
        "value_fields": [
            f"Value {label}, {coords[j] if j < len(coords) else f'coordinate {j + 1}'}"
            for j in range(trace.d_v)
        ],
        "key": fmt.vector(trace.keys[i]),
        "value": fmt.vector(trace.values[i]),
        "dot": fmt.rounded(trace.dots[i]),
        "score": fmt.rounded(trace.scores[i]),
        "share": fmt.rounded(trace.weights[i]) if ok else "blocked",
        "percent": percent,
        "carry": fmt.vector(carry),
        "precise": precise,
    }


def display_strings(trace: QueryTrace, geometry: dict | None = None) -> dict:
    """Return every string the explorer shows for ``trace`` (the shape of ``DisplayOut``).

    With ``geometry`` (``lab.explorer.geometry.geometry(trace)``) it also names the
    points the planes cannot hold (``off``) and says each plane's grid (``labels``).
    """
    scale = "√" + fmt.rounded(trace.d_k) if trace.scale is None else fmt.significant(trace.scale)
    return {
        "q": fmt.vector(trace.q),
        "q_mark": f"q {fmt.vector(trace.q)}",
        "output_mark": f"o {fmt.vector(trace.output)}",
        "precise_q": f"q = {fmt.precise_vector(trace.q)}",
        "precise_output": f"output={fmt.precise_vector(trace.output)}",
        "query_steps": {"step": QUERY_STEP, "big": QUERY_BIG_STEP},
        "words": PICTURE_WORDS,
        "q_coords": [fmt.precise(x) for x in trace.q],
        "q_precise": fmt.precise_vector(trace.q),
        "keys_coords": [[fmt.precise(x) for x in k] for k in trace.keys],
        "values_coords": [[fmt.precise(x) for x in v] for v in trace.values],
        "scale": scale,
        "m": fmt.rounded(trace.m),
        "z": fmt.rounded(trace.z),
        "output": fmt.vector(trace.output),
        "output_precise": fmt.precise_vector(trace.output),
        "m_z_precise": f"m={fmt.precise(trace.m)}; stable denominator={fmt.precise(trace.z)}",
        "sources": [_source(trace, i, p) for i, p in enumerate(share_percents(trace))],
        "off": off_marks(trace, geometry),
        "labels": labels(trace) | ({} if geometry is None else grid_notes(trace, geometry)),
    }


def _point_name(trace: QueryTrace, kind: str, index: int | None) -> str:
    return {"q": "q", "output": "o"}.get(kind) or ("k" if kind == "key" else "v") + trace.labels[index]


def off_marks(trace: QueryTrace, geometry: dict | None) -> dict:
    """Each plane's off-plot markers' labels (``"kB →"``, in ``geometry``'s ``key_off`` /
    ``value_off`` order) and its note (``"Off this plane: q, kB (see numbers)"``, empty when none)."""
    out = {}
    for plane in ("key", "value"):
        items = [] if geometry is None else geometry[f"{plane}_off"]
        names = [_point_name(trace, o["kind"], o["index"]) for o in items]
        out[plane] = {
            "marks": [f"{name} →" for name in names],
            "note": f"Off this plane: {', '.join(names)} (see numbers)" if names else "",
        }
    return out


def grid_notes(trace: QueryTrace, geometry: dict) -> dict[str, dict]:
    """The geometry views' captions: each plane's grid step and what its marks are."""
    notes = {}
    for plane, space, marks in (
        ("key", "Key space only.", "Amber marks the query q you control; ink marks the fixed keys."),
        (
            "value", "Value space only.",
            "Teal marks the mixed output o; the shaded hull of the allowed values bounds its "
            "possible positions.",
        ),
    ):
        view = geometry[f"{plane}_view"]
        if view is None:
            notes[f"{plane}_grid"] = said(f"{space} The plane draws 2-D points only.", step=None)
            continue
        step = view["step"]
        unit = "unit" if step == 1 else "units"
        notes[f"{plane}_grid"] = said(
            f"{space} Each grid interval is {fmt.rounded(step)} coordinate {unit} on both axes. {marks}",
            step=step,
        )
    return notes


# --- labels: headers, titles, formulas and hints, each with its claims -------------


def scale_claims(trace: QueryTrace) -> dict:
    """How the engine turned dots into scores: ``{"op": "divide" or "multiply", "by", "shown"}``."""
    if trace.scale is None:
        return {"op": "divide", "by": math.sqrt(trace.d_k), "d_k": trace.d_k, "shown": f"√{trace.d_k}"}
    return {"op": "multiply", "by": trace.scale, "shown": fmt.significant(trace.scale)}


def score_expression(trace: QueryTrace) -> str:
    """``q·k / √2`` for the default scale, ``q·k × 0.5`` for an explicit one."""
    sc = scale_claims(trace)
    return f"q·k / {sc['shown']}" if sc["op"] == "divide" else f"q·k × {sc['shown']}"


def _count(n: int, noun: str) -> str:
    word = COUNT_WORDS[n] if n < len(COUNT_WORDS) else str(n)
    return f"{word} {noun}{'' if n == 1 else 's'}"


def hull_claims(trace: QueryTrace) -> dict:
    """What region of the value plane the output stays in: its shape and its corners."""
    allowed = [trace.values[i] for i in trace.allowed_indices]
    n = len(allowed)
    if trace.d_v != 2:
        return {"allowed": n, "shape": None, "hull": None}
    hull = convex_hull(allowed)
    if n == 1:
        shape = "point"
    elif len(hull) == 1:
        shape = "same-point"
    elif len(hull) == 2:
        shape = "segment"
    elif n == 3 and len(hull) == 3:
        shape = "triangle"
    else:
        shape = "hull"
    return {"allowed": n, "shape": shape, "hull": hull}


def hull_sentence(trace: QueryTrace, *, shaded: bool = True) -> tuple[str, dict]:
    """One sentence on where the output can be, true for this example's allowed values.

    ``shaded`` names the shading of the value plane (the Mix step draws it).
    """
    c = hull_claims(trace)
    text = {
        None: "The output is a blend of the allowed values, with the shares as weights.",
        "point": "With one allowed value, the output is that value itself.",
        "same-point": "Every allowed value is the same point, so the output is that point.",
        "segment": (
            "The output can never leave the segment between the two allowed values."
            if c["allowed"] == 2
            else "The allowed values lie on one line, so the output can never leave the "
            "segment they span."
        ),
        "triangle": f"The output can never leave the {'shaded ' if shaded else ''}triangle of the "
        "three allowed values.",
        "hull": "The output can never leave the convex hull"
        + (" (the shaded shape)" if shaded else ", the smallest convex shape holding all")
        + " of the allowed values.",
    }[c["shape"]]
    return text, c


def labels(trace: QueryTrace) -> dict[str, dict]:
    """Return the explorer's number-dependent labels, each ``{"text", "claims"}``.

    Keys: ``caption`` (under the title), ``eyebrow``, ``score_header`` (the
    score table's column), ``score_title`` (the score axis), ``score_formula``
    and ``score_code`` (step 1 of the formulas), ``scale_note``,
    ``share_title``, ``mix_hint`` (where the output can be), ``shapes`` and
    ``notation`` ("Read the current numbers"), ``python_expected`` and
    ``handle`` (the q handle's name for a screen reader, with its arrow-key steps).
    """
    sc = scale_claims(trace)
    expr = score_expression(trace)
    n = trace.n_sources
    order = ", ".join(trace.labels)
    if sc["op"] == "divide":
        code = "sum(qj * kj for qj, kj in zip(q, k)) / sqrt(d_k)"
        note = (
            f"The scale here divides each dot product by {sc['shown']}, the square root of d_k "
            f"(the {fmt.plural(trace.d_k, 'coordinate')} of q and of each key)."
        )
        formula = f"sᵢ = (q · kᵢ) / {sc['shown']}"
    else:
        code = "sum(qj * kj for qj, kj in zip(q, k)) * scale"
        note = f"The scale here multiplies each dot product by {sc['shown']}."
        formula = f"sᵢ = (q · kᵢ) × {sc['shown']}"
    equal = trace.d_k == trace.d_v
    shapes = (
        f"Shapes: q and each k have d_k = {fmt.plural(trace.d_k, 'coordinate')}. Each v and the "
        f"output have d_v = {fmt.plural(trace.d_v, 'coordinate')}."
        + (" Equal widths here do not make the spaces identical." if equal else "")
    )
    # the explorer's notation lists q's coordinates and every key; a real model's row
    # (many sources, wide keys) shows its keys in a table instead, so it is not written out
    small = n <= NOTATION_LIMIT and trace.d_k <= NOTATION_LIMIT
    symbols = ", ".join(f"q{chr(0x2081 + j)}" for j in range(min(trace.d_k, 9)))
    keys = "; ".join(
        f"k_{label} = {fmt.vector(k).replace('-', fmt.MINUS)}" for label, k in zip(trace.labels, trace.keys)
    ) if small else ""
    hull_text, hull = hull_sentence(trace)
    mix_hint = (
        "Coloured arrows add w·v for each allowed source, tip to tail. "
        f"{hull_text} The view fits the values with equal units on both axes."
    )
    return {
        "caption": said(f"q = {fmt.vector(trace.q)} · Compare the query with each key.", q=list(trace.q)),
        "eyebrow": said(f"One query · {_count(n, 'source')} · one continuous example", sources=n),
        "score_header": said(f"Score {expr}", scale=sc),
        "score_title": said(f"Scaled scores · s = {expr}", scale=sc),
        "score_formula": said(formula, scale=sc),
        "score_code": said(code, scale=sc),
        "scale_note": said(note, scale=sc),
        "share_title": said(
            f"Attention shares w in {order} order · the full strip is 1",
            order=list(trace.labels), total=math.fsum(trace.weights),
        ),
        "mix_hint": said(mix_hint, **hull, output=list(trace.output)),
        "shapes": said(shapes, d_k=trace.d_k, d_v=trace.d_v),
        "notation": said(
            f"q = [{symbols}]; {keys}"
            if small
            else f"q has {fmt.plural(trace.d_k, 'coordinate')}; the keys are in the table.",
            keys=[list(k) for k in trace.keys] if small else None,
        ),
        "python_expected": said(
            f"attnlab's engine output: {fmt.vector(trace.output)} (rounded to three decimals); "
            "the program prints the same.",
            output=list(trace.output),
        ),
        "handle": said(
            f"Query q at {fmt.vector(trace.q)}. Arrow keys move it by {fmt.rounded(QUERY_STEP)}, "
            f"with Shift by {fmt.rounded(QUERY_BIG_STEP)}.",
            q=list(trace.q), step=QUERY_STEP, big_step=QUERY_BIG_STEP,
        ),
    }


def reference_strings(reference: QueryTrace) -> dict:
    """Return the comparison reference's numbers as the page writes them."""
    return {
        "q": fmt.vector(reference.q),
        "scores": [fmt.rounded(s) for s in reference.scores],
        "weights": [fmt.rounded(w) for w in reference.weights],
        "output": fmt.vector(reference.output),
    }


def row_strings(trace: QueryTrace) -> dict:
    """Return one held-sequence row's texts: output, scores and shares (``blocked`` if masked)."""
    return {
        "output_text": fmt.vector(trace.output),
        "scores_text": [
            "blocked" if not ok else fmt.rounded(s) for s, ok in zip(trace.scores, trace.allowed)
        ],
        "weights_text": share_percents(trace),
    }


def comparison(trace: QueryTrace) -> tuple[dict, QueryTrace | None]:
    """Return the comparison with q = [2, 1] (the shape of ``CompareOut``) and its reference trace.

    ``title`` ("Compared with q = [2, 1]:") and ``summary`` are sentences with their
    claims. When the reference cannot be computed (its scores overflow) the answer
    has ``available`` false, a ``message`` in the lab's words and no reference.
    """
    ref_q = list(reference_query(trace.d_k))
    title = said(f"Compared with q = {fmt.vector(ref_q)}:", q=ref_q)
    try:
        reference = reference_for(trace)
    except ValueError as error:
        message = f"The comparison with q = {fmt.vector(ref_q)} is not available: {error}."
        return (
            {
                "title": title,
                "available": False,
                "message": message,
                "active": False,
                "summary": None,
                "reference": None,
                "changed": None,
                "display": None,
            },
            None,
        )
    result = compare(trace, reference).to_dict()
    changed = result["changed"]
    flat = [
        *changed["dots"],
        *changed["scores"],
        changed["m"],
        changed["z"],
        *changed["weights"],
        *(c for row in changed["carries"] for c in row),
        *changed["output"],
    ]
    return (
        {
            "title": title,
            "available": True,
            "message": "",
            "active": any(flat),
            "summary": result["summary"],
            "reference": result["reference"],
            "changed": changed,
            "display": reference_strings(reference),
        },
        reference,
    )


__all__ = [
    "comparison", "display_strings", "hull_claims", "hull_sentence", "labels", "reference_strings",
    "row_strings", "scale_claims", "score_expression", "share_percents",
]
