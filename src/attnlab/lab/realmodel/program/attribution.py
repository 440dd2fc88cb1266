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

from attnlab.lab.realmodel.program import circuits
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import Steps

TERMS = ("embedding", "head", "mlp", "heads", "mlps", "total", "logit", "difference", "bound", "scale", "rms")

_BODY = """
# 1) the run as it is (the circuits' run), keeping what each component wrote
kept = run(embed(IDS))
x = kept["resid"][N_LAYER]  # (T, d): the residual stream leaving the last block
# 2) the final RMSNorm's scale at POSITION, frozen: s = 1 / sqrt(mean(x²) + eps)
rms = np.float64(final_rms(x)[POSITION])
scale = 1.0 / rms
# 3) then logit = x · u with u = s · γ ⊙ E[TOKEN]: each component's term is its vector · u
u = scale * (output_norm().astype(np.float64) * embedding_rows([TOKEN])[0].astype(np.float64))  # (d,)
"""

_SUM = (
    'mlps = np.stack([kept["mlp"][i][POSITION] for i in range(N_LAYER)]).astype(np.float64) @ u  # (L,)\n'
    'total = float(kept["resid"][0][POSITION].astype(np.float64) @ u)  # the embedding\'s term\n'
    "for i in range(N_LAYER):  # then per layer: its heads 0..H-1, W_O's bias (none here: 0), its MLP\n"
    '    z = kept["z"][i][POSITION].astype(np.float64)\n'
    '    per_head = (z * (layer(i)["w_o"].astype(np.float64) @ u)).reshape(N_HEAD, D_HEAD).sum(axis=1)\n'
    "    for h in range(N_HEAD):\n"
    "        total += per_head[h]\n"
    "    total += 0.0 + mlps[i]\n"
)
_LOGIT = (
    "# the model's own logit: the final norm and the output layer, as its forward pass computes them\n"
    "logit = logits(x, embedding())[POSITION, TOKEN]\n"
)
_BOUND = (
    "# the worst case of the float32 forward pass's rounding (first order, unit roundoff of float32):\n"
    "# the residual's partial sums, W_O's products (H · d_head terms each), the norm and the logit\n"
    "spread = np.zeros(D_MODEL)  # sum over layers of |z| @ |W_O|\n"
    "for i in range(N_LAYER):\n"
    '    w_o = layer(i)["w_o"].astype(np.float64)\n'
    '    spread += np.abs(kept["z"][i][POSITION].astype(np.float64)) @ np.abs(w_o)\n'
    "# every partial sum of the residual stream at POSITION: each block's mid point and output, (L, d)\n"
    'mids = np.stack([kept["mid"][i][POSITION] for i in range(N_LAYER)]).astype(np.float64)\n'
    'outs = np.stack([kept["resid"][i + 1][POSITION] for i in range(N_LAYER)]).astype(np.float64)\n'
    "partial = np.abs(mids).sum(axis=0)\n"
    "partial += np.abs(outs).sum(axis=0)\n"
    "x64 = x[POSITION].astype(np.float64)\n"
    "unit = np.finfo(np.float32).eps / 2\n"
    "rounding = np.abs(u) @ (partial + N_HEAD * D_HEAD * spread) + (D_MODEL + 2) * np.abs(x64 * u).sum()\n"
    "bound = unit * rounding\n"
)

_TERM = {
    "embedding": 'value = kept["resid"][0][POSITION].astype(np.float64) @ u  # the token\'s embedding\n',
    "head": (
        'w_o = layer(LAYER)["w_o"].astype(np.float64)  # (H · d_head, d)\n'
        'z = kept["z"][LAYER][POSITION].astype(np.float64)  # the heads side by side, (H · d_head,)\n'
        "# each query head's z through its rows of W_O, then · u\n"
        "per_head = (z * (w_o @ u)).reshape(N_HEAD, D_HEAD).sum(axis=1)\n"
        "value = per_head[HEAD]\n"
    ),
    "mlp": (
        'mlps = np.stack([kept["mlp"][i][POSITION] for i in range(N_LAYER)]).astype(np.float64) @ u  # (L,)\n'
        "value = mlps[LAYER]\n"
    ),
    "heads": (
        "heads = np.empty((N_LAYER, N_HEAD))  # each query head's term, layer by layer\n"
        "for i in range(N_LAYER):\n"
        '    z = kept["z"][i][POSITION].astype(np.float64)\n'
        '    heads[i] = (z * (layer(i)["w_o"].astype(np.float64) @ u)).reshape(N_HEAD, D_HEAD).sum(axis=1)\n'
        "value = heads.sum()  # (L, H) added as one array\n"
    ),
    "mlps": (
        'mlps = np.stack([kept["mlp"][i][POSITION] for i in range(N_LAYER)]).astype(np.float64) @ u  # (L,)\n'
        "value = mlps.sum()\n"
    ),
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
        pieces=circuits.pieces_for(src),
        body=_BODY + "# 4) " + what + "\n" + _TERM[p["term"]],
        name=f"smollm2_attribution_{p['term']}_{p['position']}_{p['token']}{where}.py",
    )
