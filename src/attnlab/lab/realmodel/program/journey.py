"""The journey's numbers: one token's path through a block (:mod:`attnlab.models.journey`).

Kind ``journey``, fields ``index`` (the token), ``layer`` (the block) and ``quantity``:

- ``resid_in``, ``attn``, ``mlp``, ``resid_out``: the L2 norm of the block's input row, of
  what attention adds, of what the MLP adds, of the block's output row;
- ``norm_1.mean``, ``norm_1.rms``, ``norm_1.max_abs`` (and ``norm_2.*``): statistics of the
  vector each norm normalises (pre-norm: the block's input and x + attention; MiniLM's
  post-norm: x + MHA(x) and h + FFN(h));
- ``mlp_unit``: the activation of the MLP unit of rank ``rank`` (0: the largest |a|; ties: the
  lower unit), after the activation (SmolLM2: silu(gate) · up).

All float64 statistics of the model's float32 rows, as the trace computed them.
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program import trace
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

NORMS = ("resid_in", "attn", "mlp", "resid_out")
STATS = ("mean", "rms", "max_abs")
QUANTITIES = (*NORMS, *(f"norm_{i}.{s}" for i in (1, 2) for s in STATS), "mlp_unit")
TOP_UNITS = 5

_WORDS = {
    "resid_in": "the norm of the residual stream entering block {layer}",
    "attn": "the norm of what attention adds in block {layer}",
    "mlp": "the norm of what the MLP adds in block {layer}",
    "resid_out": "the norm of the residual stream leaving block {layer}",
    "norm_1": "the {stat} of the vector block {layer}'s first norm normalises",
    "norm_2": "the {stat} of the vector block {layer}'s second norm normalises",
    "mlp_unit": "the MLP unit of rank {rank} in block {layer}",
}


def check(src: Source, raw: Mapping) -> dict:
    kind = "journey"
    p = {"index": n.token(raw, "index", kind, src), "layer": n.layer(raw, kind, src),
         "quantity": n.choice(raw, "quantity", kind, QUANTITIES)}  # fmt: skip
    if p["quantity"] == "mlp_unit":
        p["rank"] = n.whole(raw, "rank", kind, TOP_UNITS, model="the journey", what="rank")
    return p


def _source_array(src: Source, q: str) -> str:
    """The trace array a quantity reads (pre-norm: norm_1 normalises the input; post-norm: x + MHA(x))."""
    first, second = ("input", "residual_1") if src.decoder else ("residual_1", "residual_2")
    return {
        "resid_in": "input", "attn": "attn.output", "mlp": "mlp", "resid_out": "output",
        "norm_1": first, "norm_2": second, "mlp_unit": "activated",
    }[q.split(".")[0]]  # fmt: skip


def steps(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    name = _source_array(src, q)
    at = 't["attn"]["output"]' if name == "attn.output" else f't["{name}"]'
    rows = f"np.asarray({at}, dtype=np.float64){trace.row_of(src)}  # (T, width): every token's row, float64"
    body = (
        "# 1) embed the tokens and run the blocks up to LAYER (each block as a trace runs it)\n"
        "t = run_trace(LAYER)[LAYER]\n"
        "# 2) the block's rows this number is about\n"
        f"x = {rows}\n"
    )
    if q in NORMS:
        body += "value = np.linalg.norm(x, axis=-1)[INDEX]  # the L2 norm of the token's row\n"
    elif q == "mlp_unit":
        body += (
            "# 3) the units by |activation|, largest first, ties to the lower unit\n"
            'order = np.argsort(-np.abs(x[INDEX]), kind="stable")\n'
            "unit = int(order[RANK])\n"
            "value = x[INDEX, unit]\n"
        )
    else:
        stat = q.split(".")[1]
        body += {
            "mean": "value = x.mean(-1)[INDEX]\n",
            "rms": "value = np.sqrt((x * x).mean(-1))[INDEX]  # root mean square\n",
            "max_abs": "value = np.abs(x).max(-1)[INDEX]  # largest magnitude\n",
        }[stat]
    inputs = [f"INDEX, LAYER = {p['index']}, {p['layer']}"] + ([f"RANK = {p['rank']}"] if "rank" in p else [])
    head, _, stat = q.partition(".")
    what = _WORDS[head].format(layer=p["layer"], stat=stat.replace("max_abs", "largest magnitude"),
                               rank=p.get("rank"))  # fmt: skip
    return Steps(
        what=f"Token {p['index']}'s journey: {what}",
        runs="trace",
        inputs=inputs,
        pieces=trace.pieces_for(src),
        body=body,
        name=f"{src.model}_journey_{p['index']}_L{p['layer']}_{q.replace('.', '_')}.py",
    )
