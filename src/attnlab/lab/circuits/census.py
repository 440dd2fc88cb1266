"""The head census: every head's five scores as a layers × heads map, the heads ranked by one
score, and the evidence behind a head's score.

The scores are the Real model view's (:mod:`attnlab.lab.realmodel.kinds`: previous token,
first token, induction, duplicate token, breadth), computed once per trace where the trace is
made (the model view's heads, worded from the numbers the worker sent): :func:`census_view` only reads them,
so the census of 270 heads answers without recomputing any head's weights.

:func:`evidence` opens one head: the value each query contributes to the score (the row of
numbers the score averages: ``queries``), and the query rows where the score comes from (the
``ROWS`` queries contributing most, each with the keys the score counts and its strongest
keys). Per query i (weights ``w`` (T, T), row i = query i):

- previous: ``w[i, i-1]``, queries 1..T-1;
- first: ``w[i, 0]``, queries 1..T-1;
- induction: the sum of ``w[i, k]`` over i's targets (keys k <= i-1 with ``t[k-1] == t[i]``),
  over the queries that have one;
- duplicate: the sum of ``w[i, j]`` over the earlier occurrences j < i of i's token;
- breadth: row i's entropy over that of an even split over the keys it may see, over the rows
  that may see two keys or more.

The mean of ``queries``' counted values is the head's score (to float rounding: a mean of
per-query sums against ``kinds``' sum over every pair).

Every number carries its descriptor for "How is this computed?" (``lab/realmodel/program``): a
head's score as the census computes it (kind ``census``: every head at once, as the model view
does), a query's value and their mean (kind ``evidence``), a key's share (kind ``weight``).
"""

from __future__ import annotations

import json

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.heatmap import grid, share_legend
from attnlab.lab.circuits.marks import marked, number
from attnlab.lab.heads import head_name, head_spoken
from attnlab.lab.realmodel.kinds import SHORT, THRESHOLDS, kind_phrase
from attnlab.lab.realmodel.tokens import row_label
from attnlab.lab.said import said
from attnlab.models.circuits.scores import CENSUS, query_values, targets

SCORES = ("induction", *(s for s in CENSUS if s != "induction"))  # the census's scores, in the picker's order
NAMES = {
    "induction": "induction",
    "previous": "previous token",
    "first": "first token",
    "duplicate": "duplicate token",
    "breadth": "breadth",
}
THRESHOLD = {  # the threshold at which a score names a head (kinds.THRESHOLDS by kind)
    "induction": THRESHOLDS["induction"],
    "previous": THRESHOLDS["previous-token"],
    "first": THRESHOLDS["first-token"],
    "duplicate": THRESHOLDS["duplicate-token"],
    "breadth": THRESHOLDS["broad"],
}
NAMED = {"induction": "induction", "previous": "previous-token", "first": "first-token",
         "duplicate": "duplicate-token", "breadth": "broad"}  # fmt: skip
RANKED = 20  # heads in the ranked list
TOP = 3  # heads named in the summary sentence
ROWS = 3  # query rows opened as a head's evidence
ROW_KEYS = 3  # a row's strongest keys shown besides the keys its score counts

DEFINITIONS = {
    "induction": "Induction: the share a token that repeats an earlier token gives the tokens right "
    "after every earlier occurrence of it, summed over those occurrences (what came next each time "
    "before), averaged over the tokens that repeat one.",
    "previous": "Previous token: the share each token gives the token just before it, averaged over "
    "every token but the first.",
    "first": "First token: the share each token gives the first token (a resting place, the "
    "attention sink), averaged over every token but the first.",
    "duplicate": "Duplicate token: the share a token that repeats an earlier token gives every earlier "
    "occurrence of it, summed, averaged over the tokens that repeat one.",
    "breadth": "Breadth: each row's entropy divided by that of an even split over the keys it may "
    "see (0 = all on one key, 1 = perfectly even), averaged over the rows that may see two keys "
    "or more.",
}
UNITS = {  # what one counted value is
    "induction": "token that repeats an earlier one",
    "previous": "token but the first",
    "first": "token but the first",
    "duplicate": "token that repeats an earlier one",
    "breadth": "row that may see two keys or more",
}


