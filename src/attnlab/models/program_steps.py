"""The steps a standalone program runs the one forward with: the trace's, and the fast path's.

:func:`attnlab.engine.forward.forward` takes its arithmetic from an ``ops`` object, and the
models choose it (a model's ``ops`` and ``trace_ops``). The programs behind the real-model
views' numbers (:mod:`attnlab.lab.realmodel.program`) run that forward, its source copied into
them, on float32 weights, with one of:

- ``REFERENCE`` (:class:`attnlab.engine.forward.Reference`, embedded as it is): the readable
  steps. MiniLM's traces and circuits run on them (on an encoder's single text the fast path
  gives the reference's bits: LayerNorm is the reference's, GELU compiled in the reference's
  order, the products in column blocks and the unmasked attention the reference's operations;
  tested);
- :class:`Trace`: the steps a trace of SmolLM2's Real model view takes
  (:class:`attnlab.engine.fast.ops.OnValues` on float weights): the reference's, with the fast
  output layer (:func:`logits_by_slices`);
- :class:`Fast`: the fast path's steps (:class:`attnlab.engine.fast.ops.Fast` on float weights),
  what SmolLM2 runs for the circuits: products in fixed column blocks (``_product``), q|k|v and
  gate|up each in one product where they sit side by side, and RMSNorm, RoPE, attention and
  SiLU by engine/fast/decode/steps.py, with the compiled steps' ``kernels`` (:class:`Kernels`:
  their NumPy forms, bit for bit) where attnlab ran them.

Each method makes the engine's choice for float NumPy arrays and calls the engine's own
function, so a forward run with these steps gives the engine's bits (tested in-process,
``tests/models/test_program_steps.py``); their source goes into the programs.
:func:`compiled_steps_ran` says whether the models' fast path runs attnlab's compiled steps here.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine._arrays import check_finite
from attnlab.engine.fast.decode import _product
from attnlab.engine.fast.decode.numpy_kernels import (
    mix,
    mix_rows,
    normalize,
    raw_scores,
    rms_rows,
    rotate_heads,
    scores,
    silu_finish,
    silu_start,
)
from attnlab.engine.fast.decode.steps import attend as fast_attend
from attnlab.engine.fast.decode.steps import gated, kernels, rms, rotate_qk
from attnlab.engine.fast.ops import _FLOATS, _LOGIT_ROWS, _bias, _columns, _plain
from attnlab.engine.forward import Reference
from attnlab.engine.layers import RMSNormParams


def compiled_steps_ran() -> bool:
    """Whether the models' fast path runs attnlab's compiled steps here (numba compiled them)."""
    return kernels() is not None


class Kernels:
    """attnlab's compiled steps (engine/fast/decode/kernels.py) as NumPy, bit for bit
    (engine/fast/decode/numpy_kernels.py): the ``kernels`` the fast steps call where attnlab ran them."""

    rms_rows = staticmethod(rms_rows)
    rotate_heads = staticmethod(rotate_heads)
    silu_start = staticmethod(silu_start)
    silu_finish = staticmethod(silu_finish)
    scores = staticmethod(scores)
    raw_scores = staticmethod(raw_scores)
    normalize = staticmethod(normalize)
    mix_rows = staticmethod(mix_rows)
    mix = staticmethod(mix)


def logits_by_slices(x, embed):
    """The tied output layer as the fast path computes it (engine/fast/ops.py ``Fast.unembed``): logits
    x @ W_Eᵀ (n, vocab) for rows x (n, d_model), W_E in fixed slices of _LOGIT_ROWS rows, each slice
    one product (slice @ xᵀ), so every logit is the sum that product gives."""
    out = np.empty((x.shape[0], embed.shape[0]), dtype=x.dtype)
    for start in range(0, embed.shape[0], _LOGIT_ROWS):
        part = embed[start : start + _LOGIT_ROWS]  # (rows, d_model), contiguous
        out[:, start : start + part.shape[0]] = (part @ x.T).T
    return out


class Trace(Reference):
    """The trace's steps on float weights: the reference's, and the fast output layer."""

    def unembed(self, x, weights):
        e = weights.embed if weights.unembed is None else None
        if e is None or not (_plain(x) and type(e) is np.ndarray and e.dtype == x.dtype):
            return super().unembed(x, weights)
        return logits_by_slices(x, e)


class Fast(Reference):
    """The fast path's steps on float weights; ``kernels``: the compiled steps' forms (None: NumPy's)."""

    def __init__(self, kernels=None) -> None:
        self.kernels = kernels

    def norm(self, x, params):
        w = params.weight if isinstance(params, RMSNormParams) else None
        if isinstance(params, RMSNormParams) and _plain(x) and (w is None or (type(w) is np.ndarray
                                                                           and w.dtype == x.dtype)):
            return rms(x, params, self.kernels)
        return super().norm(x, params)

    def linear(self, x, w, b):
        if _plain(x) and _matrix(w, x.dtype) and _bias(b, x.dtype):
            y = _product(x, w)
            if b is not None:  # x @ w, then + b: the reference's two steps
                y += b
            return y
        return super().linear(x, w, b)

    def project_qkv(self, h, p, arch):
        fits = _plain(h) and all(_matrix(w, h.dtype) for w in (p.w_q, p.w_k, p.w_v))
        biases = (p.b_q, p.b_k, p.b_v)
        if not fits or not all(_bias(b, h.dtype) for b in biases):
            return super().project_qkv(h, p, arch)
        w = _columns(p.w_q, p.w_k, p.w_v)
        if w is not None:  # one product when w_q, w_k, w_v sit side by side
            qkv = _product(h, w)
        else:
            qkv = np.concatenate([_product(h, p.w_q), _product(h, p.w_k), _product(h, p.w_v)], axis=1)
        n = h.shape[0]
        n_q, n_k = arch.n_head * arch.d_head, arch.n_kv_head * arch.d_head
        for b, cols in zip(biases, (slice(0, n_q), slice(n_q, n_q + n_k), slice(n_q + n_k, None))):
            if b is not None:  # each projection's bias added to its product, as the reference adds it
                qkv[:, cols] += b
        check_finite(np, qkv, "q, k, v = x @ w_q, w_k, w_v")
        q = qkv[:, :n_q].reshape(n, arch.n_head, arch.d_head)
        k = qkv[:, n_q : n_q + n_k].reshape(n, arch.n_kv_head, arch.d_head)
        v = qkv[:, n_q + n_k :].reshape(n, arch.n_kv_head, arch.d_head)
        return q, k, v

    def rotate(self, q, k, rope, positions):
        if not (type(q) is np.ndarray and q.ndim == 3 and q.dtype in _FLOATS and type(k) is np.ndarray
                and k.dtype == q.dtype and type(positions) is np.ndarray):  # fmt: skip
            return super().rotate(q, k, rope, positions)
        n, n_head, d = q.shape
        qk = _columns(q, k)  # q and k side by side in the projection's output: rotate them in one call
        if qk is None:
            qk = np.concatenate([q.reshape(n, -1), k.reshape(n, -1)], axis=1)
        out = rotate_qk(rope, qk, n_head + k.shape[1], d, positions, self.kernels)
        return out[:, :n_head], out[:, n_head:]  # (T, H, d), (T, H_kv, d)

    def attend(self, q, k, v, *, arch, cache, key_padding, on_scores, on_pattern, window=None):
        one_sequence = q.dtype in _FLOATS and all(type(a) is np.ndarray and a.ndim == 3 and a.dtype == q.dtype
                                                  for a in (q, k, v))  # fmt: skip
        if (not arch.causal or key_padding is not None or arch.attn_softcap is not None or cache is not None
                or (window is not None and q.shape[0] > window) or not one_sequence):  # fmt: skip
            return super().attend(q, k, v, arch=arch, cache=cache, key_padding=key_padding,
                                  on_scores=on_scores, on_pattern=on_pattern, window=window)  # fmt: skip
        keys, values = k.transpose(1, 0, 2), v.transpose(1, 0, 2)  # (H_kv, T, d)
        scale = q.dtype.type(arch.scale)
        done = fast_attend(q, arch.n_head, keys, values, arch.group, scale, self.kernels, on_scores,
                           on_pattern)  # fmt: skip
        if done is None:
            raise ValueError("the scores q . k * scale overflowed to infinity")
        _, _, side = done
        return side.reshape(q.shape[0], arch.n_head, -1)  # (T, H, d_head): a view of side (T, H * d)

    def gate_up(self, h, p):
        if not (_plain(h) and _matrix(p.w_gate, h.dtype) and _matrix(p.w_up, h.dtype)):
            return super().gate_up(h, p)
        w = _columns(p.w_gate, p.w_up)
        if w is not None:  # one product when gate and up sit side by side
            both = _product(h, w)
        else:
            both = np.concatenate([_product(h, p.w_gate), _product(h, p.w_up)], axis=1)
        d_ff = p.w_gate.shape[1]
        return both[:, :d_ff], both[:, d_ff:]

    def gated(self, pre, lin, activation: str):
        if activation != "silu" or not (_plain(pre) and _plain(lin) and lin.dtype == pre.dtype):
            return super().gated(pre, lin, activation)
        both = _columns(pre, lin)
        if both is None or not both.flags.c_contiguous:
            both = np.concatenate([pre, lin], axis=1)
        return gated(both, pre.shape[1], self.kernels)

    def unembed(self, x, weights):
        e = weights.embed if weights.unembed is None else None
        if e is None or not (_plain(x) and type(e) is np.ndarray and e.dtype == x.dtype):
            return super().unembed(x, weights)
        return logits_by_slices(x, e)


def _matrix(w, dtype) -> bool:
    """A weight the fast products take for activations of ``dtype``: a 2-D array of that dtype."""
    return type(w) is np.ndarray and w.ndim == 2 and w.dtype == dtype
