"""The steps of :mod:`attnlab.engine.fast.decode`'s block between its products: NumPy, or compiled.

Each step has a NumPy form, the reference, written in the generic path's
order (so the two agree to rounding, tested). RMSNorm, RoPE, attention and SiLU
also have a compiled form (:mod:`attnlab.engine.fast.decode.kernels`: the same
arithmetic in one or two calls instead of several small NumPy calls), used
where numba compiles it and it passes its self-check (:func:`kernels`);
otherwise the NumPy forms run, with the same results to rounding.

A long prompt's attention heads (from 64 x 64 scores a head, in pieces of
about ``_PIECE_SCORES`` scores) and SwiGLU rows (from 128 rows) are shared out
among our threads in fixed pieces: each piece is the same calls whichever
thread runs it, so the bits never depend on the thread count.

Attention is causal (bottom-right) for decoders; an encoder's single text
(``causal=False``) takes the same NumPy steps with no key blocked.
"""

from __future__ import annotations

import importlib
import threading

import numpy as np

from attnlab.engine.fast.workers import run
from attnlab.engine.layers import RMSNormParams, activate
from attnlab.engine.positions import RoPE
from attnlab.engine.threads import CORES

_SPLIT_SCORES = 64 * 64  # a block's heads are shared out from this many scores a head (a long prompt)
_PIECE_SCORES = 3 * 128 * 128  # a long prompt's heads are shared out in pieces of about this many scores
_GATE_ROWS = 64  # a long prompt's SwiGLU activation is shared out in chunks of this many rows

_lock = threading.Lock()
_kernels = None  # the decode.kernels module once it compiled, False when it cannot run here
_reason = ""


def kernels():
    """:mod:`attnlab.engine.fast.decode.kernels` where numba compiles it, else None (see :func:`reason`)."""
    global _kernels, _reason
    if _kernels is None:
        with _lock:
            if _kernels is None:
                try:
                    compiled = importlib.import_module("attnlab.engine.fast.decode.kernels")
                    _self_check(compiled)
                    _kernels = compiled
                except Exception as exc:  # no numba, a failed compilation
                    _reason = f"{type(exc).__name__}: {exc}"
                    _kernels = False
    return _kernels or None


def reason() -> str:
    """Why :func:`kernels` returned None ('' when it did not)."""
    return _reason


