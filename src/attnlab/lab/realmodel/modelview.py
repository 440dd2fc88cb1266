"""The model view: every layer's and head's attention as small thumbnails, with what each head does.

A thumbnail of a head's weights ``(T, T)`` is ``size x size`` with
``size = min(T, THUMB)``: the tokens are cut into ``size`` runs as even as
possible (``bins[r] = [start, end)``), and cell ``(r, c)`` is the *largest*
share any query of run r gives any key of run c (a maximum, not a mean, so a
sharp pattern such as the previous-token diagonal stays visible). ``None``
where every pair in the block is blocked (a causal model's upper corner).

One head's view (:func:`head_view`) carries its full weights (``None`` where
blocked) and their two-decimal display strings (``""`` where blocked), and up to
:data:`~attnlab.lab.realmodel.heatmap.PRECISE_UP_TO` tokens every share at full
precision too, so the page draws and labels every cell without formatting a
number itself (its readouts: :mod:`attnlab.lab.realmodel.heatmap`). Every
label, title and sentence of both views is built here, from the head's scores
(:mod:`attnlab.lab.realmodel.kinds`); the page only places them.

The model view's numbers (every head's thumbnail and scores: the trace's
:func:`attnlab.models.traces.overview`) are computed once per trace, in the worker that made
it; the words are made here on the first request and kept as the view's JSON body.
"""

from __future__ import annotations

import base64
import json

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.heads import head_name, head_spoken
from attnlab.lab.realmodel.heatmap import CELL, PRECISE_UP_TO, cell_text, legend
from attnlab.lab.realmodel.kinds import (
    SCORE_OF,
    SHORT,
    THRESHOLDS,
    breadth_sentence,
    breadth_words,
    definitions,
    head_profile,
    kind_phrase,
    layer_profiles,
    profiles_of,
    rule_sentence,
    shares_sentence,
)
from attnlab.lab.realmodel.tokens import short_label, token_label
from attnlab.models.traces import bins, overview

# fmt.rounded(x, 2) for a share x in [0, 1] is one of 101 strings; index 101: blocked
_SHARE_TEXT = np.array([fmt.rounded(k / 100, 2) for k in range(101)] + [""])
_CELLS = {**CELL, "text": cell_text(_SHARE_TEXT[:101].tolist())}  # a head's readout templates, in-cell text


def share_texts(weights: np.ndarray, allowed: np.ndarray) -> list[list[str]]:
    """``fmt.rounded(w, 2)`` of every share in ``weights`` (T, T), ``""`` where not ``allowed``.

    Equal to the scalar formatter cell by cell, at NumPy speed: ``rint(100 w)``
    picks the string, except within 1e-6 of a half, where Python's correctly
    rounded ``round`` decides (``rint`` of the product may round the other way).
    """
    w = np.asarray(weights, dtype=np.float64)
    x = w * 100
    k = np.rint(x)
    for i, j in zip(*np.nonzero(np.abs(x - np.floor(x) - 0.5) < 1e-6)):
        k[i, j] = round(round(float(w[i, j]), 2) * 100)
    k = np.where(allowed, np.clip(k, 0, 100), 101).astype(np.intp)
    return _SHARE_TEXT[k].tolist()


def _weights_json(w: np.ndarray, allowed: np.ndarray) -> list[list[float | None]]:
    """Rows of ``w`` as floats, ``None`` where not allowed (a row allowed on a prefix: sliced, fast)."""
    n = w.shape[1]
    rows = []
    for row, oks in zip(w, allowed):
        seen = int(oks.sum())
        if oks[:seen].all():  # causal or full: keys 0..seen-1
            rows.append(row[:seen].tolist() + [None] * (n - seen))
        else:
            rows.append([x if ok else None for x, ok in zip(row.tolist(), oks.tolist())])
    return rows


def precise_texts(w: np.ndarray, allowed: np.ndarray) -> list[list[str]]:
    """``fmt.precise`` of every share in ``w`` (T, T) (the float32 widened exactly), ``""`` where blocked."""
    return [[fmt.precise(x) if ok else "" for x, ok in zip(row, oks)]
            for row, oks in zip(w.astype(np.float64).tolist(), allowed.tolist())]  # fmt: skip


def packed_weights(w: np.ndarray, allowed: np.ndarray) -> str:
    """``w`` (T, T) as base64 of little-endian float32, row-major; NaN where not allowed.

    The trace's weights are float32, so this is every value exactly, in a quarter
    of the bytes and a small fraction of the time of decimal JSON (the page
    decodes it with a ``Float32Array``: no arithmetic).
    """
    cells = np.where(allowed, w, np.nan).astype("<f4")
    return base64.b64encode(cells.tobytes()).decode("ascii")


