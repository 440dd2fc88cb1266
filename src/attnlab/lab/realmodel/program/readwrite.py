"""What one head reads and writes: its query-key products, and the tokens its output promotes.

- Kind ``head_qk``, fields ``layer``, ``head``, ``query``, ``key``, ``quantity``:
  ``before`` / ``after`` (q_i · k_j in float64, before or after RoPE; MiniLM has no RoPE:
  the two are equal) or ``weight`` (the head's share). Recomputed by the reference attention
  from the circuits' run's residual stream entering the layer (models/circuits/heads.py).
- Kind ``head_ov`` (SmolLM2), fields ``layer``, ``head``, ``position`` and ``quantity``:
  ``promoted`` (with ``source``, the rank of a key by weight, 0 = the largest, and ``rank``):
  the logit the head's value from that key, through its rows of W_O, the final norm (γ and
  its frozen scale) and the unembedding, gives the token of that rank; ``written`` (with
  ``rank``): the same for the head's real output there; ``source_weight`` (with ``source``).
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab.realmodel.program import circuits, pieces
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

QK = ("before", "after", "weight")
OV = ("promoted", "written", "source_weight")
SOURCES = 5
TOP = 5

_READS_DECODER = """
# 1) the circuits' run up to LAYER
kept = run(embed(IDS))
x = np.array(kept["resid"][LAYER])  # (T, d): the residual stream entering block LAYER
# 2) the layer's attention by the reference engine, with its trace (engine/multihead.py)
w = layer(LAYER)
attn = attention(rms_norm(x, w["norm_1"]), w)
q, k = attn["q"][HEAD], attn["k"][HEAD // GROUP]  # before RoPE, (T, d_head); its KV head's keys
q_rotated, k_rotated = attn["q_rotated"][HEAD], attn["k_rotated"][HEAD // GROUP]
"""

_READS_ENCODER = """
# 1) the circuits' run up to LAYER
kept = run(embed(IDS))
x = np.array(kept["resid"][LAYER])  # (T, d): the residual stream entering block LAYER
# 2) the layer's attention by the reference engine, on a batch of one
attn = attention(x[None], layer(LAYER))
q = q_rotated = attn["q"][0, HEAD]  # (T, d_head): no RoPE in an encoder
k = k_rotated = attn["k"][0, HEAD]
"""

_QK_VALUE = {
    "before": "value = (q.astype(np.float64) @ k.astype(np.float64).T)[QUERY, KEY]  # before RoPE\n",
    "after": "value = (q_rotated.astype(np.float64) @ k_rotated.astype(np.float64).T)[QUERY, KEY]\n",
    "weight": 'value = attn["weights"][{b}HEAD][QUERY, KEY]\n',
}

_WRITES = """
# 3) the keys the head attends to most at POSITION (ties: the earlier key)
row = attn["weights"][HEAD][POSITION].astype(np.float64)
order = np.lexsort((np.arange(row.size), -row))[: min(SOURCES, POSITION + 1)]
# 4) each key's value, and the head's real output there, through its rows of W_O, γ and the final
#    norm's scale frozen at POSITION, then the tied unembedding: the logits each would add
w_o = w["w_o"][HEAD * D_HEAD : (HEAD + 1) * D_HEAD]  # (d_head, d): the head's rows of W_O
scale = np.float32(1.0 / np.float64(final_rms(kept["resid"][N_LAYER])[POSITION]))
z = kept["z"][LAYER][POSITION, HEAD * D_HEAD : (HEAD + 1) * D_HEAD]  # the head's output (d_head,)
vectors = np.vstack([attn["v"][HEAD // GROUP][order], z[None]]) @ w_o  # (n + 1, d)
vectors = vectors * output_norm()
promoted = unembed(np.ascontiguousarray(vectors * scale, dtype=np.float32), embedding())  # (n + 1, vocab)
"""


def check_qk(src: Source, raw: Mapping) -> dict:
    kind = "head_qk"
    return {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
            "query": n.token(raw, "query", kind, src), "key": n.token(raw, "key", kind, src),
            "quantity": n.choice(raw, "quantity", kind, QK)}  # fmt: skip


def check_ov(src: Source, raw: Mapping) -> dict:
    kind = "head_ov"
    n.decoder_only(src, kind)
    p = {"layer": n.layer(raw, kind, src), "head": n.head(raw, kind, src),
         "position": n.token(raw, "position", kind, src),
         "quantity": n.choice(raw, "quantity", kind, OV)}  # fmt: skip
    if p["quantity"] != "written":
        p["source"] = n.whole(
            raw, "source", kind, min(SOURCES, p["position"] + 1), model="the keys", what="source"
        )
    if p["quantity"] != "source_weight":
        p["rank"] = n.whole(raw, "rank", kind, TOP, model="the list", what="rank")
    return p


def _reads(src: Source) -> list[str]:
    base = circuits.pieces_for(src)
    return [*base, pieces.SMOLLM_REFERENCE] if src.decoder else base


def qk(src: Source, p: dict) -> Steps:
    body = (_READS_DECODER if src.decoder else _READS_ENCODER) + _QK_VALUE[p["quantity"]].format(
        b="" if src.decoder else "0, "
    )
    words = {"before": "q · k before RoPE", "after": "q · k after RoPE", "weight": "the share"}[p["quantity"]]
    return Steps(
        what=f"Layer {p['layer']}, head {p['head']}: {words} of query {p['query']} and key {p['key']}",
        runs="circuits",
        inputs=[f"LAYER, HEAD, QUERY, KEY = {p['layer']}, {p['head']}, {p['query']}, {p['key']}"],
        pieces=_reads(src),
        body=body,
        name=f"{src.model}_qk_{p['quantity']}_L{p['layer']}_H{p['head']}_{p['query']}_{p['key']}.py",
    )


def ov(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    inputs = [
        f"LAYER, HEAD, POSITION = {p['layer']}, {p['head']}, {p['position']}",
        f"SOURCES, TOP = {SOURCES}, {TOP}",
    ]
    inputs += [f"{k.upper()} = {p[k]}" for k in ("source", "rank") if k in p]
    if q == "source_weight":
        body = _READS_DECODER + _WRITES.split("# 4)")[0] + "value = row[order[SOURCE]]\n"
        what = f"the weight of the key of rank {p['source']}"
    elif q == "promoted":
        body = _READS_DECODER + _WRITES + "value = promoted[SOURCE, ranked(promoted[SOURCE], TOP)[RANK]]\n"
        what = f"the logit of the rank {p['rank']} token the value of key rank {p['source']} promotes"
    else:
        body = _READS_DECODER + _WRITES + "value = promoted[-1, ranked(promoted[-1], TOP)[RANK]]\n"
        what = f"the logit of the rank {p['rank']} token its output promotes"
    return Steps(
        what=f"What layer {p['layer']}, head {p['head']} writes at token {p['position']}: {what}",
        runs="circuits",
        inputs=inputs,
        pieces=[*_reads(src), pieces.SOFTMAX64],
        body=body,
        name=f"smollm2_ov_{q}_L{p['layer']}_H{p['head']}_{p['position']}.py",
    )
