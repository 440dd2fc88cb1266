"""Turn a :class:`~attnlab.lab.block.walk.Walk` into what the page draws: steps of tensors.

Each tensor carries its numbers at full precision (``values``), rounded as the
page shows them (``display``, ``lab.numbers.rounded``), as ``repr`` strings
(``precise``) and, for products, the written-out sums (``expansions``). The
step and tensor names are the contract of ``docs/block-api.md``.
"""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.block import words
from attnlab.lab.block.data import D_FF, D_HEAD, D_MODEL, LABELS
from attnlab.lab.block.walk import Walk, causal_row

MODEL_COLS = [str(j + 1) for j in range(D_MODEL)]
_HEAD_COLS = [str(j + 1) for j in range(D_HEAD)]
_FF_COLS = [str(j + 1) for j in range(D_FF)]


def _norm_meta(name: str, source: str) -> dict:
    n = "₁" if name == "norm_1" else "₂"
    return {
        f"{name}.mean": (f"mean of {source}", "μ = Σⱼ zⱼ / 4", ["μ"]),
        f"{name}.var": (f"variance of {source}", "σ² = Σⱼ (zⱼ − μ)² / 4 (biased)", ["σ²"]),
        f"{name}.std": (f"√(σ² + eps) of {source}", "√(σ² + 1e-5)", ["√(σ²+eps)"]),
        f"{name}.centred": (f"{source} − μ", "z − μ", MODEL_COLS),
        f"{name}.output": (f"LN{n}({source})", f"(z − μ) / √(σ² + eps) · γ{n} + β{n}", MODEL_COLS),
    }


def _meta(walk: Walk) -> dict:
    """name -> (label, formula, columns) for this walk's tensors."""
    pre = walk.norm == "pre"
    z = "LN₁(H)" if pre else "H"
    meta = {
        "x": ("X", "the given inputs, one row per token", MODEL_COLS),
        "pe": ("PE", "PE[p, 2i] = sin(p / 10000^(2i/4)), PE[p, 2i+1] = cos(p / 10000^(2i/4))", MODEL_COLS),
        "h": ("H", "H = X + PE" if walk.positions == "sinusoidal" else "H = X", MODEL_COLS),
        "concat": ("Concat(head¹, head²)", "the heads' outputs side by side", MODEL_COLS),
        "attn": ("MHA", "Concat(head¹, head²) W_O", MODEL_COLS),
        "mlp.hidden": ("Z W₁ + b₁", "the MLP's hidden layer (before GELU)", _FF_COLS),
        "mlp.activated": ("GELU(Z W₁ + b₁)", "GELU(x) = 0.5 x (1 + erf(x / √2))", _FF_COLS),
        "mlp.output": ("MLP", "GELU(Z W₁ + b₁) W₂ + b₂", MODEL_COLS),
        "output": ("output", "H' + MLP(LN₂(H'))" if pre else "LN₂(H' + MLP(H'))", MODEL_COLS),
    }
    if pre:
        meta["residual_1"] = ("H'", "H' = H + MHA(LN₁(H))", MODEL_COLS)
        meta.update(_norm_meta("norm_1", "H"))
        meta.update(_norm_meta("norm_2", "H'"))
    else:
        meta["residual_1"] = ("H + MHA(H)", "the residual before the first norm", MODEL_COLS)
        meta["residual_2"] = ("H' + MLP(H')", "the residual before the second norm", MODEL_COLS)
        meta.update(_norm_meta("norm_1", "H + MHA(H)"))
        meta.update(_norm_meta("norm_2", "H' + MLP(H')"))
    for h in (1, 2):
        s = "¹" if h == 1 else "²"
        for n in ("q", "k", "v"):
            meta[f"head{h}.{n}"] = (f"{n.upper()}{s}", f"{z} W_{n.upper()}{s}", _HEAD_COLS)
        meta[f"head{h}.q_rotated"] = (f"RoPE(Q{s})", "q of token p turned by p radians", _HEAD_COLS)
        meta[f"head{h}.k_rotated"] = (f"RoPE(K{s})", "k of token p turned by p radians", _HEAD_COLS)
        meta[f"head{h}.dots"] = (f"Q{s}K{s}ᵀ", "qᵣ · kᵢ", list(LABELS))
        meta[f"head{h}.scores"] = (
            f"Q{s}K{s}ᵀ × {words.SCALE_TEXT}",
            f"qᵣ · kᵢ × scale, scale = 1/√dₖ = {words.SCALE_TEXT} (dₖ = 2)",
            list(LABELS),
        )
        meta[f"head{h}.weights"] = (
            f"softmax weights, head {h}",
            "exp(sᵢ − m) / Z over the allowed tokens (causal: i ≤ r)",
            list(LABELS),
        )
        meta[f"head{h}.output"] = (f"head{s}", "Σᵢ wᵢ vᵢ", _HEAD_COLS)
    return meta