def _displays(p: dict) -> dict:
    """Each score as the page prints it: shares in percent, breadth to two decimals, "—" if none."""
    out = {f"{k}_display": fmt.percent(p[k]) for k in ("previous", "first", "self")}
    for k in ("induction", "duplicate"):
        out[f"{k}_display"] = "—" if p[k] is None else fmt.percent(p[k])
    out["breadth_display"] = fmt.rounded(p["breadth"], 2)
    return out


def score_line(p: dict) -> str:
    """A head's kind and scores as a label: ``"induction head; induction 90%, previous token 2%, …"``."""
    d = _displays(p)
    induction = (
        "no induction score (no token repeats)"
        if p["induction"] is None
        else f"induction {d['induction_display']}, duplicate token {d['duplicate_display']}"
    )
    return (
        f"{SHORT[p['kind']]} head; {induction}, previous token {d['previous_display']}, "
        f"first token {d['first_display']}, breadth {d['breadth_display']}"
    )


def head_captions(where: str, kind: str) -> dict:
    """The heatmap's and the lines' labels for a head named ``where`` ("Layer 2, head 5 of minilm")."""
    return {
        "caption": f"{where}: {kind_phrase(kind)}.",
        "lines_label": f"{where}, as lines from each query to its keys: {kind_phrase(kind)}.",
    }


def head_view(trace, layer: int, head: int, *, packed: bool = False) -> dict:
    """JSON-ready: one head's full weights (``None`` = blocked), their display strings, kind and legend.

    ``packed``: ``weights_f32`` (see :func:`packed_weights`) instead of ``weights``: the same numbers.
    Up to ``PRECISE_UP_TO`` tokens, ``precise``: every share at full precision (the cells' readouts).
    """
    w = trace.head_weights(layer, head)  # (T, T)
    n = w.shape[0]
    allowed = trace.allowed
    p = head_profile(w, allowed, trace.ids)
    about = [p["sentence"], shares_sentence(p), breadth_sentence(p["breadth"])]
    kind = p["kind"]
    return {
        "layer": layer,
        "head": head,
        "kv_head": trace.kv_head(head),
        "n_tokens": n,
        "kind": kind,
        "kind_short": SHORT[kind],
        "kind_words": p["sentence"]["text"],
        "kind_sentence": p["sentence"],
        "about": about,
        "about_text": " ".join(s["text"] for s in about),
        **head_captions(f"{head_spoken(layer, head)} of {trace.model}", kind),
        **{k: p[k] for k in ("previous", "first", "induction", "duplicate", "self", "breadth")},
        **_displays(p),
        "breadth_words": breadth_words(p["breadth"], n),
        **({"weights_f32": packed_weights(w, allowed)} if packed else {"weights": _weights_json(w, allowed)}),
        "shares": share_texts(w, allowed),
        "precise": precise_texts(w, allowed) if n <= PRECISE_UP_TO else None,
        "cells": _CELLS,
        "legend": legend(causal=trace.causal),
    }


def head_numbers(p: dict, weights: np.ndarray, allowed: np.ndarray) -> dict:
    """A head of the layer route's answer, printed: its scores (``p``, a profile) and every share.

    ``weights`` and ``allowed`` are the head's ``(T, T)``; a blocked share prints ``""``.
    """
    return {
        "previous": fmt.percent(p["previous"]),
        "first": fmt.percent(p["first"]),
        "breadth": fmt.rounded(p["breadth"], 2),
        "shares": share_texts(weights, allowed),
    }


def model_view(trace, numbers: dict | None = None) -> dict:
    """JSON-ready: every head's thumbnail, kind and scores (layer-major), the runs of tokens, the legend.

    ``numbers``: the trace's :func:`attnlab.models.traces.overview` (the model worker computes it with
    the trace); computed here when not given.
    """
    n = len(trace.tokens)
    numbers = numbers if numbers is not None else overview(trace)
    size = numbers["size"]
    cells = numbers["cells"]  # (L, H, size, size)
    kinds = profiles_of(numbers["scores"], (trace.n_layer, trace.n_head))  # layer-major, L * H
    heads = []
    for layer in range(trace.n_layer):
        for h in range(trace.n_head):
            p = dict(kinds[layer * trace.n_head + h])
            del p["sentence"]  # the head's own view says it; the thumbnail carries the label
            thumb = [[None if np.isnan(x) else round(float(x), 4) for x in row] for row in cells[layer, h]]
            line = score_line(p)
            heads.append(
                {
                    "layer": layer,
                    "head": h,
                    "kv_head": trace.kv_head(h),
                    **p,
                    **_displays(p),
                    "kind_short": SHORT[p["kind"]],
                    "label": f"{head_name(layer, h)} · {SHORT[p['kind']]}",
                    "thumb_text": f"H{h} · {SHORT[p['kind']]}",
                    "title": f"{head_spoken(layer, h)}: {line}",
                    "button_label": f"Head {h}: {line}",
                    "thumb": thumb,
                }
            )
    return {
        "n_layer": trace.n_layer,
        "n_head": trace.n_head,
        "n_tokens": n,
        "size": size,
        "bins": bins(n, size),
        "layers": [{"label": f"Layer {layer}", "short": f"L{layer}"} for layer in range(trace.n_layer)],
        "legend": legend(causal=trace.causal, binned=size < n),
        "kinds": definitions(),
        "rule": rule_sentence(),
        "heads": heads,
    }


