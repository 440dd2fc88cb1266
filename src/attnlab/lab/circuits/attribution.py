"""'Which heads matter here': direct logit attribution in words.

Numbers in (``models/circuits/attribution.logit_attribution``'s :class:`Attribution`, read by
attribute: ``position``, ``token``, ``logit``, ``scale``, ``embedding``, ``heads`` (L, H),
``attn_bias`` (L,), ``mlps`` (L,), ``total``, ``bound``), JSON out: every term as a
layers × (heads, MLP) map, the largest terms named, how the final norm is treated, and the
exact-sum claim checked against its rounding bound: ``within`` is ``|total - logit| <= bound``.
"""

from __future__ import annotations

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.heatmap import grid, signed, signed_legend
from attnlab.lab.realmodel.tokens import row_label, token_label
from attnlab.lab.said import said

TOP = 10  # terms in the ranked list
NAMED = 3  # terms named in the sentence


def norm_sentence(scale: float, label: str) -> dict:
    """How the final RMSNorm is treated (claims ``scale``: 1 / rms at the position, and ``rms``)."""
    rms = 1.0 / scale
    return said(
        f"The final RMSNorm divides the residual stream at {label} by its rms, {fmt.rounded(rms)}; that "
        "division is not linear, so it is frozen at its value in the real forward pass (scale 1/rms = "
        f"{fmt.significant(scale)}). Then the logit is residual · u with u = scale × γ ⊙ E[token], and each "
        "component's term is its own output · u. RMSNorm has no bias and no centring, so nothing is left "
        "over: the terms add up to the logit.",
        scale=scale, rms=rms,
    )  # fmt: skip


def exact_sentence(total: float, logit: float, bound: float, count: int, path: str) -> dict:
    """The exact-sum claim: the terms' total beside the model's logit, and the rounding that separates them.

    Claims ``count``, ``total``, ``logit``, ``difference`` (|total - logit|), ``bound``, ``within``.
    """
    difference = abs(total - logit)
    within = difference <= bound
    precision = "float64" if path == "float64" else "float32"
    verdict = (
        f"within the bound on the {precision} forward pass's own rounding, {fmt.scientific(bound)}"
        if within
        else f"more than the bound on the {precision} forward pass's own rounding, {fmt.scientific(bound)}"
    )
    return said(
        f"The {count} terms add up to {fmt.precise(total)} and the model's logit is {fmt.precise(logit)}: "
        f"they differ by {fmt.scientific(difference)}, {verdict}.",
        count=count, total=total, logit=logit, difference=difference, bound=bound, within=within,
    )  # fmt: skip


def attribution_view(a, *, tokens: list[str], token_text: str, path: str, job: str | None = None) -> dict:
    """JSON-ready: the attribution ``a`` of ``token_text`` at ``a.position`` of a text of ``tokens``."""
    heads = np.asarray(a.heads, dtype=np.float64)
    mlps = np.asarray(a.mlps, dtype=np.float64)
    bias = np.asarray(a.attn_bias, dtype=np.float64)
    n_layer, n_head = heads.shape
    has_bias = bool(np.any(bias != 0))
    label = row_label(a.position, tokens[a.position])
    shown = token_label(token_text)
    columns = [f"H{h}" for h in range(n_head)] + (["W_O bias"] if has_bias else []) + ["MLP"]
    values = np.column_stack([heads, *([bias] if has_bias else []), mlps])  # (L, H + 1 or H + 2)
    limit = float(np.max(np.abs(values))) if values.size and np.max(np.abs(values)) > 0 else 1.0

    def name(i: int, j: int) -> str:
        return f"L{i} {columns[j]}" if j >= n_head else f"L{i} H{j}"

    def cell(i: int, j: int, v: float | None) -> str:
        return signed(v, 1)

    def title(i: int, j: int, v: float | None) -> str:
        return f"{name(i, j)}: {signed(v)} to logit({shown['label']}) (exactly {fmt.precise(v)})"

    def how(term: str, **fields) -> dict:
        at = {"position": int(a.position), "token": int(a.token)}
        return {"kind": "attribution", **at, "term": term, **fields}

    def cell_how(i: int, j: int) -> dict | None:
        if j < n_head:
            return how("head", layer=i, head=j)
        return how("mlp", layer=i) if columns[j] == "MLP" else None  # W_O's bias: no program of its own

    terms = [("embedding", float(a.embedding), how("embedding"))]
    for i in range(n_layer):
        terms += [(name(i, j), float(values[i, j]), cell_how(i, j)) for j in range(values.shape[1])]
    order = sorted(range(len(terms)), key=lambda k: (-abs(terms[k][1]), k))
    top = [{"name": terms[k][0], "value": terms[k][1], "display": signed(terms[k][1]),
            "title": f"{terms[k][0]}: {fmt.precise(terms[k][1])}", "how": terms[k][2]}
           for k in order[:TOP]]  # fmt: skip
    count = 1 + n_layer * (n_head + 1 + int(has_bias))
    parts = [f"{terms[k][0]} {signed(terms[k][1])}" for k in order[:NAMED]]
    return {
        "position": int(a.position),
        "label": label,
        "token": {"id": int(a.token), **shown},
        "logit": float(a.logit),
        "logit_display": fmt.rounded(a.logit),
        "logit_precise": fmt.precise(a.logit),
        "scale": float(a.scale),
        "title": f"What each component adds to logit({shown['label']}) after {label}",
        "norm": norm_sentence(float(a.scale), label),
        "exact": exact_sentence(float(a.total), float(a.logit), float(a.bound), count, path),
        "sums": said(
            f"The heads add {signed(heads.sum())} in all, the MLPs {signed(mlps.sum())} and the embedding "
            f"{signed(a.embedding)}" + (f"; W_O's biases {signed(bias.sum())}." if has_bias else "."),
            heads=float(heads.sum()), mlps=float(mlps.sum()), embedding=float(a.embedding),
            bias=float(bias.sum()),
        ),  # fmt: skip
        "top_words": said(f"Largest terms: {', '.join(parts)}.",
                          top=[[terms[k][0], terms[k][1]] for k in order[:NAMED]]),  # fmt: skip
        "top": top,
        "embedding": {"value": float(a.embedding), "display": signed(a.embedding),
                      "title": f"embedding: {fmt.precise(a.embedding)}",
                      "how": how("embedding")},  # fmt: skip
        "map": grid(
            values, rows=[f"L{i}" for i in range(n_layer)], columns=columns, cell=cell, title=title,
            scale="signed", limit=limit,
            legend=signed_legend(limit, above=f"raises logit({shown['label']})",
                                 below=f"lowers logit({shown['label']})"),
            label=f"Each head's and MLP's term in logit({shown['label']}): rows are layers, columns heads "
            "and the MLP", how=cell_how,
        ),  # fmt: skip
        "how": {"logit": how("logit"), "total": how("total"), "scale": how("scale")},
        "job": job,
    }
