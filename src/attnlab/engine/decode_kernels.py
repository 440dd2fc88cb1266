"""Compiled steps of :mod:`attnlab.engine.decode`'s block: the work between the products, in fewer passes.

A short prompt's or a decoding step's block spends as long between its four
products as in the NumPy calls themselves (~40 small calls, each a few us of
overhead on arrays of a few thousand numbers). These loops do the same
arithmetic in one call each (imported on first use: numba is slow to import):

- :func:`rms_rows`: RMSNorm as ``decode_steps._rms_numpy`` (sum of squares,
  / d, + eps, sqrt, x / root, * weight); only the sum's order differs (here 16
  partial sums and a fixed tree, NumPy's pairwise), so the two agree to rounding.
- :func:`rotate_heads`: RoPE on every q and k head, with the products and sums
  of ``decode_steps._rotate`` in the same order: the same bits (no FMA contraction:
  numba sets no fast-math flag).
- :func:`silu_start` / :func:`silu_finish`: ``silu(gate) * up`` around NumPy's
  ``exp``, with the operations of ``decode_steps._silu`` in its order: the same bits.

Every output is one fixed sequence of operations on one thread, so the bits
never depend on the thread count.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.compiled import _jit

_LANES = 16  # the sum of squares: 16 partial sums, then a fixed tree (a single chain waited on each add)


@_jit(error_model="numpy")
def rms_rows(x, weight, eps, out):
    """``out[i] = x[i] / sqrt(mean(x[i]^2) + eps) * weight`` for x (L, d); ``weight`` (d,) or empty (none);
    eps of x's dtype (a Python float would make the arithmetic float64). The sum of squares: lane l
    adds x[c]^2 for c = l, l + 16, ... in order, then lanes l and l + 8, l + 4, l + 2, l + 1."""
    n, d = x.shape
    scaled = weight.shape[0] > 0
    part = np.empty(_LANES, x.dtype)
    full = d // _LANES * _LANES
    for i in range(n):
        row = x[i]
        part[:] = 0.0
        for c0 in range(0, full, _LANES):
            for lane in range(_LANES):
                part[lane] += row[c0 + lane] * row[c0 + lane]
        for c in range(full, d):
            part[c - full] += row[c] * row[c]
        width = _LANES // 2
        while width >= 1:
            for lane in range(width):
                part[lane] += part[lane + width]
            width //= 2
        ms = part[0] / x.dtype.type(d) + eps
        root = np.sqrt(ms)
        for j in range(d):
            y = row[j] / root
            out[i, j] = y * weight[j] if scaled else y


@_jit(error_model="numpy")
def rotate_heads(qkv, n_heads, d, cos, sin, half, out):
    """RoPE on the first ``n_heads`` heads of qkv (L, >= n_heads * d): out (L, n_heads, d).

    cos, sin: (L, d / 2). ``half``: the (x[:d/2], x[d/2:]) pairing, else interleaved (x0, x1), ...
    """
    n = qkv.shape[0]
    h2 = d // 2
    for t in range(n):
        for h in range(n_heads):
            base = h * d
            for i in range(h2):
                c, s = cos[t, i], sin[t, i]
                if half:
                    a, b = qkv[t, base + i], qkv[t, base + h2 + i]
                    out[t, h, i] = a * c - b * s
                    out[t, h, h2 + i] = b * c + a * s
                else:
                    a, b = qkv[t, base + 2 * i], qkv[t, base + 2 * i + 1]
                    out[t, h, 2 * i] = a * c - b * s
                    out[t, h, 2 * i + 1] = a * s + b * c


@_jit(error_model="numpy")
def silu_start(gate_up, d_ff, out):
    """``out = -|gate|`` (the argument of exp) for gate_up (L, 2 d_ff) = [gate | up], C-contiguous."""
    n = out.shape[0]
    for i in range(n):
        row = gate_up[i]
        for j in range(d_ff):
            out[i, j] = -abs(row[j])


@_jit(error_model="numpy")
def silu_finish(gate_up, d_ff, e):
    """``e = silu(gate) * up`` in place for gate_up = [gate | up], e = exp(-|gate|) on entry:
    max(gate >= 0, e) / (e + 1) * gate * up (NumPy's maximum: NaN when either is NaN)."""
    n = e.shape[0]
    one, zero = e.dtype.type(1.0), e.dtype.type(0.0)
    for i in range(n):
        row = gate_up[i]
        for j in range(d_ff):
            z, ez = row[j], e[i, j]
            num = one if z >= zero else zero
            num = num if num >= ez else ez  # ez NaN: not (num >= ez), so NaN
            e[i, j] = num / (ez + one) * z * row[d_ff + j]
