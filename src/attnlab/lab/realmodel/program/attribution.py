"""Direct logit attribution's numbers: a logit as a sum of what each component wrote.

Kind ``attribution`` (SmolLM2), fields ``position``, ``token`` (the token whose logit is
split) and ``term``: ``embedding``, ``head`` (with ``layer``, ``head``: that query head's z
through its rows of W_O), ``mlp`` (with ``layer``), ``heads`` / ``mlps`` (every head's / every
MLP's term added, as the sentence on the sums adds them), ``total`` (every term added: the
embedding, then per layer its heads 0..H-1 and its MLP), ``logit`` (the model's own),
``difference`` (|total - logit|), ``bound`` (the worst case of the forward pass's own
rounding, which the difference stays within), ``scale`` (1 / rms, the final norm's scale
frozen at the position) or ``rms`` (the page's 1 / scale).
(models/circuits/attribution.py: float64 sums over the model's float32 numbers.)
"""

from __future__ import annotations

from collections.abc import Mapping

from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

TERMS = ("embedding", "head", "mlp", "heads", "mlps", "total", "logit", "difference", "bound", "scale", "rms")

_BODY = """
# 1) the run as it is (the circuits' run), keeping what each component wrote
kept = circuit_run(ARCH, WEIGHTS, IDS, ops=OPS)
# 2) the final RMSNorm's scale at POSITION, frozen: s = 1 / sqrt(mean(x²) + eps)
scale = 1.0 / np.float64(kept["final_rms"][POSITION])
# 3) then logit = x · u with u = s · γ ⊙ E[TOKEN]: each component's term is its vector · u
e = OPS.embed(WEIGHTS.embed, [TOKEN])[0].astype(np.float64)  # the token's row of E
u = scale * (WEIGHTS.final_norm.weight.astype(np.float64) * e)  # (d,)
H, D = ARCH.n_head, ARCH.d_head
"""

_HEADS = (
    "heads = np.empty((ARCH.n_layer, H))  # each query head's term, layer by layer\n"
    "for i in range(ARCH.n_layer):\n"
    "    w_o = WEIGHTS.blocks[i].attn.w_o.astype(np.float64)  # (H · d_head, d)\n"
    '    z = kept["z"][i, POSITION].astype(np.float64).reshape(-1)  # the heads side by side, (H · d_head,)\n'
    "    heads[i] = (z * (w_o @ u)).reshape(H, D).sum(axis=1)  # each head's z through its rows of W_O, · u\n"
)
_MLPS = 'mlps = kept["mlp_out"][:, POSITION].astype(np.float64) @ u  # (L,)\n'
_SUM = (
    _HEADS
    + _MLPS
    + 'total = float(kept["resid"][0, POSITION].astype(np.float64) @ u)  # the embedding\'s term\n'
    "for i in range(ARCH.n_layer):  # then per layer: its heads 0..H-1, W_O's bias (none here: 0), its MLP\n"
    "    for h in range(H):\n"
    "        total += heads[i, h]\n"
    "    total += 0.0 + mlps[i]\n"
)
_LOGIT = 'logit = float(kept["logits"][POSITION, TOKEN])  # the model\'s own logit, from its forward\n'
_BOUND = (
    "# the worst case of the float32 forward pass's rounding (first order, unit roundoff of float32):\n"
    "# the residual's partial sums, W_O's products (H · d_head terms each), the norm and the logit\n"
    "spread = np.zeros(ARCH.d_model)  # sum over layers of |z| @ |W_O|\n"
    "for i in range(ARCH.n_layer):\n"
    "    w_o = WEIGHTS.blocks[i].attn.w_o.astype(np.float64)\n"
    '    spread += np.abs(kept["z"][i, POSITION].astype(np.float64).reshape(-1)) @ np.abs(w_o)\n'
    "# every partial sum of the residual stream at POSITION: each block's mid point and output\n"
    'partial = np.abs(kept["mid"][:, POSITION].astype(np.float64)).sum(axis=0)\n'
    'partial += np.abs(kept["resid"][1:, POSITION].astype(np.float64)).sum(axis=0)\n'
    'x = kept["resid"][-1, POSITION].astype(np.float64)\n'
    "unit = np.finfo(np.float32).eps / 2\n"
    "bound = unit * (np.abs(u) @ (partial + H * D * spread) + (ARCH.d_model + 2) * np.abs(x * u).sum())\n"
)

_TERM = {
    "embedding": (
        'value = float(kept["resid"][0, POSITION].astype(np.float64) @ u)  # the token\'s embedding\n'
    ),
    "head": _HEADS + "value = heads[LAYER, HEAD]\n",
    "mlp": _MLPS + "value = mlps[LAYER]\n",
    "heads": _HEADS + "value = heads.sum()  # (L, H) added as one array\n",
    "mlps": _MLPS + "value = mlps.sum()\n",
    "total": _SUM + "value = total\n",
    "logit": _LOGIT + "value = logit\n",
    "difference": _SUM + _LOGIT + "value = abs(total - logit)  # float64: the float32 logit widens exactly\n",
    "bound": _BOUND + "value = bound\n",
    "scale": "value = scale\n",
    "rms": "value = 1.0 / scale  # the rms as the page prints it: 1 / its frozen scale\n",
}

_WORDS = {
    "embedding": "the embedding's term",
    "head": "layer {layer}, head {head}'s term",
    "mlp": "layer {layer}'s MLP term",
    "heads": "every head's term added",
    "mlps": "every MLP's term added",
    "total": "the sum of every term",
    "logit": "the model's logit",
    "difference": "how far the sum of every term is from the model's logit",
    "bound": "the bound on the forward pass's own rounding",
    "scale": "the final norm's frozen scale",
    "rms": "the final norm's rms, as 1 / its frozen scale",
}


def check(src: Source, raw: Mapping) -> dict:
    kind = "attribution"
    n.decoder_only(src, kind)
    p = {"position": n.token(raw, "position", kind, src), "token": n.token_id(raw, "token", kind, src),
         "term": n.choice(raw, "term", kind, TERMS)}  # fmt: skip
    if p["term"] in ("head", "mlp"):
        p["layer"] = n.layer(raw, kind, src)
    if p["term"] == "head":
        p["head"] = n.head(raw, kind, src)
    return p


def steps(src: Source, p: dict) -> Steps:
    inputs = [f"POSITION, TOKEN = {p['position']}, {p['token']}"]
    inputs += [f"{k.upper()} = {p[k]}" for k in ("layer", "head") if k in p]
    what = _WORDS[p["term"]].format(**p)
    where = "".join(f"_{k[0].upper()}{p[k]}" for k in ("layer", "head") if k in p)  # _L20_H4
    return Steps(
        what=f"Logit attribution of token {p['token']} after token {p['position']}: {what}",
        runs="circuits",
        inputs=inputs,
        body=_BODY + "# 4) " + what + "\n" + _TERM[p["term"]],
        name=f"smollm2_attribution_{p['term']}_{p['position']}_{p['token']}{where}.py",
    )
