"""The head view's numbers: a share in the heatmap, and the head's scores (its kind).

- ``weight``: fields ``layer``, ``head``, ``query``, ``key``: the share query i gives key j,
  as the model's attention computed it (float32; 0 where the key is blocked);
- ``head_score``: fields ``layer``, ``head``, ``score`` (previous, first, induction,
  duplicate, self, breadth): :mod:`attnlab.lab.realmodel.kinds`' score of the head's
  weights, float64 sums over the float32 shares, as the head view computes it;
- ``census``: the same fields: the score as the model view and the circuits' census compute
  it, every head's weights (L, H, T, T) at once (float64 sums in another grouping: the last
  bits can differ from the head view's);
- ``evidence``: fields ``layer``, ``head``, ``score`` (previous, first, induction, duplicate,
  breadth) and ``query`` (optional): the census evidence's numbers
  (:func:`attnlab.lab.circuits.census.query_values`): with ``query``, the value that query gives
  the score (its share on the keys the score counts, float64 sum; breadth: its row's entropy
  over that of an even split); without, the mean of the counted queries' values.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps
from attnlab.models.circuits.scores import SCORES

SCORE_NAMES = {
    "previous": "the previous-token score",
    "first": "the first-token score",
    "induction": "the induction score",
    "duplicate": "the duplicate-token score",
    "self": "the self score",
    "breadth": "the breadth",
}


def check_weight(src: Source, raw: Mapping) -> dict:
    kind = "weight"
    return {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
            "query": n.token(raw, "query", kind, src), "key": n.token(raw, "key", kind, src)}  # fmt: skip


def check_score(src: Source, raw: Mapping) -> dict:
    kind = "head_score"
    return {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
            "score": n.choice(raw, "score", kind, SCORES)}  # fmt: skip


def _weights(src: Source) -> str:
    return (
        "# 1) embed the tokens and run the blocks up to LAYER on the trace's steps, keeping LAYER's pattern\n"
        "pattern = block_names(LAYER).pattern  # the hook point's name: blocks.LAYER.attn.hook_pattern\n"
        "_, cache = run_with_cache(ARCH, WEIGHTS, IDS, names=[pattern], ops=TRACE_OPS,\n"
        "                          stop_at_layer=LAYER + 1)\n"
        "# 2) that block's attention weights: (H, T, T), row = query token, column = key token\n"
        "weights = cache[pattern][HEAD]  # (T, T)\n"
    )


def weight(src: Source, p: dict) -> Steps:
    where = f"layer {p['layer']}, head {p['head']}"
    body = _weights(src) + "value = weights[QUERY, KEY]  # float32; 0 where the key is blocked\n"
    return Steps(
        what=f"The share token {p['query']} gives token {p['key']} in {where}",
        runs="trace",
        inputs=[f"LAYER, HEAD, QUERY, KEY = {p['layer']}, {p['head']}, {p['query']}, {p['key']}"],
        body=body,
        name=f"{src.model}_weight_L{p['layer']}_H{p['head']}_{p['query']}_{p['key']}.py",
    )


# The scores as lab/realmodel/kinds.py's head_scores computes them, for one head's weights (T, T) or
# for every head's at once (L, H, T, T): the same formulas, written for any leading axes.
_ALLOWED = {
    True: "allowed = np.tril(np.ones((T, T), dtype=bool))  # causal: query i may see keys j <= i\n",
    False: "allowed = np.ones((T, T), dtype=bool)  # an encoder: every token sees every token\n",
}

_SCORE = {
    "previous": (
        "# 3) the previous-token score: the mean of w[i, i-1] over queries i = 1..T-1 (float64 sum)\n"
        "if T > 1:\n"
        "    value = np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1, dtype=np.float64)\n"
        "else:\n"
        "    value = np.zeros(weights.shape[:-2])\n"
    ),
    "first": (
        "# 3) the first-token score: the mean of w[i, 0] over queries i = 1..T-1 (float64 sum)\n"
        "if T > 1:\n"
        "    value = weights[..., 1:, 0].mean(axis=-1, dtype=np.float64)\n"
        "else:\n"
        "    value = weights[..., 0, 0].astype(np.float64)\n"
    ),
    "self": (
        "# 3) the self score: the mean of w[i, i] over queries i = 1..T-1 (float64 sum)\n"
        "if T > 1:\n"
        "    value = np.diagonal(weights, axis1=-2, axis2=-1)[..., 1:].mean(axis=-1, dtype=np.float64)\n"
        "else:\n"
        "    value = weights[..., 0, 0].astype(np.float64)\n"
    ),
    "breadth": (
        "# 3) the breadth: each row's entropy over the entropy of an even split of the keys it may see,\n"
        "#    averaged over the rows that may see two keys or more\n"
        "seen = allowed.sum(axis=1)\n"
        "wide = seen > 1\n"
        "if wide.any():\n"
        "    plogp = np.maximum(weights, np.finfo(weights.dtype).tiny)  # 0 · log(tiny) = 0, as 0 log 0 = 0\n"
        "    np.log(plogp, out=plogp)\n"
        "    plogp *= weights\n"
        "    entropy = -plogp.sum(axis=-1, dtype=np.float64)  # (..., T)\n"
        "    value = (entropy[..., wide] / np.log(seen[wide])).mean(axis=-1)\n"
        "else:\n"
        "    value = np.zeros(weights.shape[:-2])\n"
    ),
}

_TARGETS = (
    "ids = np.asarray(IDS)\n"
    "same = ids[:, None] == ids[None, :]  # t[i] == t[j]\n"
    "earlier = np.tri(T, k=-1, dtype=bool)  # j < i\n"
)
_MEAN_SHARE = (
    "queries = int(targets.any(axis=1).sum())  # the queries that have a target\n"
    "i, k = np.nonzero(targets)\n"
    "value = weights[..., i, k].sum(axis=-1, dtype=np.float64) / queries\n"
)
_SCORE["induction"] = (
    "# 3) the induction score: query i's targets are the keys k, 1 <= k <= i-1, with t[k-1] == t[i]\n"
    "#    (the token right after an earlier occurrence of its own token); the mean over the queries\n"
    "#    with a target of the share they put on their targets\n"
    + _TARGETS
    + "targets = np.zeros((T, T), dtype=bool)\n"
    "targets[:, 1:] = same[:, :-1]  # t[k-1] == t[i]\n"
    "targets &= earlier & allowed\n" + _MEAN_SHARE
)
_SCORE["duplicate"] = (
    "# 3) the duplicate-token score: query i's targets are the earlier keys j < i with t[j] == t[i];\n"
    "#    the mean over the queries with a target of the share they put on their targets\n"
    + _TARGETS
    + "targets = same & earlier & allowed\n"
    + _MEAN_SHARE
)

_EVERY_HEAD = (
    "# 1) embed the tokens and run every block on the trace's steps, keeping every block's pattern\n"
    "patterns = [block_names(i).pattern for i in range(ARCH.n_layer)]\n"
    "_, cache = run_with_cache(ARCH, WEIGHTS, IDS, names=patterns, ops=TRACE_OPS)\n"
    "# 2) every head's weights at once, as the model view and the census take them: (L, H, T, T)\n"
    "weights = np.stack([cache[name] for name in patterns])\n"
)


def score(src: Source, p: dict) -> Steps:
    """One head's score as the head view computes it, from that head's (T, T) weights."""
    return _score(src, p, census=False)


def check_census(src: Source, raw: Mapping) -> dict:
    kind = "census"
    return {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
            "score": n.choice(raw, "score", kind, SCORES)}  # fmt: skip


def census(src: Source, p: dict) -> Steps:
    """A head's score as the model view and the census compute it: every head's at once (another
    reduction than one head's alone, so its last bits may differ from the head view's)."""
    return _score(src, p, census=True)


def _score(src: Source, p: dict, *, census: bool) -> Steps:
    name = p["score"]
    if name in ("induction", "duplicate") and not _repeats(src.ids):
        raise FieldError(("score",), no_repeat(name))
    if census:
        start = _EVERY_HEAD
        end = "value = value[LAYER, HEAD]  # this head's, of every head's scores\n"
    else:
        start, end = _weights(src), ""
    body = start + "T = weights.shape[-1]\n" + _ALLOWED[src.decoder] + _SCORE[name] + end
    where = f"layer {p['layer']}, head {p['head']}"
    return Steps(
        what=f"{SCORE_NAMES[name].capitalize()} of {where}"
        + (", as the census computes it" if census else ""),
        runs="trace",
        inputs=[f"LAYER, HEAD = {p['layer']}, {p['head']}"],
        body=body,
        name=f"{src.model}_{'census_' if census else ''}{name}_L{p['layer']}_H{p['head']}.py",
    )


def _repeats(ids) -> bool:
    return len(set(ids)) < len(ids)


def no_repeat(name: str) -> str:
    return f"{name!r} has no value here: no token of the text repeats"


# The census evidence's numbers, as lab/circuits/census.query_values computes them from one head's
# weights (T, T): each query's value (NaN where the score does not count it), then their mean.
_EVIDENCE_TARGETS = {
    "previous": "targets = np.eye(T, k=-1, dtype=bool)  # key i-1\n",
    "first": "targets = np.zeros((T, T), dtype=bool)\ntargets[1:, 0] = True  # key 0, queries 1..T-1\n",
    "duplicate": _TARGETS + "targets = same & earlier  # the earlier keys holding the query's own token\n",
    "induction": _TARGETS + "targets = np.zeros((T, T), dtype=bool)\n"
    "targets[:, 1:] = same[:, :-1]  # the key right after an earlier occurrence of the query's token\n"
    "targets &= earlier\n",
}
_EVIDENCE_VALUES = (
    "targets &= allowed\n"
    "# each query's share on its targets (float64 sums)\n"
    "sums = np.where(targets, weights, 0).sum(axis=1, dtype=np.float64)\n"
    "values = np.where(targets.any(axis=1), sums, np.nan)  # NaN: a query the score does not count\n"
)
_EVIDENCE_BREADTH = (
    "seen = allowed.sum(axis=1)\n"
    "plogp = np.maximum(weights, np.finfo(weights.dtype).tiny)  # in the weights' dtype: 0 · log(tiny) = 0\n"
    "np.log(plogp, out=plogp)\n"
    "plogp *= weights\n"
    "entropy = -plogp.sum(axis=-1, dtype=np.float64)\n"
    "values = np.full(T, np.nan)  # NaN: a row that may see one key only\n"
    "wide = seen > 1\n"
    "values[wide] = entropy[wide] / np.log(seen[wide])\n"
)
EVIDENCE = ("previous", "first", "induction", "duplicate", "breadth")


def check_evidence(src: Source, raw: Mapping) -> dict:
    kind = "evidence"
    p = {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
         "score": n.choice(raw, "score", kind, EVIDENCE)}  # fmt: skip
    if raw.get("query") is not None:
        p["query"] = n.token(raw, "query", kind, src)
    return p


def evidence(src: Source, p: dict) -> Steps:
    """A number of a head's census evidence: one query's value, or the mean of the counted ones."""
    name, where = p["score"], f"layer {p['layer']}, head {p['head']}"
    counted = _evidence_counted(src, name)
    if not counted:
        raise FieldError(("score",), no_repeat(name) if name in ("induction", "duplicate") else no_query())
    if "query" in p and p["query"] not in counted:
        raise FieldError(("query",), not_counted(p["query"]))
    values = _EVIDENCE_BREADTH if name == "breadth" else _EVIDENCE_TARGETS[name] + _EVIDENCE_VALUES
    body = (
        _weights(src)
        + "T = weights.shape[-1]\n"
        + _ALLOWED[src.decoder]
        + f"# 3) what each query gives {SCORE_NAMES[name]} (the row of numbers the evidence shows)\n"
        + values
    )
    if "query" in p:
        body += "value = values[QUERY]\n"
        what = f"What token {p['query']} gives {SCORE_NAMES[name]} of {where}"
        inputs = [f"LAYER, HEAD, QUERY = {p['layer']}, {p['head']}, {p['query']}"]
        tail = f"q{p['query']}"
    else:
        body += "# 4) their mean over the queries the score counts\n"
        body += "value = values[~np.isnan(values)].mean()\n"
        what = f"The mean of what each query gives {SCORE_NAMES[name]} of {where}"
        inputs = [f"LAYER, HEAD = {p['layer']}, {p['head']}"]
        tail = "mean"
    return Steps(
        what=what,
        runs="trace",
        inputs=inputs,
        body=body,
        name=f"{src.model}_evidence_{name}_L{p['layer']}_H{p['head']}_{tail}.py",
    )


def _evidence_counted(src: Source, name: str) -> list[int]:
    """The queries ``name`` counts on ``src``'s text (token ids alone decide it, and the mask)."""
    ids, count = src.ids, src.n_tokens
    seen = (lambda i: i + 1) if src.decoder else (lambda i: count)
    if name == "breadth":
        return [i for i in range(count) if seen(i) > 1]
    if name in ("previous", "first"):
        return list(range(1, count))
    if name == "duplicate":
        return [i for i in range(count) if ids[i] in ids[:i]]
    return [i for i in range(count) if any(ids[k - 1] == ids[i] for k in range(1, i))]


def no_query() -> str:
    return "has no value here: the text is too short for any query to count"


def not_counted(query: int) -> str:
    return f"token {query} is not counted by this score, so it gives it no value"
