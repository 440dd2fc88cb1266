"""The state-space lab's answer for one input: pictures, sentences, every number, the numbers as data."""

from __future__ import annotations

from attnlab.engine.recurrence import multiply_adds
from attnlab.lab import numbers as fmt
from attnlab.lab.connections import pictures as pic
from attnlab.lab.connections.ssm import words
from attnlab.lab.connections.ssm.walk import MAX_COPY, D, SSMWalk, walk


def _positions(n: int) -> list[str]:
    return [str(i) for i in range(n)]


def _pictures(w: SSMWalk) -> list[dict]:
    t = w.step - 1
    lengths = list(range(1, 33))
    costs = [multiply_adds(m, D, D) for m in lengths]
    c = w.copy
    return [
        pic.heatmap(
            "linear-matrix",
            "Linear attention as a matrix",
            f"Row i holds query i's weights φ(q_i)·φ(k_j) over the keys j ≤ i, normalised to add up to 1: "
            f"an n × n matrix, zero above the diagonal. Row {t} is outlined.",
            _positions(w.n),
            _positions(w.n),
            w.matrix.weights,
            blocked=[[j > i for j in range(w.n)] for i in range(w.n)],
            marks=[pic.mark("row", t)],
        ),
        pic.heatmap(
            "state",
            f"The state S_{w.step}",
            f"The recurrence's whole memory after step {w.step}: S = Σ φ(k_j) v_jᵀ over the keys so far, "
            f"{D} × {D} numbers (teal positive, amber negative), the same size at every step.",
            [f"φ(k) {i + 1}" for i in range(D)],
            [f"v {j + 1}" for j in range(D)],
            w.recurrence.states[t],
            signed=True,
            texts=[[fmt.rounded(x) for x in row] for row in w.recurrence.states[t]],
        ),
        pic.lines(
            "cost",
            "Multiply-adds as n grows",
            "The matrix form's work grows with n² (every pair of positions), the recurrence's with n "
            f"(one state update per token); the marker is n = {w.n}.",
            pic.axis("sequence length n", 1, 32),
            pic.axis("multiply-adds", 0, max(c_["matrix"] for c_ in costs)),
            [
                {"name": "matrix form", "cls": "now", "xs": lengths, "ys": [c_["matrix"] for c_ in costs]},
                {
                    "name": "recurrence",
                    "cls": "full",
                    "xs": lengths,
                    "ys": [c_["recurrence"] for c_ in costs],
                },
            ],
            marker=w.n,
            marker_text=f"n = {w.n}",
        ),
        pic.heatmap(
            "dual",
            "The selective scan as a matrix: M",
            "M[t, s] is how much input s still counts in output t: its write Δ_s b, decayed by every later "
            "step, "
            f"read out by c. Lower triangular like causal attention, but signed (amber negative). Row {t} is "
            "outlined.",
            _positions(w.n),
            _positions(w.n),
            w.dual,
            signed=True,
            blocked=[[j > i for j in range(w.n)] for i in range(w.n)],
            marks=[pic.mark("row", t)],
        ),
        pic.lines(
            "scan-output",
            "The scan's output, two ways",
            "y from the recurrence (dots) and from M x (line): the same numbers.",
            pic.axis("step t", 0, max(1, w.n - 1)),
            pic.axis("y", min(float(w.scan.output.min()), 0.0), max(float(w.scan.output.max()), 0.1)),
            [
                {
                    "name": "M x",
                    "cls": "full",
                    "xs": list(range(w.n)),
                    "ys": list(w.dual @ w.x),
                    "dots": False,
                },
                {"name": "recurrence", "cls": "now", "xs": list(range(w.n)), "ys": list(w.scan.output)},
            ],
            marker=t,
            marker_text=f"t = {t}",
        ),
        pic.lines(
            "copy",
            "Copying L tokens back",
            f"Tokens copied back correctly out of L, for keys of d = {w.d} numbers: linear attention's fixed "
            f"state against softmax attention. The dashed marker is L = n = {w.n}.",
            pic.axis("tokens stored, L", 1, MAX_COPY),
            pic.axis("tokens copied right", 0, MAX_COPY),
            [
                {
                    "name": "softmax attention",
                    "cls": "full",
                    "xs": c.lengths,
                    "ys": c.softmax_right,
                    "dots": False,
                },
                {
                    "name": "linear attention",
                    "cls": "now",
                    "xs": c.lengths,
                    "ys": c.linear_right,
                    "dots": False,
                },
            ],
            marker=w.n,
            marker_text=f"L = {w.n}",
        ),
    ]


def _numbers(w: SSMWalk) -> list[dict]:
    rows = []
    for i in range(w.n):
        rows.append(
            [
                str(i),
                fmt.vector(w.matrix.output[i]),
                fmt.vector(w.recurrence.output[i]),
                fmt.rounded(float(w.x[i])),
                fmt.rounded(float(w.scan.steps[i])),
                fmt.rounded(float(w.scan.output[i])),
            ]
        )
    copy_rows = [
        [str(L), str(a), str(b), fmt.scientific(e)]
        for L, a, b, e in zip(w.copy.lengths, w.copy.linear_right, w.copy.softmax_right, w.copy.linear_error)
    ]
    return [
        {
            "title": "Each position: linear attention two ways, the scan",
            "columns": ["t", "matrix form", "recurrence", "x_t", "Δ_t", "y_t"],
            "rows": rows,
        },
        {
            "title": f"The copy task, keys of d = {w.d}",
            "columns": ["L", "linear right", "softmax right", "linear's largest error"],
            "rows": copy_rows,
        },
        {
            "title": "Inputs (seeded)",
            "columns": ["position", "q", "k", "v"],
            "rows": [
                [str(i), fmt.vector(w.q[i]), fmt.vector(w.k[i]), fmt.vector(w.v[i])] for i in range(w.n)
            ],
        },
    ]


def data(w: SSMWalk) -> dict:
    return {
        "matrix_output": w.matrix.output.tolist(),
        "recurrent_output": w.recurrence.output.tolist(),
        "state": w.recurrence.states[w.step - 1].tolist(),
        "linear_difference": w.linear_difference(),
        "multiply_adds": w.costs(),
        "scan_output": w.scan.output.tolist(),
        "dual": w.dual.tolist(),
        "scan_difference": w.scan_difference(),
        "copy_linear_right": w.copy.linear_right,
        "copy_softmax_right": w.copy.softmax_right,
    }


def answer(values: dict) -> dict:
    w = walk(**values)
    return {"pictures": _pictures(w), "words": words.sentences(w), "numbers": _numbers(w), "data": data(w)}
