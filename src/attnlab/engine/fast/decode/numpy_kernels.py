"""The compiled loops of :mod:`attnlab.engine.fast.decode.kernels` in NumPy, bit for bit.

Each function has the kernel's name, arguments and effect (it writes ``out`` or ``w`` and
returns what the loop returns) and does the same float operations in the same order, on whole
arrays at a time instead of one number at a time. It is the kernels' readable reference: the
programs behind the real-model views (:mod:`attnlab.lab.realmodel.program`) embed this module's
source, so that a program without numba prints the numbers the compiled steps gave
(tested against the kernels, number by number, in ``tests/engine/fast/test_decode_numpy_kernels.py``).

- Products and sums are rounded as NumPy rounds them: numba sets no fast-math flag, so the loops
  never fuse a product into a sum, except where kernels.py asks for a fused multiply-add
  (``llvm.fma``: :func:`dot16`'s and :func:`mix16`'s lanes), which :func:`fma32` rounds once.
- 16 lanes: a dot product (:func:`dot16`) or the sum of squares of RMSNorm (:func:`rms_rows`)
  keeps 16 partial sums, lane l adding coordinates l, l + 16, l + 32, ... in order, then adds
  lanes l and l + 8, then l and l + 4, l + 2, l + 1 (a fixed tree).
"""

from __future__ import annotations

import numpy as np

LANES = 16