def display(score: str, value: float | None) -> str:
    """A score as the page prints it: shares in percent, breadth to two decimals, "—" for none."""
    if value is None:
        return "—"
    return fmt.rounded(value, 2) if score == "breadth" else fmt.percent(value)


def score_choices() -> list[dict]:
    """The score picker's options: ``{"score", "label"}``."""
    return [{"score": s, "label": NAMES[s].capitalize()} for s in SCORES]


def _how(score: str, layer: int, head: int) -> dict:
    """One head's score as "How is this computed?" names it (``lab/realmodel/program``, on the trace):
    as the census computes it, every head's weights at once (the model view's scores)."""
    return {"kind": "census", "layer": layer, "head": head, "score": score}


def _evidence_how(score: str, layer: int, head: int, query: int | None = None) -> dict:
    """A number of a head's evidence: query ``query``'s value, or (None) the mean of the counted values."""
    out = {"kind": "evidence", "layer": layer, "head": head, "score": score}
    return out if query is None else out | {"query": query}


def _share_how(layer: int, head: int, query: int, key: int) -> dict:
    """The share query ``query`` gives key ``key``: the head view's heatmap number."""
    return {"kind": "weight", "layer": layer, "head": head, "query": query, "key": key}


def census_view(heads: list[dict], *, score: str, n_layer: int, n_head: int, n_tokens: int, model: str,
                job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready census of one score from the model view's ``heads`` (layer-major dicts with
    ``layer``, ``head``, ``kv_head``, ``kind`` and each score; ``induction`` and ``duplicate``
    None when no token repeats)."""
    name = NAMES[score]
    values = np.full((n_layer, n_head), np.nan)
    for h in heads:
        if h[score] is not None:
            values[h["layer"], h["head"]] = h[score]
    kind_of = {(h["layer"], h["head"]): h["kind"] for h in heads}
    kv_of = {(h["layer"], h["head"]): h["kv_head"] for h in heads}
    scored = [h for h in heads if h[score] is not None]
    order = sorted(scored, key=lambda h: (-h[score], h["layer"], h["head"]))
    ranked = [
        {
            "rank": r + 1,
            "layer": h["layer"],
            "head": h["head"],
            "kv_head": h["kv_head"],
            "value": h[score],
            "display": display(score, h[score]),
            "label": head_name(h["layer"], h["head"]),
            "kind": h["kind"],
            "kind_name": SHORT[h["kind"]],
            "title": f"{head_spoken(h['layer'], h['head'])}: {name} {display(score, h[score])}; "
            f"{kind_phrase(h['kind'])}",
            "how": _how(score, h["layer"], h["head"]),
        }
        for r, h in enumerate(order[:RANKED])
    ]

    def cell(i: int, j: int, v: float | None) -> str:
        return "" if v is None else display(score, v)

    def title(i: int, j: int, v: float | None) -> str:
        where = f"{head_spoken(i, j)} (KV head {kv_of[(i, j)]})"
        if v is None:
            return f"{where}: no {name} score (no token of this text repeats an earlier one)"
        return f"{where}: {name} {display(score, v)}; {kind_phrase(kind_of[(i, j)])}"

    blank = "no score (no token repeats)" if score in ("induction", "duplicate") else None
    return {
        "job": job,
        "model": model,
        "score": score,
        "name": name,
        "n_layer": n_layer,
        "n_head": n_head,
        "n_tokens": n_tokens,
        "scores": score_choices(),
        "definition": said(DEFINITIONS[score], score=score, threshold=THRESHOLD[score]),
        "map": grid(
            values, rows=[f"L{i}" for i in range(n_layer)], columns=[f"H{j}" for j in range(n_head)],
            cell=cell, title=title, scale="share", legend=share_legend(f"{name} score", blank=blank),
            how=lambda i, j: _how(score, i, j),
            label=f"Every head's {name} score: rows are layers 0 to {n_layer - 1}, columns heads 0 to "
            f"{n_head - 1}",
        ),  # fmt: skip
        "ranked": ranked,
        "ranked_title": f"Heads by {name} score, highest first (the top {len(ranked)})",
        "summary": summary(score, order),
        "reach": reach(score, [h[score] for h in heads], len(heads)),
    }


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def summary(score: str, order: list[dict]) -> dict:
    """The heads with the highest score, named with their scores (claims: ``top`` [[layer, head, score]])."""
    name = NAMES[score]
    if not order:
        return said(
            f"No token of this text repeats an earlier one, so no head has {_article(name)} {name} score: "
            "repeat a random run to find one.",
            top=[],
        )
    top = order[:TOP]
    parts: list = [f"Highest {name} score: "]
    for k, h in enumerate(top):
        parts.append("" if k == 0 else " and " if k == len(top) - 1 else ", ")
        shown = number(display(score, h[score]), _how(score, h["layer"], h["head"]), h[score])
        parts += [f"{head_name(h['layer'], h['head'])} (", shown, ")"]
    return marked(*parts, ".", top=[[h["layer"], h["head"], h[score]] for h in top])


def reach(score: str, values: list[float | None], total: int) -> dict:
    """How many heads reach the score's naming threshold (claims ``count``, ``total``, ``threshold``)."""
    threshold = THRESHOLD[score]
    count = sum(1 for v in values if v is not None and v >= threshold)
    at = display(score, threshold)
    noun = "head scores" if count == 1 else "heads score"
    return said(
        f"{count} of {total} {noun} {at} or more, the threshold at which a head's {NAMES[score]} score "
        f"can name it {kind_phrase(NAMED[score])}.",
        count=count,
        total=total,
        threshold=threshold,
    )


