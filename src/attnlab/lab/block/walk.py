"""One transformer block on the held A/B/C tokens, every intermediate kept (float64).

``walk(x, weights, norm=, positions=, heads_on=)`` returns a :class:`Walk`: the
named intermediates in computation order and, per head and row, the engine's
:class:`~attnlab.engine.single.QueryTrace` (the explorer's own calculation).

- Embed: ``H = X`` (positions "none" or "rope") or ``H = X + PE`` ("sinusoidal").
- Pre-norm:  ``H' = H + MHA(LN_1(H))``;  ``out = H' + MLP(LN_2(H'))``.
- Post-norm: ``H' = LN_1(H + MHA(H))``;  ``out = LN_2(H' + MLP(H'))``.
- ``MHA(Z) = Concat(head_1, head_2) W_O``; head h, row r attends over tokens
  0..r (the causal mask, top-left; ``True`` = may attend) with scores
  ``q . k / sqrt(d_k)``; with RoPE, q and k of token p are rotated by p radians.
- A head switched off (``heads_on[h]`` False) is still computed and shown, but
  contributes zeros to the concatenation, i.e. before W_O.

Products, norms and GELU come from ``lab.block.floats`` (ordered sums, as the
generated program); attention from ``engine.single.trace_query``. Bad inputs
raise ``FieldError`` located at the field (``("weights", "heads", 1, "w_q", 2, 0)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Real

from attnlab.engine.errors import FieldError, Loc
from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab.block import floats as bm
from attnlab.lab.block.data import (
    BASE,
    D_FF,
    D_HEAD,
    D_MODEL,
    EPS,
    LABELS,
    MAX_MAGNITUDE,
    N_HEAD,
    N_TOKENS,
    NORMS,
    POSITIONS,
    given_weights,
    given_x,
)

Matrix = list[list[float]]


@dataclass
class Walk:
    """The walk's numbers: ``tensors`` name -> matrix, in computation order (see ``docs/block-api.md``).

    ``traces[h][r]`` is head h's row r (causal: ``allowed[i]`` = i <= r).
    ``x`` and ``weights`` are the inputs after defaults and validation (floats).
    """

    x: Matrix
    weights: dict
    norm: str
    positions: str
    heads_on: tuple[bool, ...]
    tensors: dict[str, Matrix] = field(default_factory=dict)
    traces: list[list[QueryTrace]] = field(default_factory=list)

    @property
    def output(self) -> Matrix:
        return self.tensors["output"]

    def head_rows(self, h: int, name: str) -> Matrix:
        """Head h's per-row numbers from its traces: dots, scores, weights or output."""
        return [list(getattr(t, name)) for t in self.traces[h]]


def causal_row(r: int) -> list[bool]:
    """Row r of the causal mask: token r may attend to tokens 0..r."""
    return [i <= r for i in range(N_TOKENS)]


# --- validation -------------------------------------------------------------------


def _number(v: object, loc: Loc) -> float:
    if isinstance(v, bool) or not isinstance(v, Real):
        raise FieldError(loc, "must be a number")
    f = float(v)
    if not math.isfinite(f):
        raise FieldError(loc, f"must be finite, not {f!r}")
    if abs(f) > MAX_MAGNITUDE:
        raise FieldError(loc, f"is {f:g}; use |value| <= {MAX_MAGNITUDE:g}")
    return f


def _vector(v: object, n: int, loc: Loc) -> list[float]:
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise FieldError(loc, f"must be a list of {n} numbers")
    return [_number(e, (*loc, j)) for j, e in enumerate(v)]


def _matrix(m: object, rows: int, cols: int, loc: Loc) -> Matrix:
    if not isinstance(m, (list, tuple)) or len(m) != rows:
        raise FieldError(loc, f"must be {rows} rows of {cols} numbers")
    return [_vector(r, cols, (*loc, i)) for i, r in enumerate(m)]


def _key(d: object, key: str, loc: Loc) -> object:
    if not isinstance(d, dict) or key not in d:
        raise FieldError((*loc, key), "is missing")
    return d[key]


def check_x(x: object) -> Matrix:
    """Return X (3 x 4 floats) or raise ``FieldError`` at ``x[i][j]``."""
    return _matrix(x, N_TOKENS, D_MODEL, ("x",))


def check_weights(w: object) -> dict:
    """Return the weights as floats in the given example's shape, or raise ``FieldError``."""
    loc: Loc = ("weights",)
    heads = _key(w, "heads", loc)
    if not isinstance(heads, (list, tuple)) or len(heads) != N_HEAD:
        raise FieldError((*loc, "heads"), f"must list {N_HEAD} heads")
    out = {"heads": []}
    for h, head in enumerate(heads):
        hl = (*loc, "heads", h)
        out["heads"].append(
            {n: _matrix(_key(head, n, hl), D_MODEL, D_HEAD, (*hl, n)) for n in ("w_q", "w_k", "w_v")}
        )
    out["w_o"] = _matrix(_key(w, "w_o", loc), N_HEAD * D_HEAD, D_MODEL, (*loc, "w_o"))
    for n in ("norm_1", "norm_2"):
        nw = _key(w, n, loc)
        out[n] = {p: _vector(_key(nw, p, (*loc, n)), D_MODEL, (*loc, n, p)) for p in ("gamma", "beta")}
    out["w_1"] = _matrix(_key(w, "w_1", loc), D_MODEL, D_FF, (*loc, "w_1"))
    out["b_1"] = _vector(_key(w, "b_1", loc), D_FF, (*loc, "b_1"))
    out["w_2"] = _matrix(_key(w, "w_2", loc), D_FF, D_MODEL, (*loc, "w_2"))
    out["b_2"] = _vector(_key(w, "b_2", loc), D_MODEL, (*loc, "b_2"))
    return out