def fma32(a, b, c):
    """a · b + c rounded once to float32, as a fused multiply-add rounds it (float32 arrays in and out).

    The product of two float32 numbers is exact in float64. Their sum with c is rounded to float64
    "to odd" (an inexact sum keeps an odd last bit), which makes the final rounding to float32 the
    single correct rounding of a · b + c (Boldo and Melquiond, 2008).
    """
    p = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)  # exact: 24 + 24 bits fit in 53
    c = np.asarray(c, dtype=np.float64)
    s = p + c
    bb = s - p
    error = (p - (s - bb)) + (c - bb)  # the exact error of s (Knuth's two-sum)
    inexact_even = (error != 0) & (s.view(np.int64) % 2 == 0)
    s = np.where(inexact_even, np.nextafter(s, np.where(error > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def dot16(a, b):
    """a · b over the last axis (float32, a multiple of 16 long), as kernels.dot16 sums it: lane l adds
    a[c] · b[c] for c = l, l + 16, ... with fused multiply-adds from 0, then the lanes' fixed tree."""
    acc = np.zeros(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]) + (LANES,), np.float32)
    for c in range(0, a.shape[-1], LANES):
        acc = fma32(a[..., c : c + LANES], b[..., c : c + LANES], acc)
    return _tree(acc)


def _tree(part):
    """Lanes l and l + 8, then l and l + 4, l + 2, l + 1: (..., 16) -> (...)."""
    width = LANES // 2
    while width >= 1:
        part = part[..., :width] + part[..., width : 2 * width]
        width //= 2
    return part[..., 0]


def rms_rows(x, weight, eps, out):
    """``out[i] = x[i] / sqrt(mean(x[i]^2) + eps) * weight`` (kernels.rms_rows): the sum of squares in 16
    lanes (the last d % 16 columns in lanes 0.. after the whole lines), then the tree; ``weight`` (d,), or
    empty for none; eps in x's dtype."""
    n, d = x.shape
    squares = x * x
    full = d // LANES * LANES
    part = np.zeros((n, LANES), x.dtype)
    for c in range(0, full, LANES):
        part += squares[:, c : c + LANES]
    part[:, : d - full] += squares[:, full:]
    ms = _tree(part) / x.dtype.type(d) + eps  # (n,)
    y = x / np.sqrt(ms)[:, None]
    out[...] = y * weight if weight.shape[0] > 0 else y


def rotate_heads(qkv, n_heads, d, cos, sin, half, out):
    """RoPE on the first ``n_heads`` heads of qkv (L, >= n_heads * d) into out (L, n_heads, d)
    (kernels.rotate_heads); cos, sin (L, d / 2); ``half``: pairs (i, i + d/2), else (2i, 2i + 1)."""
    x = qkv[:, : n_heads * d].reshape(qkv.shape[0], n_heads, d)
    c, s = cos[:, None, :], sin[:, None, :]
    h2 = d // 2
    if half:
        a, b = x[..., :h2], x[..., h2:]
        out[..., :h2] = a * c - b * s
        out[..., h2:] = b * c + a * s
    else:
        a, b = x[..., 0::2], x[..., 1::2]
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = a * s + b * c


def silu_start(gate_up, d_ff, out):
    """``out = -|gate|`` for gate_up (L, 2 d_ff) = [gate | up] (kernels.silu_start)."""
    out[...] = -np.abs(gate_up[:, :d_ff])


def silu_finish(gate_up, d_ff, e):
    """``e = max(gate >= 0, e) / (e + 1) * gate * up`` in place, e = exp(-|gate|) on entry
    (kernels.silu_finish; NaN in e stays NaN)."""
    z, up = gate_up[:, :d_ff], gate_up[:, d_ff:]
    one = e.dtype.type(1.0)
    num = (z >= 0).astype(e.dtype)
    num = np.where(num >= e, num, e)  # e NaN: not (num >= e), so NaN
    e[...] = num / (e + one) * z * up


def _raw(qk, n_head, k, g, scale):
    """Every score (q_i . k_j) * scale (H, L, S) by :func:`dot16`, and whether all are finite."""
    q = qk[:, :n_head].transpose(1, 0, 2)  # (H, L, d)
    keys = k[np.arange(n_head) // g]  # (H, S, d): query head h reads KV head h // g
    with np.errstate(over="ignore", invalid="ignore"):
        a = dot16(q[:, :, None, :], keys[:, None, :, :]) * scale  # (H, L, S)
    return a, bool(np.isfinite(a).all())


def _blocked(n, s):
    """(L, S): True where key j is after row i's last key i + S - L (bottom-right causal)."""
    return np.arange(s)[None, :] > np.arange(n)[:, None] + (s - n)


def raw_scores(qk, n_head, k, g, scale, w):
    """w[h, i, j] = (q_i . k_j) * scale, -inf where blocked (kernels.raw_scores); False when a score is
    not finite (w then unfinished)."""
    a, finite = _raw(qk, n_head, k, g, scale)
    if not finite:
        return False
    w[...] = np.where(_blocked(w.shape[1], w.shape[2]), np.float32(-np.inf), a)
    return True


def scores(qk, n_head, k, g, scale, w):
    """:func:`raw_scores`, each row then less its largest allowed score (kernels.scores; blocked keys
    stay -inf)."""
    if not raw_scores(qk, n_head, k, g, scale, w):
        return False
    w -= w.max(axis=-1, keepdims=True)
    return True


def normalize(w):
    """Divide each row of w (H, L, S), exp'd, by its sum over j in order (float32) (kernels.normalize)."""
    total = np.zeros(w.shape[:-1], w.dtype)
    for j in range(w.shape[-1]):
        total += w[..., j]
    w /= total[..., None]


def mix16(w, v):
    """``sum_j w[..., j] * v[..., j, :]`` over j = 0 .. S - 1 in order, one fused multiply-add per key from
    0 (kernels.mix16 on every 16 columns): w (..., S), v (..., S, d_v) -> (..., d_v)."""
    acc = np.zeros(np.broadcast_shapes(w.shape[:-1], v.shape[:-2]) + (v.shape[-1],), np.float32)
    for j in range(w.shape[-1]):
        acc = fma32(w[..., j, None], v[..., j, :], acc)
    return acc


def mix_rows(w, v, g, out):
    """``out[i, h d_v:(h + 1) d_v] = w[h, i] @ v[h // g]`` by :func:`mix16` (kernels.mix_rows)."""
    n_head, n, _ = w.shape
    heads = mix16(w, v[np.arange(n_head) // g][:, None])  # (H, L, d_v)
    out[...] = heads.transpose(1, 0, 2).reshape(n, -1)


def mix(w, v, g, out):
    """:func:`normalize`, then :func:`mix_rows` (kernels.mix)."""
    normalize(w)
    mix_rows(w, v, g, out)