# -- one head's evidence ------------------------------------------------------------------------


def _target_phrase(score: str) -> str:
    return {
        "previous": "the token just before it",
        "first": "the first token",
        "induction": "the tokens right after every earlier occurrence of its token",
        "duplicate": "every earlier occurrence of its token",
    }[score]


def evidence(weights: np.ndarray, allowed: np.ndarray, ids, tokens: list[str], *, layer: int, head: int,
             kv_head: int, score: str, model: str, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: where head (``layer``, ``head``)'s ``score`` comes from (see the module).

    ``weights`` (T, T) the head's (float32 as the trace's), ``allowed`` (T, T) (True = may
    attend), ``ids`` (T,) the token ids, ``tokens`` (T,) their texts.
    """
    w = np.asarray(weights)
    ok = np.asarray(allowed, dtype=bool)
    values = query_values(w, ok, ids, score)
    counted = ~np.isnan(values)
    n = int(counted.sum())
    name = NAMES[score]
    labels = [row_label(i, t) for i, t in enumerate(tokens)]
    queries = [
        {
            "index": i,
            "label": labels[i],
            "exact": tokens[i],
            "counted": bool(counted[i]),
            "value": float(values[i]) if counted[i] else None,
            "display": display(score, float(values[i])) if counted[i] else "",
            "title": f"{labels[i]}: {display(score, float(values[i]))}" if counted[i]
            else f"{labels[i]}: not counted ({_not_counted(score)})",
            "how": _evidence_how(score, layer, head, i) if counted[i] else None,
        }
        for i in range(len(tokens))
    ]  # fmt: skip
    mean = float(values[counted].mean()) if n else None
    where = head_spoken(layer, head)
    if n:
        averaged = marked(
            f"The score is the mean of these {n} values, one per {UNITS[score]}: ",
            number(display(score, mean), _evidence_how(score, layer, head), mean), ".",
            count=n, mean=mean,
        )  # fmt: skip
    else:
        averaged = marked(f"No query counts here ({_not_counted(score)}), so this head has no {name} score.",
                          count=0, mean=None)  # fmt: skip
    order = sorted(np.flatnonzero(counted).tolist(), key=lambda i: (-values[i], i))[:ROWS]
    cells = None if score == "breadth" else targets(np.asarray(ids), ok, score)
    rows = [_row(w[i], ok[i], cells[i] if cells is not None else None, i, labels, tokens, score,
                 float(values[i]), (layer, head)) for i in order]  # fmt: skip
    return {
        "job": job,
        "model": model,
        "layer": layer,
        "head": head,
        "kv_head": kv_head,
        "score": score,
        "name": name,
        "value": mean,
        "display": display(score, mean),
        "title": f"{where}: where its {name} score comes from",
        "definition": said(DEFINITIONS[score], score=score, threshold=THRESHOLD[score]),
        "queries": queries,
        "queries_label": f"Each query's {name} value ({n} counted; blank = not counted)",
        "averaged": averaged,
        "rows": rows,
        "rows_title": f"The {len(rows)} query rows contributing most",
        "how": _evidence_how(score, layer, head) if n else None,
    }


def _not_counted(score: str) -> str:
    return {
        "previous": "the first token has no token before it",
        "first": "the first token is left out",
        "induction": "its token has not appeared before",
        "duplicate": "its token has not appeared before",
        "breadth": "it may see one key only",
    }[score]


def _row(row: np.ndarray, ok: np.ndarray, targets: np.ndarray | None, i: int, labels: list[str],
         tokens: list[str], score: str, value: float, head: tuple[int, int]) -> dict:  # fmt: skip
    """One query's row as evidence: the keys its score counts and its strongest keys, by position;
    ``head``: (layer, head), for each number's descriptor."""
    seen = np.flatnonzero(ok)
    strongest = sorted(seen.tolist(), key=lambda j: (-float(row[j]), j))[:ROW_KEYS]
    counted = [] if targets is None else np.flatnonzero(targets).tolist()
    keys = sorted(set(strongest) | set(counted))
    shown = [
        {
            "index": j,
            "label": labels[j],
            "exact": tokens[j],
            "share": float(row[j]),
            "display": fmt.percent(float(row[j])),
            "counted": j in counted,
            "title": f"{labels[j]}: {fmt.percent(float(row[j]))} (exactly {fmt.precise(float(row[j]))})"
            + ("; counted by the score" if j in counted else ""),
            "how": _share_how(*head, i, j),
        }
        for j in keys
    ]
    own = _evidence_how(score, *head, i)
    if score == "breadth":
        words = marked(
            f"Query {labels[i]} spreads its attention over {len(seen)} keys with breadth ",
            number(display(score, value), own, value), "; its strongest keys are listed.",
            query=i, value=value, keys=int(len(seen)),
        )  # fmt: skip
    else:
        words = marked(
            f"Query {labels[i]} puts ", number(fmt.percent(value), own, value),
            f" of its attention on {_target_phrase(score)}.",
            query=i, value=value, counted=counted,
        )  # fmt: skip
    return {"query": i, "label": labels[i], "exact": tokens[i], "value": value,
            "display": display(score, value), "keys": shown, "words": words, "how": own}  # fmt: skip