def _self_check(k) -> None:
    """Compile for float32 and float64 and compare a tiny block's steps with the NumPy forms."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((3, 8)).astype(dtype)
        for convention in ("half", "interleaved"):
            rope = RoPE(head_dim=4, base=100.0, convention=convention)
            at = np.arange(3)
            if rotate_qk(rope, x, 2, 4, at, k).tobytes() != rotate_qk(rope, x, 2, 4, at, None).tobytes():
                raise RuntimeError("the compiled RoPE differs from NumPy's")
        norm = RMSNormParams(rng.standard_normal(8).astype(dtype), 1e-5)
        if not np.allclose(rms(x, norm, k), rms(x, norm, None), rtol=1e-5, atol=1e-6):
            raise RuntimeError("the compiled RMSNorm disagrees with NumPy's")
        if gated(x, 4, k).tobytes() != gated(x, 4, None).tobytes():
            raise RuntimeError("the compiled SiLU differs from NumPy's")
    x = (rng.standard_normal(64) * 4).astype(np.float32)
    if gelu(x, k).tobytes() != activate(x, "gelu").tobytes():
        raise RuntimeError("the compiled GELU differs from NumPy's")


def rms(x: np.ndarray, p: RMSNormParams, k=None) -> np.ndarray:
    """RMSNorm of x (L, d) as :func:`attnlab.engine.layers.rms_norm` computes it (mean of squares, eps
    inside); compiled with ``k`` (:func:`kernels`), else NumPy."""
    if k is None:
        return _rms_numpy(x, p)
    out = np.empty_like(x)
    weight = p.weight if p.weight is not None else np.empty(0, x.dtype)
    k.rms_rows(x, weight, x.dtype.type(p.eps), out)
    return out


def _rms_numpy(x: np.ndarray, p: RMSNormParams) -> np.ndarray:
    """:func:`rms` in NumPy: the sum of squares pairwise, as np.mean takes it."""
    ms = np.add.reduce(x * x, axis=-1, keepdims=True)
    ms /= x.shape[-1]  # what np.mean does after the same sum, without its Python overhead
    ms += p.eps
    y = x / np.sqrt(ms, out=ms)
    if p.weight is not None:
        y *= p.weight
    return y


def rotate_qk(rope: RoPE, qkv: np.ndarray, n_heads: int, d_head: int, positions, k=None) -> np.ndarray:
    """The first ``n_heads`` heads of qkv (L, ...) (every q and k head), rotated: (L, n_heads, d_head)."""
    cos, sin = cos_sin(rope, positions, qkv.dtype)
    if k is None:
        qk = qkv[:, : n_heads * d_head].reshape(qkv.shape[0], n_heads, d_head)
        return _rotate(rope, qk, cos[:, None, :], sin[:, None, :])
    out = np.empty((qkv.shape[0], n_heads, d_head), qkv.dtype)
    k.rotate_heads(qkv, n_heads, d_head, cos, sin, rope.convention == "half", out)
    return out


def attend(qk, n_head, k, v, g, scale, kernels=None, on_scores=None, on_pattern=None, cap=None, causal=True,
           keep=True):
    """Attention of the first ``n_head`` heads of qk (L, >= n_head, d) on k (H_kv, S, d), v (H_kv, S,
    d_v), bottom-right causal, query head h on KV head h // g: ``(weights (H, L, S), heads (H, L, d_v),
    heads side by side (L, H * d_v))``, or None when a score is not finite. Compiled with ``kernels``
    for float32 heads of a multiple of 16 numbers and up to 64 x 64 scores a head.

    ``causal=False`` (an encoder's one sequence): every query sees every key; NumPy's steps (the
    compiled ones know the causal band only). ``keep=False``: the weights may be None (a long
    prompt's heads in pieces then keep only their mix: no copy of every head's weights).

    ``cap`` (Gemma 2): the scaled scores soft-capped, ``tanh(s / cap) * cap`` as the reference caps
    them (NumPy's steps, not the compiled ones). ``on_scores`` and ``on_pattern`` (hook points, or
    None) see the scaled (capped) scores (H, L, S) (blocked keys -inf) and the weights (H, L, S),
    and return what attention goes on with. Hooked or not, the
    same operations run in the same order (the steps are only taken apart around the hook), so a hook
    that returns its argument changes no bit.
    """
    q = qk[:, :n_head]
    n, _, d_head = q.shape
    s, d_v = k.shape[-2], v.shape[-1]
    hooked = on_scores is not None or on_pattern is not None
    if (kernels is not None and causal and cap is None and n * s < _SPLIT_SCORES and q.dtype == np.float32
            and d_head % 16 == 0 and d_v % 16 == 0
            and all(a.strides[-1] == 4 for a in (qk, k, v))):  # fmt: skip
        weights = np.empty((n_head, n, s), np.float32)
        side = np.empty((n, n_head * d_v), np.float32)
        if not hooked:
            if not kernels.scores(qk, n_head, k, g, scale, weights):
                return None
            np.exp(weights, out=weights)
            kernels.mix(weights, v, g, side)
        else:  # kernels.scores and kernels.mix taken apart: the same arithmetic around the hooks
            if not kernels.raw_scores(qk, n_head, k, g, scale, weights):
                return None
            if on_scores is not None:
                weights = np.array(on_scores(weights), dtype=np.float32, order="C")
            weights = weights - weights.max(axis=-1, keepdims=True)  # -inf stays -inf: as kernels.scores
            np.exp(weights, out=weights)
            kernels.normalize(weights)
            if on_pattern is not None:
                weights = np.array(on_pattern(weights), dtype=np.float32, order="C")
            kernels.mix_rows(weights, v, g, side)
        return weights, side.reshape(n, n_head, d_v).transpose(1, 0, 2), side
    q = q.transpose(1, 0, 2)  # (H, L, d)
    # bottom-right causal band: row i sees keys j <= i + s - n (s >= n: never a whole row); added as
    # 0 / -inf (x + 0 is x: the same weights), much faster than setting a boolean selection
    band = _band(n, s, q.dtype) if causal and n > 1 else None
    hooks = _Hooks(on_scores, on_pattern, n_head) if hooked else None
    if n * s >= _SPLIT_SCORES:  # a long prompt: one head at a time, the heads shared by our threads
        done = _heads_shared(q, k, v, g, scale, band, hooks, cap, keep)
    else:  # the query heads of a KV head together (H_kv, g*L, d): fewer NumPy calls
        done = _softmax_attend(q.reshape(k.shape[0], g * n, d_head), k, v, scale, band, n_head, hooks, cap)
    if done is None:
        return None
    weights, heads = done
    return weights, heads, heads.transpose(1, 0, 2).reshape(n, -1)


class _Hooks:
    """The scores and pattern hooks of one attention, called on (n_head, L, S) whatever the grouping."""

    def __init__(self, on_scores, on_pattern, n_head: int) -> None:
        self.on_scores, self.on_pattern, self.n_head = on_scores, on_pattern, n_head

    @staticmethod
    def call(fn, w):
        """``fn`` on w (B, L, S) seen as (n_head, L, S); a new array in w's shape (w is not written)."""
        if fn is None:
            return w
        return np.array(fn(w), dtype=w.dtype, order="C").reshape(w.shape)


def _softmax_attend(q, k, v, scale, band, n_head, hooks=None, cap=None):
    """``(weights (n_head, L, S), heads (n_head, L, d_v))`` for q (B, G*L, d) against k, v (B, S, d):
    scores = (q @ k^T) * scale (soft-capped with ``cap``), plus the causal ``band`` (L, S) (None: no
    key blocked), max-shifted exp, divide, @ v. None when a score is not finite. With ``hooks`` the
    same operations, out of place around them."""
    n, s = q.shape[0] * q.shape[1] // n_head, k.shape[-2]  # B * G * L rows are n_head heads' L
    with np.errstate(over="ignore", invalid="ignore"):
        w = q @ k.transpose(0, 2, 1)  # (B, G*L, S)
        w *= scale
    if not np.isfinite(w).all():
        return None
    if cap is not None:
        _soft_cap(w, cap)
    w = w.reshape(-1, n, s)  # (B*G, L, S)
    if band is not None:
        w += band
    if hooks is None:
        w -= w.max(axis=-1, keepdims=True)
        np.exp(w, out=w)
        w /= w.sum(axis=-1, keepdims=True)
    else:
        w = hooks.call(hooks.on_scores, w)
        w = w - w.max(axis=-1, keepdims=True)
        np.exp(w, out=w)
        w = w / w.sum(axis=-1, keepdims=True)
        w = hooks.call(hooks.on_pattern, w)
    heads = w.reshape(q.shape[0], -1, s) @ v  # (B, G*L, d_v)
    return w.reshape(n_head, n, s), heads.reshape(n_head, n, v.shape[-1])


def _heads_shared(q, k, v, g, scale, band, hooks=None, cap=None, keep=True):
    """:func:`_softmax_attend` on pieces of query heads (q (H, L, d), head h on KV head h // g), the
    pieces shared by our threads: each head is the same calls whichever thread runs it, in whichever
    piece (a stacked product is one product a head). A piece holds ``_PIECE_SCORES`` scores or one
    head, a count fixed by the shapes: small heads in one call each cost more in NumPy's calls than
    they compute. With ``hooks``: every head's scores first, the hook on them all, and so on (each
    head's operations unchanged). ``keep=False``: weights None."""
    n_head = q.shape[0]
    if hooks is not None:
        return _heads_shared_hooked(q, k, v, g, scale, band, hooks, cap)
    weights = np.empty((n_head, q.shape[1], k.shape[-2]), q.dtype) if keep else None
    heads = np.empty((n_head, q.shape[1], v.shape[-1]), q.dtype)
    per = max(1, _PIECE_SCORES // (q.shape[1] * k.shape[-2]))
    finite = [True] * n_head

    def attend(h: int, _buffers) -> None:
        end = min(n_head, h + per)
        kv = slice(h, end) if g == 1 else np.arange(h, end) // g  # the KV head of each query head
        done = _softmax_attend(q[h:end], k[kv], v[kv], scale, band, end - h, None, cap)
        if done is None:
            finite[h] = False
        else:
            heads[h:end] = done[1]
            if keep:
                weights[h:end] = done[0]

    run(attend, range(0, n_head, per), min(CORES, -(-n_head // per)))
    return (weights, heads) if all(finite) else None


def _heads_shared_hooked(q, k, v, g, scale, band, hooks, cap=None):
    """:func:`_heads_shared` with a hook on the scores or the pattern: step by step, the heads together."""
    n_head = q.shape[0]
    w = np.empty((n_head, q.shape[1], k.shape[-2]), q.dtype)
    finite = [True] * n_head

    def scores(h: int, _buffers) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            a = q[h][None] @ k[h // g][None].transpose(0, 2, 1)
            a *= scale
        finite[h] = bool(np.isfinite(a).all())
        if cap is not None and finite[h]:
            _soft_cap(a, cap)
        if band is not None:
            a += band
        w[h] = a[0]

    run(scores, range(n_head), min(CORES, n_head))
    if not all(finite):
        return None
    w = hooks.call(hooks.on_scores, w)
    w = w - w.max(axis=-1, keepdims=True)
    np.exp(w, out=w)
    w = w / w.sum(axis=-1, keepdims=True)
    w = hooks.call(hooks.on_pattern, w)
    heads = np.empty((n_head, q.shape[1], v.shape[-1]), q.dtype)

    def mix(h: int, _buffers) -> None:
        heads[h] = (w[h][None] @ v[h // g][None])[0]

    run(mix, range(n_head), min(CORES, n_head))
    return w, heads


def _soft_cap(w: np.ndarray, cap: float) -> None:
    """``w = tanh(w / cap) * cap`` in place: the reference's soft cap (``Reference.softcap``), its steps."""
    c = w.dtype.type(cap)
    np.divide(w, c, out=w)
    np.tanh(w, out=w)
    w *= c


_last_cos_sin: tuple = (None, None)  # (key, (cos, sin)): every layer of a step rotates the same positions


def cos_sin(rope: RoPE, positions: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``rope.cos_sin(positions)`` in ``dtype``, computed once for the layers of a forward pass."""
    global _last_cos_sin
    key = (rope, dtype, positions.dtype, positions.tobytes())
    last_key, value = _last_cos_sin  # one read: another thread may replace the pair meanwhile
    if last_key != key:
        value = rope.cos_sin(positions, like=np.empty((0,), dtype))
        _last_cos_sin = (key, value)
    return value


_last_band: tuple = (None, None)  # (key, band): every layer of a prompt adds the same band


def _band(n: int, s: int, dtype) -> np.ndarray:
    """The bottom-right causal band (n, s), 0 / -inf, made once for the layers of a forward pass."""
    global _last_band
    key = (n, s, dtype)
    last_key, band = _last_band  # one read: another thread may replace the pair meanwhile
    if last_key != key:
        band = np.triu(np.full((n, s), -np.inf, dtype), k=s - n + 1)
        band.flags.writeable = False
        _last_band = (key, band)
    return band


def _rotate(rope: RoPE, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """``rope.rotate`` with the same products and sums, for x (L, heads, d) and cos/sin (L, 1, d/2)."""
    half = x.shape[-1] // 2
    out = np.empty_like(x)
    if rope.convention == "half":
        a, b = x[..., :half], x[..., half:]
        np.subtract(a * cos, b * sin, out=out[..., :half])
        np.add(b * cos, a * sin, out=out[..., half:])
    else:  # interleaved pairs (x0, x1), (x2, x3), ...
        a, b = x[..., 0::2], x[..., 1::2]
        np.subtract(a * cos, b * sin, out=out[..., 0::2])
        np.add(a * sin, b * cos, out=out[..., 1::2])
    return out


def gated(gate_up: np.ndarray, d_ff: int, k=None) -> np.ndarray:
    """``silu(gate) * up`` for gate_up (L, 2 d_ff) = [gate | up]; compiled with ``k`` around NumPy's exp
    (the same bits), a long prompt's rows in fixed chunks on our threads (the same bits)."""
    n = gate_up.shape[0]
    gate, up = gate_up[:, :d_ff], gate_up[:, d_ff:]
    if k is not None and n < 2 * _GATE_ROWS and gate_up.flags.c_contiguous:
        act = np.empty(gate.shape, gate.dtype)
        k.silu_start(gate_up, d_ff, act)
        np.exp(act, out=act)
        k.silu_finish(gate_up, d_ff, act)
        return act
    if n < 2 * _GATE_ROWS:
        act = _silu(gate)
        act *= up
        return act
    act = np.empty(gate.shape, gate.dtype)
    compiled = k is not None and gate_up.flags.c_contiguous

    def chunk(r0: int, _buffers) -> None:
        rows = slice(r0, min(n, r0 + _GATE_ROWS))
        if compiled:  # the short form's three calls on these rows: the same bits as NumPy's
            part = act[rows]
            k.silu_start(gate_up[rows], d_ff, part)
            np.exp(part, out=part)
            k.silu_finish(gate_up[rows], d_ff, part)
            return
        part = _silu(gate[rows])
        part *= up[rows]
        act[rows] = part

    run(chunk, range(0, n, _GATE_ROWS), CORES)
    return act


def gelu(x: np.ndarray, k) -> np.ndarray:
    """GELU (erf form) of a float32 array of any shape by the compiled :func:`kernels.gelu_erf`: the bits of
    :func:`attnlab.engine.layers.gelu` (which is its NumPy form). ``k``: :func:`kernels`, not None."""
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    k.gelu_erf(flat, out)
    return out.reshape(x.shape)


def _silu(z: np.ndarray) -> np.ndarray:
    """``z * sigmoid(z)`` as :func:`attnlab.engine.layers.silu` computes it (no overflow)."""
    e = np.abs(z)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-|z|) <= 1
    # the numerator: 1 for z >= 0, e = exp(z) below (NaN stays NaN), as max(z >= 0, e): the same
    # values as np.where(z >= 0, 1.0, e), which took longer than the rest of SiLU together
    sig = np.greater_equal(z, 0, out=np.empty(z.shape, z.dtype), casting="unsafe")
    np.maximum(sig, e, out=sig)
    e += 1.0
    sig /= e
    sig *= z
    return sig
