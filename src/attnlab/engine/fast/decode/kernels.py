"""Compiled steps of :mod:`attnlab.engine.fast.decode`'s block: the work between the products.

A short prompt's or a decoding step's block spends as long between its four
products as in the NumPy calls themselves (~40 small calls, each a few us of
overhead on arrays of a few thousand numbers). These loops do the same
arithmetic in one call each (imported on first use: numba is slow to import):

- :func:`rms_rows`: RMSNorm as ``decode.steps._rms_numpy`` (sum of squares,
  / d, + eps, sqrt, x / root, * weight); only the sum's order differs (here 16
  partial sums and a fixed tree, NumPy's pairwise), so the two agree to rounding.
- :func:`rotate_heads`: RoPE on every q and k head, with the products and sums
  of ``decode.steps._rotate`` in the same order: the same bits (no FMA contraction:
  numba sets no fast-math flag).
- :func:`scores` / :func:`mix` (float32, head sizes a multiple of 16): a
  short prompt's or a decoding step's attention, bottom-right causal, each
  score a 16-lane dot product (:func:`dot16`), the weights ``np.exp``'d between
  the two (NumPy's exp, as on the NumPy path), and ``weights @ v`` written
  straight into the (L, H * d_v) layout the output projection reads.
- :func:`silu_start` / :func:`silu_finish`: ``silu(gate) * up`` around NumPy's
  ``exp``, with the operations of ``decode.steps._silu`` in its order: the same bits.
- :func:`gelu_erf`: BERT's GELU, with the operations of the reference's ``gelu`` and its
  float32 ``erf`` (a rational function: no exp) in their order: the same bits, in one pass
  instead of ~20 NumPy passes over the (T, d_ff) activations.

Every output is one fixed sequence of operations on one thread, so the bits
never depend on the thread count.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from attnlab.engine.fast.compiled import _jit
from attnlab.engine.fast.quant.ir import _F32, _block_loop, _fma, _i64, _splat, _tree_sum, _vec
from attnlab.engine.layers import _ERF32_P, _ERF32_Q

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


_SQRT2 = np.float32(np.sqrt(2.0))  # what NumPy makes of ``x / math.sqrt(2.0)`` on float32 x (NEP 50)
_P = _ERF32_P  # erf's rational approximation, float32, highest power first (engine.layers)
_Q = _ERF32_Q


@_jit(error_model="numpy")
def gelu_erf(x, out):
    """``out = gelu(x)`` (erf form) for float32 x, out (n,) C-contiguous, with the operations of
    :func:`attnlab.engine.layers.gelu` and ``erf_float32`` in their order: the same bits.

    t = x / sqrt 2 (float32); c = clip(t, -4, 4) (NaN stays NaN); Horner in c^2 for P and Q;
    erf = c P / Q; gelu = (erf + 1) * x * 0.5."""
    four, one, half = np.float32(4.0), np.float32(1.0), np.float32(0.5)
    for i in range(x.shape[0]):
        xi = x[i]
        c = xi / _SQRT2
        if c > four:
            c = four
        elif c < -four:
            c = -four
        x2 = c * c
        p = x2 * _P[0] + _P[1]
        for j in range(2, _P.shape[0]):
            p = p * x2 + _P[j]
        q = x2 * _Q[0] + _Q[1]
        for j in range(2, _Q.shape[0]):
            q = q * x2 + _Q[j]
        e = p * c / q
        out[i] = (e + one) * xi * half


# -- attention: float32, head sizes a multiple of 16 ---------------------------------------------------


def _dot16_codegen(context, builder, signature, args):
    a, b, n_blocks = args
    zero = ir.Constant(_vec(_F32), [0.0] * _LANES)
    fma = _fma(builder)

    def body(i, acc):
        off = builder.mul(i, _i64(_LANES * 4))
        va = builder.load(builder.inttoptr(builder.add(a, off), _vec(_F32).as_pointer()), align=4)
        vb = builder.load(builder.inttoptr(builder.add(b, off), _vec(_F32).as_pointer()), align=4)
        return [builder.call(fma, [va, vb, acc[0]])]

    (acc,) = _block_loop(builder, n_blocks, [zero], body)
    return _tree_sum(builder, acc)


@intrinsic
def dot16(typingctx, a, b, n_blocks):
    """``a . b`` over ``16 n_blocks`` float32 at byte addresses a, b: lane l sums c = l, l + 16, ... in
    order with fused multiply-adds, then a fixed tree (quant.ir's: lanes l and l + 8, ...)."""
    return types.float32(types.int64, types.int64, types.int64), _dot16_codegen


def _mix16_codegen(context, builder, signature, args):
    w, v, v_stride, s, out = args
    fma = _fma(builder)
    zero = ir.Constant(_vec(_F32), [0.0] * _LANES)

    def body(j, acc):
        p = builder.load(builder.inttoptr(builder.add(w, builder.mul(j, _i64(4))), _F32.as_pointer()))
        row = builder.inttoptr(builder.add(v, builder.mul(j, v_stride)), _vec(_F32).as_pointer())
        return [builder.call(fma, [_splat(builder, p), builder.load(row, align=4), acc[0]])]

    (acc,) = _block_loop(builder, s, [zero], body)
    builder.store(acc, builder.inttoptr(out, _vec(_F32).as_pointer()), align=4)
    return context.get_dummy_value()


@intrinsic
def mix16(typingctx, w, v, v_stride, s, out):
    """``out[0:16] = sum_j w[j] * v_j[0:16]`` for j = 0 .. s - 1 in order (fused multiply-adds): w float32
    at byte address w, row j of v at ``v + j * v_stride``."""
    return types.void(*(types.int64,) * 5), _mix16_codegen


@_jit(error_model="numpy")
def scores(qk, n_head, k, g, scale, w):
    """w[h, i, j] = (q_i . k_j) * scale - the row's maximum, -inf where blocked (bottom-right causal), for
    the first ``n_head`` heads of qk (L, >= n_head, d) on k (H_kv, S, d), query head h on KV head h // g;
    float32, rows of d contiguous (any head stride), d a multiple of 16; w (H, L, S). False
    (unfinished) when a score is not finite. Each dot product is :func:`dot16`."""
    n, d = qk.shape[0], qk.shape[2]
    s = k.shape[1]
    q_at, k_at = np.int64(qk.ctypes.data), np.int64(k.ctypes.data)
    blocked = np.float32(-np.inf)  # float32 throughout: the subtraction rounds as NumPy's does
    for h in range(n_head):
        kv_at = k_at + (h // g) * k.strides[0]
        for i in range(n):
            row_at = q_at + (i * qk.strides[0] + h * qk.strides[1])
            last = i + s - n  # the last key this row sees (S >= L: never a whole row blocked)
            top = blocked
            for j in range(s):  # every score, blocked ones too: one that overflows is still refused
                a = dot16(row_at, kv_at + j * k.strides[1], d // _LANES) * scale
                if not np.isfinite(a):
                    return False
                if j > last:
                    a = blocked
                elif a > top:
                    top = a
                w[h, i, j] = a
            for j in range(last + 1):
                w[h, i, j] -= top
    return True


@_jit(error_model="numpy")
def raw_scores(qk, n_head, k, g, scale, w):
    """w[h, i, j] = (q_i . k_j) * scale, -inf where blocked: :func:`scores` before it subtracts each row's
    maximum (the same products, the same bits), for a hook that reads or changes the scores. False
    (unfinished) when a score is not finite."""
    n, d = qk.shape[0], qk.shape[2]
    s = k.shape[1]
    q_at, k_at = np.int64(qk.ctypes.data), np.int64(k.ctypes.data)
    blocked = np.float32(-np.inf)
    for h in range(n_head):
        kv_at = k_at + (h // g) * k.strides[0]
        for i in range(n):
            row_at = q_at + (i * qk.strides[0] + h * qk.strides[1])
            last = i + s - n
            for j in range(s):
                a = dot16(row_at, kv_at + j * k.strides[1], d // _LANES) * scale
                if not np.isfinite(a):
                    return False
                w[h, i, j] = blocked if j > last else a
    return True


@_jit(error_model="numpy")
def normalize(w):
    """Divide each row of w (H, L, S), exp'd, by its sum (over j in order, float32): :func:`mix`'s first
    half, for a hook on the pattern."""
    n_head, n, s = w.shape
    for h in range(n_head):
        for i in range(n):
            total = np.float32(0.0)
            for j in range(s):
                total += w[h, i, j]
            for j in range(s):
                w[h, i, j] /= total


@_jit(error_model="numpy")
def mix_rows(w, v, g, out):
    """``out[i, h d_v:(h + 1) d_v] = w[h, i] @ v[h // g]`` by :func:`mix16`: :func:`mix`'s second half."""
    n_head, n, s = w.shape
    d_v = v.shape[2]
    v_at, out_at = np.int64(v.ctypes.data), np.int64(out.ctypes.data)
    w_base = np.int64(w.ctypes.data)
    for h in range(n_head):
        head_at = v_at + (h // g) * v.strides[0]
        for i in range(n):
            w_at = w_base + ((h * n + i) * s) * 4
            for b in range(0, d_v, _LANES):
                mix16(w_at, head_at + b * 4, v.strides[1], s, out_at + (i * out.shape[1] + h * d_v + b) * 4)


@_jit(error_model="numpy")
def mix(w, v, g, out):
    """Divide each row of w (H, L, S), exp'd, by its sum (over j in order); ``out[i, h d_v:(h + 1) d_v] =
    w[h, i] @ v[h // g]`` by :func:`mix16`. v (H_kv, S, d_v) float32, rows contiguous, d_v a multiple of
    16; out (L, H d_v) C-contiguous. (:func:`normalize`, then :func:`mix_rows`.)"""
    normalize(w)
    mix_rows(w, v, g, out)