def _options(norm: object, positions: object, heads_on: object) -> tuple[bool, ...]:
    if norm not in NORMS:
        raise FieldError("norm", f"must be one of {', '.join(NORMS)}")
    if positions not in POSITIONS:
        raise FieldError("positions", f"must be one of {', '.join(POSITIONS)}")
    if (
        not isinstance(heads_on, (list, tuple))
        or len(heads_on) != N_HEAD
        or not all(isinstance(b, bool) for b in heads_on)
    ):
        raise FieldError("heads_on", f"must be {N_HEAD} booleans")
    return tuple(heads_on)


# --- the walk ------------------------------------------------------------------------


def walk(
    x: object = None,
    weights: object = None,
    *,
    norm: str = "pre",
    positions: str = "none",
    heads_on: object = (True, True),
) -> Walk:
    """Run the block on ``x`` (default: the given X) with ``weights`` (default: the given ones)."""
    on = _options(norm, positions, heads_on)
    x_ = check_x(given_x() if x is None else x)
    w = check_weights(given_weights() if weights is None else weights)
    res = Walk(x=x_, weights=w, norm=norm, positions=positions, heads_on=on)
    t = res.tensors
    t["x"] = x_

    # 1) embed: add the sinusoidal table, or nothing (RoPE acts inside attention)
    if positions == "sinusoidal":
        t["pe"] = bm.sinusoidal(N_TOKENS, D_MODEL, BASE)
        t["h"] = bm.add(x_, t["pe"])
    else:
        t["h"] = [list(row) for row in x_]

    # 2) attention, on LN_1(H) (pre) or H (post), then the first residual
    if norm == "pre":
        z = _norm(t, "norm_1", t["h"], w["norm_1"])
        attn = _attention(res, z)
        t["residual_1"] = bm.add(t["h"], attn)
        h_prime = t["residual_1"]
        mlp_in = _norm(t, "norm_2", h_prime, w["norm_2"])
    else:
        attn = _attention(res, t["h"])
        t["residual_1"] = bm.add(t["h"], attn)
        h_prime = _norm(t, "norm_1", t["residual_1"], w["norm_1"])
        mlp_in = h_prime

    # 3) the MLP, then the second residual (and, post-norm, the second norm)
    t["mlp.hidden"] = bm.linear(mlp_in, w["w_1"], w["b_1"])
    t["mlp.activated"] = [[bm.gelu(v) for v in row] for row in t["mlp.hidden"]]
    t["mlp.output"] = bm.linear(t["mlp.activated"], w["w_2"], w["b_2"])
    if norm == "pre":
        t["output"] = bm.add(h_prime, t["mlp.output"])
    else:
        t["residual_2"] = bm.add(h_prime, t["mlp.output"])
        t["output"] = _norm(t, "norm_2", t["residual_2"], w["norm_2"])
    return res


def _norm(t: dict, name: str, z: Matrix, nw: dict) -> Matrix:
    mean, var, std, centred, out = bm.layer_norm(z, nw["gamma"], nw["beta"], EPS)
    t[f"{name}.mean"] = [[m] for m in mean]
    t[f"{name}.var"] = [[v] for v in var]
    t[f"{name}.std"] = [[s] for s in std]
    t[f"{name}.centred"] = centred
    t[f"{name}.output"] = out
    return out


def _attention(res: Walk, z: Matrix) -> Matrix:
    """Project, (rotate,) attend per head with the engine's trace_query, concatenate, W_O."""
    t, w = res.tensors, res.weights
    outputs = []
    for h, hw in enumerate(w["heads"]):
        name = f"head{h + 1}"
        q, k, v = (bm.linear(z, hw[n]) for n in ("w_q", "w_k", "w_v"))
        t[f"{name}.q"], t[f"{name}.k"], t[f"{name}.v"] = q, k, v
        if res.positions == "rope":
            q = [bm.rope_rotate(row, p, BASE) for p, row in enumerate(q)]
            k = [bm.rope_rotate(row, p, BASE) for p, row in enumerate(k)]
            t[f"{name}.q_rotated"], t[f"{name}.k_rotated"] = q, k
        traces = [trace_query(q[r], k, v, labels=LABELS, allowed=causal_row(r)) for r in range(N_TOKENS)]
        res.traces.append(traces)
        t[f"{name}.dots"] = [list(tr.dots) for tr in traces]
        t[f"{name}.scores"] = [list(tr.scores) for tr in traces]
        t[f"{name}.weights"] = [list(tr.weights) for tr in traces]
        t[f"{name}.output"] = [list(tr.output) for tr in traces]
        # a switched-off head writes zeros into its columns of the concatenation
        outputs.append(t[f"{name}.output"] if res.heads_on[h] else [[0.0] * D_HEAD] * N_TOKENS)
    t["concat"] = bm.concat_columns(outputs)
    t["attn"] = bm.linear(t["concat"], w["w_o"])
    return t["attn"]


def explorer_state(res: Walk, h: int, r: int) -> dict:
    """Return the explorer's inputs (a ``POST /api/trace`` body) for head h, row r."""
    tr = res.traces[h][r]
    return {
        "labels": list(tr.labels),
        "q": list(tr.q),
        "keys": [list(k) for k in tr.keys],
        "values": [list(v) for v in tr.values],
        "allowed": list(tr.allowed),
        "scale": tr.scale,
    }
