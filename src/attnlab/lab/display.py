"""Every display string for one query's trace, built in one place.

Public API (stable; ``web/api.py``, ``lab/sequence.py`` and ``lab/playback.py`` use it):

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

A blocked source (``trace.allowed[i]`` false) shows ``"blocked"`` for its share
and percent; its dot and score are still computed and shown, as the engine does.
"""

from __future__ import annotations

from attnlab.engine.single import QueryTrace
from attnlab.lab import numbers as fmt
from attnlab.lab.compare import compare, reference_for, reference_query


def _source(trace: QueryTrace, i: int) -> dict:
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
    return {
        "label": label,
        "index": i,
        "allowed": ok,
        "key": fmt.vector(trace.keys[i]),
        "value": fmt.vector(trace.values[i]),
        "dot": fmt.rounded(trace.dots[i]),
        "score": fmt.rounded(trace.scores[i]),
        "share": fmt.rounded(trace.weights[i]) if ok else "blocked",
        "percent": fmt.percent(trace.weights[i]) if ok else "blocked",
        "carry": fmt.vector(carry),
        "precise": precise,
    }


def display_strings(trace: QueryTrace) -> dict:
    """Return every string the explorer shows for ``trace`` (the shape of ``DisplayOut``)."""
    scale = "√" + fmt.rounded(trace.d_k) if trace.scale is None else fmt.rounded(trace.scale)
    return {
        "q": fmt.vector(trace.q),
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
        "sources": [_source(trace, i) for i in range(len(trace.labels))],
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
        "weights_text": [
            "blocked" if not ok else fmt.percent(w) for w, ok in zip(trace.weights, trace.allowed)
        ],
    }


def comparison(trace: QueryTrace) -> tuple[dict, QueryTrace | None]:
    """Return the comparison with q = [2, 1] (the shape of ``CompareOut``) and its reference trace.

    When the reference cannot be computed (its scores overflow) the answer has
    ``available`` false, a ``message`` in the lab's words and no reference.
    """
    try:
        reference = reference_for(trace)
    except ValueError as error:
        message = (
            f"The comparison with q = {fmt.vector(reference_query(trace.d_k))} is not available: {error}."
        )
        return (
            {
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


__all__ = ["comparison", "display_strings", "reference_strings", "row_strings"]