def kind_cell(p: dict) -> str:
    """A head's kind with the score that names it: ``"induction 90%"``, ``"focused 0.42"`` (breadth)."""
    kind = p["kind"]
    score = p[SCORE_OF[kind]]
    return f"{kind} {fmt.rounded(score, 2) if SCORE_OF[kind] == 'breadth' else fmt.percent(score)}"


def layer_table(trace, layer: int, first_label: str) -> dict:
    """The ``attnlab heads`` summary of a layer: ``{"header", "rows", "note"}``, every cell a string.

    ``first_label`` is how the table names token 0 (``"0:[CLS]"``).
    """
    header = ["head", "kind (score)", "previous", "first", "induction", "duplicate", "breadth", "KV head"]
    rows = []
    for h, p in enumerate(layer_profiles(trace, layer)):
        d = _displays(p)
        rows.append(
            [
                str(h),
                kind_cell(p),
                *(d[f"{k}_display"] for k in ("previous", "first", "induction", "duplicate", "breadth")),
                str(trace.kv_head(h)),
            ]
        )
    at = {k: fmt.percent(v) for k, v in THRESHOLDS.items()}
    note = (
        f"previous = mean share on the token just before; first = mean share on token 0 ({first_label}); "
        "induction = mean share on the tokens right after every earlier occurrence of the query's own token, "
        "over the tokens that repeat one; duplicate = mean share on those earlier occurrences "
        "(— = no token repeats); breadth = row entropy / uniform entropy. "
        f"kind: the pattern furthest over its threshold (induction {at['induction']}, previous "
        f"{at['previous-token']}, duplicate {at['duplicate-token']}, self {at['self']}), else first "
        f"token at {at['first-token']}, else broad (breadth {fmt.rounded(THRESHOLDS['broad'], 2)} or "
        "more) or focused. Pick one with --head N."
    )
    return {"header": header, "rows": rows, "note": note}


def head_table_heading(trace, layer: int, head: int) -> str:
    """The first line of ``attnlab heads --head N``: the head, its kind sentence, how to read the table."""
    p = head_profile(trace.head_weights(layer, head), trace.allowed, trace.ids)
    shared = f" (shares KV head {trace.kv_head(head)})" if len(trace.kv_groups) < trace.n_head else ""
    sentence = p["sentence"]["text"]
    return (
        f"head {head} of 0..{trace.n_head - 1}{shared}: {sentence[0].lower()}{sentence[1:]} "
        "Row = query token, column = key token, share of its attention"
        + (" (a causal model: '.' = a later token it may not see)." if trace.causal else ".")
    )


def named_caption(layer_name: str, head_name: str) -> dict:
    """The heatmap's and the lines' labels where the layer and head have names of their own (the widget)."""
    return {
        "caption": f"Attention of {layer_name}, {head_name}: rows are queries, columns are keys",
        "lines_label": f"Attention of {layer_name}, {head_name}, as lines from each query to its keys",
    }


def widget_tokens(tokens: list[str]) -> list[dict]:
    """Each token as the widget's toolbar and axes show it: visible label, its short form, exact text."""
    out = []
    for t in tokens:
        shown = token_label(t)
        out.append({**shown, "short": short_label(shown["label"])})
    return out


def precise_row(trace, layer: int, head: int, query: int) -> dict:
    """JSON-ready: one query's share of each key, in percent and at full precision ("blocked" if not seen)."""
    w = trace.head_weights(layer, head)[query]  # (T,)
    ok = trace.allowed[query]
    label = token_label(trace.tokens[query])["label"]
    shown = fmt.percents(np.where(ok, w, 0.0).astype(np.float64).tolist())  # one set, adding up to 100
    return {
        "query": query,
        "title": f"Query {query} ({label}): its share of each key, at full precision",
        "sources": [
            {
                "index": j,
                **token_label(trace.tokens[j]),
                "allowed": bool(ok[j]),
                "share": shown[j] if ok[j] else "blocked",
                "precise": fmt.precise(x) if ok[j] else "",
            }
            for j, x in enumerate(w.astype(np.float64).tolist())
        ],
    }


def model_view_body(job_id: str, trace, numbers: dict | None = None) -> str:
    """The model view's JSON answer for job ``job_id`` (no NaN: ``allow_nan=False``), from the trace's
    overview ``numbers`` where the worker sent them."""
    return json.dumps({"job": job_id, **model_view(trace, numbers)}, allow_nan=False, separators=(",", ":"))
