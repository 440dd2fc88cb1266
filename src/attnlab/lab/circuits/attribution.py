"""'Which heads matter here': direct logit attribution in words.

Numbers in (``models/circuits/attribution.logit_attribution``'s :class:`Attribution`, read by
attribute: ``position``, ``token``, ``logit``, ``scale``, ``embedding``, ``heads`` (L, H),
``attn_bias`` (L,), ``mlps`` (L,), ``total``, ``bound``), JSON out: every term as a
layers × (heads, MLP) map, the largest terms named, how the final norm is treated, and the
exact-sum claim checked against its rounding bound: ``within`` is ``|total - logit| <= bound``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnlab.lab import numbers as fmt
from attnlab.lab.circuits.heatmap import grid, signed, signed_legend
from attnlab.lab.circuits.marks import marked, number
from attnlab.lab.realmodel.tokens import row_label, token_label

How = Callable[[str], dict | None]  # a term's descriptor (lab/realmodel/program's kind attribution)

TOP = 10  # terms in the ranked list
NAMED = 3  # terms named in the sentence


def _no_how(term: str) -> None:
    return None


def norm_sentence(scale: float, label: str, how: How = _no_how) -> dict:
    """How the final RMSNorm is treated (claims ``scale``: 1 / rms at the position, and ``rms``).

    ``how(term)``: a number's descriptor for "How is this computed?" (its ``term``: rms, scale).
    """
    rms = 1.0 / scale
    return marked(
        f"The final RMSNorm divides the residual stream at {label} by its rms, ",
        number(fmt.rounded(rms), how("rms"), rms),
        "; that division is not linear, so it is frozen at its value in the real forward pass "
        "(scale 1/rms = ",
        number(fmt.significant(scale), how("scale"), scale),
        "). Then the logit is residual · u with u = scale × γ ⊙ E[token], and each component's term is its "
        "own output · u. RMSNorm has no bias and no centring, so nothing is left over: the terms add up to "
        "the logit.",
        scale=scale, rms=rms,
    )  # fmt: skip


def _times(ratio: float) -> str:
    """A ratio of two measured sizes, to two significant digits with thousands marked: ``22,000``."""
    return f"{float(f'{ratio:.2g}'):,.0f}" if ratio >= 10 else fmt.rounded(ratio, 1)


def exact_sentence(total: float, logit: float, bound: float, count: int, path: str,
                   how: How = _no_how) -> dict:  # fmt: skip
    """The exact-sum claim: the terms' total beside the model's logit, the gap measured between them
    and the bound the forward pass's rounding puts on it, each at its own size.

    The gap is the evidence: it is said in steps of the float type's spacing at the logit's size
    (``step``: the distance from |logit| to the next number of that type). The bound is the worst
    case the rounding allows, and it is said how much looser it is than the gap (``looser``:
    bound / gap, None for no gap). Claims ``count``, ``total``, ``logit``, ``difference``
    (|total - logit|), ``bound``, ``within``, ``step``, ``steps`` (difference / step), ``looser``;
    ``how(term)`` as for :func:`norm_sentence` (total, logit, difference, bound).
    """
    difference = abs(total - logit)
    within = difference <= bound
    precision = "float64" if path == "float64" else "float32"
    kind = np.float64 if precision == "float64" else np.float32
    step = float(np.spacing(kind(abs(logit))))
    steps = difference / step
    looser = bound / difference if difference > 0 else None
    claims = dict(count=count, total=total, logit=logit, difference=difference, bound=bound, within=within,
                  step=step, steps=steps, looser=looser)  # fmt: skip
    start = [
        f"The {count} terms add up to ", number(fmt.precise(total), how("total"), total),
        " and the model's logit is ", number(fmt.precise(logit), how("logit"), logit),
    ]  # fmt: skip
    near = fmt.rounded(logit, 1) if abs(logit) >= 1 else fmt.significant(logit, 2)
    spacing = f"neighbouring {precision} numbers near {near} are {fmt.scientific(step)} apart"
    shown_steps = fmt.rounded(steps, 1)
    if difference == 0:
        gap = [f": they are equal, to the last bit ({spacing})."]
    elif not within:
        shown = number(fmt.scientific(difference), how("difference"), difference)
        gap = [": the measured gap is ", shown, "."]
    else:
        gap = [
            ": the measured gap is ", number(fmt.scientific(difference), how("difference"), difference),
            f", {shown_steps} {precision} step{'' if shown_steps == '1' else 's'} at this size ({spacing}).",
        ]  # fmt: skip
    if not within:
        end = [
            " That is more than the worst case the forward pass's own rounding allows, ",
            number(fmt.scientific(bound), how("bound"), bound), ": the terms do not add up to the logit.",
        ]  # fmt: skip
    elif looser is None or looser < 10:
        end = [
            " The worst case the forward pass's own rounding allows is ",
            number(fmt.scientific(bound), how("bound"), bound), ": the terms add up to the logit.",
        ]  # fmt: skip
    else:
        end = [
            " That gap is the evidence that the terms add up to the logit; the worst case the forward "
            "pass's own rounding allows, ", number(fmt.scientific(bound), how("bound"), bound),
            f", is about {_times(looser)} times larger, so that bound holds but says little.",
        ]  # fmt: skip
    return marked(*start, *gap, *end, **claims)


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
    named = []
    for k in order[:NAMED]:
        name_k, value_k, how_k = terms[k]
        named += [", " if named else "", f"{name_k} ", number(signed(value_k), how_k, value_k)]
    return {
        "position": int(a.position),
        "label": label,
        "token": {"id": int(a.token), **shown},
        "logit": float(a.logit),
        "logit_display": fmt.rounded(a.logit),
        "logit_precise": fmt.precise(a.logit),
        "scale": float(a.scale),
        "title": f"What each component adds to logit({shown['label']}) after {label}",
        "norm": norm_sentence(float(a.scale), label, how),
        "exact": exact_sentence(float(a.total), float(a.logit), float(a.bound), count, path, how),
        "sums": marked(
            "The heads add ", number(signed(heads.sum()), how("heads"), heads.sum()),
            " in all, the MLPs ", number(signed(mlps.sum()), how("mlps"), mlps.sum()),
            " and the embedding ", number(signed(a.embedding), how("embedding"), a.embedding),
            *(["; W_O's biases ", number(signed(bias.sum()), None, bias.sum()), "."] if has_bias else ["."]),
            heads=float(heads.sum()), mlps=float(mlps.sum()), embedding=float(a.embedding),
            bias=float(bias.sum()),
        ),  # fmt: skip
        "top_words": marked("Largest terms: ", *named, ".",
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