# The editor's matrices, named as the walk names them: (id, label, path into the request, shape).
_MATRICES = [
    ("x", "X (inputs, 3 × 4)", ["x"], (3, 4)),
    *[
        (f"h{h}-w{n}", f"W_{n.upper()}{s} (4 × 2)", ["weights", "heads", h - 1, f"w_{n}"], (4, 2))
        for h, s in ((1, "¹"), (2, "²"))
        for n in ("q", "k", "v")
    ],
    ("wo", "W_O (4 × 4)", ["weights", "w_o"], (4, 4)),
    ("n1g", "LN₁ γ", ["weights", "norm_1", "gamma"], (4,)),
    ("n1b", "LN₁ β", ["weights", "norm_1", "beta"], (4,)),
    ("n2g", "LN₂ γ", ["weights", "norm_2", "gamma"], (4,)),
    ("n2b", "LN₂ β", ["weights", "norm_2", "beta"], (4,)),
    ("w1", "W₁ (4 × 8)", ["weights", "w_1"], (4, 8)),
    ("b1", "b₁ (8)", ["weights", "b_1"], (8,)),
    ("w2", "W₂ (8 × 4)", ["weights", "w_2"], (8, 4)),
    ("b2", "b₂ (4)", ["weights", "b_2"], (4,)),
]


def matrices() -> list[dict]:
    """The editable inputs and weights: ``id``, ``label`` (W₁, W_Q¹: the walk's names), ``path``
    into the request and ``cells``, each cell's name for a screen reader, by row."""
    out = []
    for id_, label, path, shape in _MATRICES:
        if len(shape) == 1:
            cells = [[f"{label}: {c + 1}" for c in range(shape[0])]]
        else:
            rows, cols = shape
            cells = [[f"{label}: row {r + 1}, column {c + 1}" for c in range(cols)] for r in range(rows)]
        out.append({"id": id_, "label": label, "path": path, "cells": cells})
    return out


def labels(walk: Walk) -> dict[str, str]:
    """Tensor name -> the label the page shows for it in this walk ("norm_1.mean" -> "mean of H")."""
    return {name: m[0] for name, m in _meta(walk).items() if name in walk.tensors}


def formula_shown(label: str, formula: str) -> str:
    """What follows the label in a tensor's caption: " = formula", unless one already says what it equals."""
    if not formula:
        return ""
    if formula.startswith(f"{label} ="):
        return formula[len(label) :]  # label "H", formula "H = X"
    if "=" in label:
        return f" · {formula}"  # the label already says what it equals
    return f" = {formula}"


def sums(
    label: str, rows: list[str], cols: list[str], precise: list[list[str]], expansions
) -> list[list[str]]:
    """Each cell's line under its table: "Q¹ [A, 1] = 1×0.5 + 0×0 = 0.5", or its full-precision value."""
    return [
        [
            f"{label} [{r}, {c}] = {expansions[i][j] if expansions else precise[i][j]}"
            for j, c in enumerate(cols)
        ]
        for i, r in enumerate(rows)
    ]


def table(name: str, label: str, formula: str, rows, cols, values, display=None, expansions=None) -> dict:
    """A tensor as the page draws it: label, formula, every number rounded and at full precision."""
    precise = [[fmt.precise(v) for v in row] for row in values]
    return {
        "name": name,
        "label": label,
        "formula": formula,
        "formula_shown": formula_shown(label, formula),
        "rows": list(rows),
        "cols": list(cols),
        "values": [list(row) for row in values],
        "display": display or [[fmt.rounded(v) for v in row] for row in values],
        "precise": precise,
        "expansions": expansions,
        "sums": sums(label, list(rows), list(cols), precise, expansions),
    }


