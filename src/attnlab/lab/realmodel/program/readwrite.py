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

from attnlab.lab.heads import head_spoken
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps
from attnlab.models.circuits.metrics import ranked

QK = ("before", "after", "weight")
OV = ("promoted", "written", "source_weight")
SOURCES = 5
TOP = 5

_READS = """
# 1) the circuits' run
kept = circuit_run(ARCH, WEIGHTS, IDS, ops=OPS, logits=False)
# 2) block LAYER's attention run again on the residual stream entering it, on the trace's steps
#    (models/circuits/heads.py), keeping q, k, v (before RoPE), q and k after it, and the pattern
n = block_names(LAYER)
rotated = [n.rot_q, n.rot_k] if ARCH.positions == "rope" else [n.q, n.k]  # an encoder has no RoPE
_, cache = run_with_cache(ARCH, WEIGHTS, None, names={n.q, n.k, n.v, n.pattern, *rotated}, ops=TRACE_OPS,
                          start_at_layer=LAYER, resid=np.array(kept["resid"][LAYER]), stop_at_layer=LAYER + 1)
KV = HEAD // ARCH.group  # the KV head this query head reads
q, k = cache[n.q][:, HEAD], cache[n.k][:, KV]  # (T, d_head)
q_rotated, k_rotated = cache[rotated[0]][:, HEAD], cache[rotated[1]][:, KV]
weights = cache[n.pattern][HEAD]  # (T, T)
"""

_QK_VALUE = {
    "before": "value = (q.astype(np.float64) @ k.astype(np.float64).T)[QUERY, KEY]  # before RoPE\n",
    "after": "value = (q_rotated.astype(np.float64) @ k_rotated.astype(np.float64).T)[QUERY, KEY]\n",
    "weight": "value = weights[QUERY, KEY]\n",
}

_WRITES = """
# 3) the keys the head attends to most at POSITION (ties: the earlier key)
row = weights[POSITION].astype(np.float64)
order = np.lexsort((np.arange(row.size), -row))[: min(SOURCES, POSITION + 1)]
# 4) each key's value, and the head's real output there, through its rows of W_O, γ and the final
#    norm's scale frozen at POSITION, then the tied output layer: the logits each would add
w_o = WEIGHTS.blocks[LAYER].attn.w_o[HEAD * ARCH.d_head : (HEAD + 1) * ARCH.d_head]  # (d_head, d)
scale = np.float32(1.0 / np.float64(kept["final_rms"][POSITION]))
vectors = np.vstack([cache[n.v][:, KV][order], kept["z"][LAYER, POSITION, HEAD][None]]) @ w_o  # (n + 1, d)
vectors = vectors * WEIGHTS.final_norm.weight
promoted = OPS.unembed(np.ascontiguousarray(vectors * scale, dtype=np.float32), WEIGHTS)  # (n + 1, vocab)
chosen = np.take_along_axis(promoted, ranked(promoted, TOP), axis=-1).astype(np.float64)  # (n + 1, TOP)
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


def qk(src: Source, p: dict) -> Steps:
    words = {"before": "q · k before RoPE", "after": "q · k after RoPE", "weight": "the share"}[p["quantity"]]
    return Steps(
        what=f"{head_spoken(p['layer'], p['head'])}: {words} of query {p['query']} and key {p['key']}",
        runs="circuits",
        inputs=[f"LAYER, HEAD, QUERY, KEY = {p['layer']}, {p['head']}, {p['query']}, {p['key']}"],
        body=_READS + _QK_VALUE[p["quantity"]],
        name=f"{src.model}_qk_{p['quantity']}_L{p['layer']}_H{p['head']}_{p['query']}_{p['key']}.py",
        trace_ops=True,
    )


def ov(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    inputs = [
        f"LAYER, HEAD, POSITION = {p['layer']}, {p['head']}, {p['position']}",
        f"SOURCES, TOP = {SOURCES}, {TOP}",
    ]
    inputs += [f"{k.upper()} = {p[k]}" for k in ("source", "rank") if k in p]
    if q == "source_weight":
        body = _READS + _WRITES.split("# 4)")[0] + "value = row[order[SOURCE]]\n"
        what = f"the weight of the key of rank {p['source']}"
    elif q == "promoted":
        body = _READS + _WRITES + "value = chosen[SOURCE, RANK]\n"
        what = f"the logit of the rank {p['rank']} token the value of key rank {p['source']} promotes"
    else:
        body = _READS + _WRITES + "value = chosen[-1, RANK]  # the head's real output\n"
        what = f"the logit of the rank {p['rank']} token its output promotes"
    return Steps(
        what=f"What layer {p['layer']}, head {p['head']} writes at token {p['position']}: {what}",
        runs="circuits",
        inputs=inputs,
        body=body,
        name=f"smollm2_ov_{q}_L{p['layer']}_H{p['head']}_{p['position']}.py",
        trace_ops=True,
        uses=() if q == "source_weight" else (ranked,),
    )