# -- a kept trace job's census and evidence (the page's routes) ------------------------------------


def _body(data: dict) -> str:
    return json.dumps(data, allow_nan=False, separators=(",", ":"))


def census_body(job, score: str) -> str:
    """The census of ``score`` for trace job ``job`` (a finished ``TraceJob``), kept with it once made:
    from its model view's heads (worded once from the numbers the worker sent with the trace)."""
    from attnlab.lab.realmodel.modelview import model_view_body

    key = f"census:{score}"
    body = job.views.get(key)
    if body is None:
        model_view = job.views.get("model-view")
        if model_view is None:
            numbers = job.views.get("overview")
            model_view = job.views["model-view"] = model_view_body(job.id, job.trace, numbers)
        view = json.loads(model_view)
        job.views.update({
            f"census:{name}": _body(census_view(
                view["heads"], score=name, n_layer=view["n_layer"], n_head=view["n_head"],
                n_tokens=view["n_tokens"], model=job.trace.model, job=job.id,
            ))
            for name in SCORES
        })  # fmt: skip
        body = job.views[key]
    return body


def evidence_view(job, layer: int, head: int, score: str) -> dict:
    """Where head (``layer``, ``head``)'s ``score`` comes from, on trace job ``job``'s text."""
    t = job.trace
    t.check(layer=layer, head=head)
    return evidence(t.head_weights(layer, head), t.allowed, t.ids, t.tokens, layer=layer, head=head,
                    kv_head=t.kv_head(head), score=score, model=t.model, job=job.id)  # fmt: skip
