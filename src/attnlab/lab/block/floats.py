"""The block's arithmetic on plain Python floats, in the order its generated program uses.

The engine's tensor functions (``engine.layers``, ``engine.multihead``) multiply
with NumPy/BLAS, whose summation order (and fused multiply-adds) is not
specified, so they agree with a hand-written program only to ~1e-15. The page
promises more: its generated NumPy-free program prints *its* numbers bit for
bit. So the walk computes the products, norms and GELU here, exactly as the
program does:

- every sum runs left to right from ``0.0`` (``engine.single.ordered_sum``);
- ``linear``: ``y[i][j] = ordered_sum(x[i][k] * w[k][j]) (+ b[j])``;
- ``layer_norm``: mean and biased variance as ordered sums divided by d,
  ``std = math.sqrt(var + eps)``, ``(c / std) * gamma + beta``;
- ``gelu``: ``0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))``;
- attention itself is ``engine.single.trace_query`` (one query row at a time),
  which already follows these rules.

The tests check every intermediate against the engine's ``transformer_block``
trace (within 1e-12) and against PyTorch. The functions' source is copied into
the generated program (``lab.block_python``), so the two cannot drift apart.
Matrices are lists of rows (tuples or lists of floats).
"""

from __future__ import annotations

import math

from attnlab.engine.single import ordered_sum

Matrix = list[list[float]]


def linear(x, w, b=None):
    """Return x @ w (+ b) with ordered sums; x (n, d_in), w (d_in, d_out), b (d_out,) or None."""
    out = []
    for row in x:
        y = [ordered_sum(row[k] * w[k][j] for k in range(len(row))) for j in range(len(w[0]))]
        if b is not None:
            y = [yj + bj for yj, bj in zip(y, b)]
        out.append(y)
    return out


def add(a, b):
    """Return the element-wise sum of two equally shaped matrices (the residual)."""
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def layer_norm(x, gamma, beta, eps):
    """Normalise each row: return (mean, var, std, centred, output), per row (biased variance)."""
    means, variances, stds, centred, output = [], [], [], [], []
    for row in x:
        d = len(row)
        mean = ordered_sum(row) / d
        c = [v - mean for v in row]
        var = ordered_sum(ci * ci for ci in c) / d
        std = math.sqrt(var + eps)
        means.append(mean)
        variances.append(var)
        stds.append(std)
        centred.append(c)
        output.append([(ci / std) * g + b for ci, g, b in zip(c, gamma, beta)])
    return means, variances, stds, centred, output


def gelu(v):
    """Return the exact (erf) GELU of one number."""
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0)))


def sinusoidal(n_positions, d_model, base):
    """Return the (n_positions, d_model) table: sin in even columns, cos in odd ones."""
    table = []
    for p in range(n_positions):
        row = []
        for col in range(d_model):
            angle = p * base ** (-(col - col % 2) / d_model)
            row.append(math.sin(angle) if col % 2 == 0 else math.cos(angle))
        table.append(row)
    return table


def rope_angle(position, i, d_head, base):
    """Return RoPE's angle for coordinate pair i at ``position``: position * base^(-2i/d_head)."""
    return position * base ** (-2.0 * i / d_head)


def rope_rotate(vec, position, base):
    """Rotate ``vec`` (even length) as RoPE's "half" layout does: pair i with i + d/2.

    With d_head = 2 this is the rotation of the plane by ``position`` radians.
    """
    half = len(vec) // 2
    first, second = [], []
    for i in range(half):
        angle = rope_angle(position, i, len(vec), base)
        c, s = math.cos(angle), math.sin(angle)
        a, b = vec[i], vec[i + half]
        first.append(a * c - b * s)
        second.append(b * c + a * s)
    return first + second


def concat_columns(blocks):
    """Return the rows of several (n, d) matrices joined side by side (Concat of heads)."""
    return [[v for block in blocks for v in block[i]] for i in range(len(blocks[0]))]