def _product_inputs(walk: Walk) -> dict:
    """name -> (left matrix, right matrix, bias or None) for the products the page writes out."""
    t, w = walk.tensors, walk.weights
    z = t["norm_1.output"] if walk.norm == "pre" else t["h"]
    mlp_in = t["norm_2.output"] if walk.norm == "pre" else t["norm_1.output"]
    out = {
        "attn": (t["concat"], w["w_o"], None),
        "mlp.hidden": (mlp_in, w["w_1"], w["b_1"]),
        "mlp.output": (t["mlp.activated"], w["w_2"], w["b_2"]),
    }
    for h, hw in enumerate(w["heads"]):
        for n in ("q", "k", "v"):
            out[f"head{h + 1}.{n}"] = (z, hw[f"w_{n}"], None)
    return out


def _factor(x: float) -> str:
    text = fmt.rounded(x)
    return f"({text})" if text.startswith("-") else text


def expansion(row: list[float], w: list[list[float]], j: int, value: float, b: list[float] | None) -> str:
    """Write entry j of ``row @ w (+ b)`` as its sum of products: ``1×0.5 + (-1)×0 = 0.5``."""
    terms = " + ".join(f"{_factor(a)}×{_factor(w[k][j])}" for k, a in enumerate(row))
    if b is not None:
        terms += f" + {_factor(b[j])}"
    return f"{terms} = {fmt.rounded(value)}"


def tensor(walk: Walk, name: str, meta: dict, products: dict) -> dict:
    label, formula, cols = meta[name]
    values = walk.tensors[name]
    display = [[fmt.rounded(v) for v in row] for row in values]
    if name.endswith(".weights"):
        display = [
            [fmt.rounded(v) if ok else "blocked" for v, ok in zip(row, causal_row(r))]
            for r, row in enumerate(values)
        ]
    expansions = None
    if name in products:
        left, right, bias = products[name]
        expansions = [
            [expansion(left[i], right, j, values[i][j], bias) for j in range(len(values[i]))]
            for i in range(len(values))
        ]
    return table(name, label, formula, LABELS, cols, values, display, expansions)


def _step_names(walk: Walk) -> dict[str, list[str]]:
    t = walk.tensors
    norm_names = ("mean", "var", "std", "centred", "output")
    n1 = [f"norm_1.{n}" for n in norm_names]
    n2 = [f"norm_2.{n}" for n in norm_names]
    heads = []
    for h in (1, 2):
        heads += [f"head{h}.{n}" for n in ("q", "k", "v", "q_rotated", "k_rotated") if f"head{h}.{n}" in t]
    pre = walk.norm == "pre"
    return {
        "embed": [n for n in ("x", "pe", "h") if n in t],
        "project": (n1 if pre else []) + heads,
        "attend-1": [f"head1.{n}" for n in ("dots", "scores", "weights", "output")],
        "attend-2": [f"head2.{n}" for n in ("dots", "scores", "weights", "output")],
        "combine": ["concat", "attn"],
        "add-norm-1": ["residual_1"] + (n2 if pre else n1),
        "mlp": ["mlp.hidden", "mlp.activated", "mlp.output"],
        "add-norm-2": ["output"] if pre else ["residual_2", *n2, "output"],
    }


def steps(walk: Walk) -> list[dict]:
    """Return the stepper's steps, in order, each with its tensors."""
    meta, products = _meta(walk), _product_inputs(walk)
    names_by_step = _step_names(walk)
    placement = "Pre-norm" if walk.norm == "pre" else "Post-norm"
    out = []
    for n, (step_id, names) in enumerate(names_by_step.items()):
        title = words.STEP_TITLES[step_id]
        caption = words.caption(
            step_id, norm=walk.norm, positions=walk.positions, heads_on=walk.heads_on, w_o=walk.weights["w_o"]
        )
        out.append(
            {
                "id": step_id,
                "title": title,
                "heading": words.step_heading(n, len(names_by_step), title),
                "link": words.step_link(n, title),
                "side_heading": f"{placement} · {title}",
                "caption": caption,
                "head": int(step_id[-1]) - 1 if step_id.startswith("attend-") else None,
                "tensors": [tensor(walk, n, meta, products) for n in names],
            }
        )
    return out
