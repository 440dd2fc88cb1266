"""The row and neuron views' numbers: one query's row in the explorer's terms, on the real q, k, v.

Kind ``row``, fields ``layer``, ``head``, ``query``, ``quantity`` and, per quantity:

- ``q`` / ``k``: coordinate ``coordinate`` of the query's q or of key ``key``'s k (after RoPE
  in SmolLM2, in the GGUF's interleaved pair order), as the model computed it (float32);
- ``product``: q[c] · k[c]; ``running``: the ordered sum of the products 0..c (left to right
  from 0.0); ``dot``: q · k, that sum over every coordinate; ``score``: the dot times the scale;
- ``exp``: exp(score - m) of key ``key``; ``share``: its share; ``m``: the row's largest
  allowed score; ``z``: the sum of the exps (the denominator).

These are :func:`attnlab.engine.single.trace_query`'s numbers on the vectors (plain Python
floats, sums left to right from 0.0, ``math.exp``): the program does its steps as written.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

QUANTITIES = ("q", "k", "product", "running", "dot", "score", "exp", "share", "m", "z")
_WITH_KEY = ("k", "product", "running", "dot", "score", "exp", "share")
_WITH_COORDINATE = ("q", "k", "product", "running")

_VALUE = {
    "q": "value = q[COORDINATE]",
    "k": "value = keys[KEY][COORDINATE]",
    "product": "value = q[COORDINATE] * keys[KEY][COORDINATE]",
    "running": "value = ordered_sum(qj * kj for qj, kj in zip(q[: COORDINATE + 1], keys[KEY]))",
    "dot": "value = dots[KEY]",
    "score": "value = scores[KEY]",
    "exp": "value = exps[KEY]",
    "share": "value = weights[KEY]",
    "m": "value = m",
    "z": "value = z",
}

_WORDS = {
    "q": "coordinate {coordinate} of token {query}'s query q",
    "k": "coordinate {coordinate} of token {key}'s key k",
    "product": "q[{coordinate}] · k[{coordinate}] of query {query} and key {key}",
    "running": "the sum of q · k's products 0..{coordinate} of query {query} and key {key}",
    "dot": "q · k of query {query} and key {key}",
    "score": "the scaled score of query {query} and key {key}",
    "exp": "exp(score - m) of query {query} and key {key}",
    "share": "the share query {query} gives key {key} (the explorer's calculation)",
    "m": "the largest allowed score m of query {query}'s row",
    "z": "the softmax's denominator of query {query}'s row",
}

# engine/single.py trace_query, step for step
_ROW = """
# 3) the explorer's calculation of this row (engine/single.py trace_query): plain Python floats,
#    every sum left to right from 0.0, the scale multiplied, one maximum over the allowed scores
q = q.astype(float).tolist()
keys = keys.astype(float).tolist()


def ordered_sum(terms):
    total = 0.0
    for term in terms:
        total += term
    return total


dots = [ordered_sum(qj * kj for qj, kj in zip(q, k)) for k in keys]
scores = [s * SCALE for s in dots]
m = max(s for s, ok in zip(scores, allowed) if ok)
exps = [math.exp(s - m) if ok else 0.0 for s, ok in zip(scores, allowed)]
z = ordered_sum(e for e, ok in zip(exps, allowed) if ok)
weights = [e / z if ok else 0.0 for e, ok in zip(exps, allowed)]
"""


def check(src: Source, raw: Mapping) -> dict:
    kind = "row"
    p = {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
         "query": n.token(raw, "query", kind, src),
         "quantity": n.choice(raw, "quantity", kind, QUANTITIES)}  # fmt: skip
    if p["quantity"] in _WITH_KEY:
        p["key"] = n.token(raw, "key", kind, src)
    if p["quantity"] in _WITH_COORDINATE:
        p["coordinate"] = n.whole(raw, "coordinate", kind, src.d_head, model=src.model, what="coordinate")
    return p


def steps(src: Source, p: dict) -> Steps:
    if src.decoder:
        vectors = (
            "n = block_names(LAYER)\n"
            "_, cache = run_with_cache(ARCH, WEIGHTS, IDS, names=[n.rot_q, n.rot_k], ops=TRACE_OPS,\n"
            "                          stop_at_layer=LAYER + 1)\n"
            "# 2) the query's q and its head's keys, after RoPE, as the model computed them (float32)\n"
            "q = cache[n.rot_q][QUERY, HEAD]  # (d_head,)\n"
            "keys = cache[n.rot_k][:, HEAD // ARCH.group]  # the KV head this query head reads, (T, d_head)\n"
            "allowed = [j <= QUERY for j in range(len(IDS))]  # causal: keys up to the query\n"
        )
    else:
        vectors = (
            "n = block_names(LAYER)\n"
            "_, cache = run_with_cache(ARCH, WEIGHTS, IDS, names=[n.q, n.k], ops=TRACE_OPS,\n"
            "                          stop_at_layer=LAYER + 1)\n"
            "# 2) the query's q and its head's keys, as the model computed them (float32)\n"
            "q = cache[n.q][QUERY, HEAD]  # (d_head,)\n"
            "keys = cache[n.k][:, HEAD]  # (T, d_head)\n"
            "allowed = [True] * len(IDS)  # an encoder: every key\n"
        )
    body = (
        "# 1) embed the tokens and run the blocks up to LAYER on the trace's steps, keeping LAYER's q and k\n"
        + vectors
        + "SCALE = 1.0 / float(np.sqrt(ARCH.d_head))  # the factor each dot product is multiplied by\n"
        + _ROW
        + _VALUE[p["quantity"]]
        + "\n"
    )
    names = ["LAYER", "HEAD", "QUERY"] + [k.upper() for k in ("key", "coordinate") if k in p]
    numbers = [p["layer"], p["head"], p["query"]] + [p[k] for k in ("key", "coordinate") if k in p]
    tail = "_".join(str(p[k]) for k in ("query", "key", "coordinate") if k in p)
    return Steps(
        what=_WORDS[p["quantity"]].format(**p).capitalize() + f" in layer {p['layer']}, head {p['head']}",
        runs="trace",
        inputs=[f"{', '.join(names)} = {', '.join(str(x) for x in numbers)}"],
        body=body,
        name=f"{src.model}_{p['quantity']}_L{p['layer']}_H{p['head']}_{tail}.py",
    )
