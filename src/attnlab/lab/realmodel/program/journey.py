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
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps, architecture
from attnlab.models.journey import STATS, TOP_UNITS, _stats, top_units

NORMS = ("resid_in", "attn", "mlp", "resid_out")
QUANTITIES = (*NORMS, *(f"norm_{i}.{s}" for i in (1, 2) for s in STATS), "mlp_unit")

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


def _hook_point(src: Source, q: str) -> str:
    """The hook point whose rows a quantity reads (models/journey.py journey_arrays): pre-norm, norm_1
    normalises the block's input and norm_2 x + attention; post-norm, x + MHA(x) and h + FFN(h), and the
    block's output is LayerNorm_2's."""
    pre = architecture(src.model).norm_placement == "pre"
    return {
        "resid_in": "resid_pre", "attn": "attn_out", "mlp": "mlp_out",
        "resid_out": "resid_post" if pre else "ln2",
        "norm_1": "resid_pre" if pre else "resid_mid", "norm_2": "resid_mid" if pre else "resid_post",
        "mlp_unit": "mlp_post",
    }[q.split(".")[0]]  # fmt: skip


def steps(src: Source, p: dict) -> Steps:
    q = p["quantity"]
    body = (
        "# 1) embed the tokens and run the blocks up to LAYER on the trace's steps, keeping the rows this\n"
        "#    number is about (every token's, float64)\n"
        f"point = block_names(LAYER).{_hook_point(src, q)}\n"
        "_, cache = run_with_cache(ARCH, WEIGHTS, IDS, names=[point], ops=TRACE_OPS,\n"
        "                          stop_at_layer=LAYER + 1)\n"
        "x = np.asarray(cache[point], dtype=np.float64)  # (T, width)\n"
    )
    if q in NORMS:
        body += "value = np.linalg.norm(x, axis=-1)[INDEX]  # the L2 norm of the token's row\n"
    elif q == "mlp_unit":
        body += (
            f"# 2) the {TOP_UNITS} units of largest |activation|, largest first, ties to the lower unit\n"
            f"units = top_units(x, {TOP_UNITS})  # (T, {TOP_UNITS})\n"
            "value = x[INDEX, units[INDEX, RANK]]\n"
        )
    else:
        stat = q.split(".")[1]
        words = stat.replace("max_abs", "largest magnitude")
        body += (
            "# 2) each row's mean, root mean square and largest magnitude (T, 3)\n"
            f"value = _stats(x)[INDEX, {STATS.index(stat)}]  # the {words}\n"
        )
    inputs = [f"INDEX, LAYER = {p['index']}, {p['layer']}"] + ([f"RANK = {p['rank']}"] if "rank" in p else [])
    head, _, stat = q.partition(".")
    what = _WORDS[head].format(layer=p["layer"], stat=stat.replace("max_abs", "largest magnitude"),
                               rank=p.get("rank"))  # fmt: skip
    return Steps(
        what=f"Token {p['index']}'s journey: {what}",
        runs="trace",
        inputs=inputs,
        body=body,
        name=f"{src.model}_journey_{p['index']}_L{p['layer']}_{q.replace('.', '_')}.py",
        uses=(top_units,) if q == "mlp_unit" else (_stats,) if "." in q else (),
    )
