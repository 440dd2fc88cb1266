"""The forward's steps, the fast way: :data:`FAST` and :class:`Rows`, swapped into the one forward.

:func:`attnlab.engine.forward.forward` takes its arithmetic from an ``ops`` object. :class:`Fast`
is the readable :class:`~attnlab.engine.forward.Reference` with faster forms of the steps
where they apply, each the step the reference takes to rounding (tested):

- products (:mod:`attnlab.engine.fast.decode`'s ``_product``: one single-threaded BLAS call, or
  from 16 rows fixed column blocks that our threads share; on quantised blocks
  :func:`attnlab.engine.fast.quant.product`); q, k and v in one product when their weights
  sit side by side (and gate and up), read back as views of it;
- RMSNorm, RoPE, attention (bottom-right causal, GQA) and SiLU by the compiled steps of
  :mod:`attnlab.engine.fast.decode.steps` (NumPy forms where numba cannot run); GELU (erf
  form) on float32 of any shape, an encoder's batch too, by one compiled pass with the
  reference's bits;
- the tied output layer in fixed slices of W_E that our threads share;
- a decoding step's whole block, on quantised blocks with nothing hooked, in three compiled calls
  of those same steps (:mod:`attnlab.engine.fast.decode.block`: the same bits, ~1.8 ms less a
  SmolLM2 step than ~20 steps called one by one from Python).

A step takes its fast form on a 2-D float32 or float64 array with weights of that dtype (or
float32 activations on quantised blocks; a bias of that dtype is added after the product, as the
reference adds it); anything else (an encoder's batch, LayerNorm, key padding, a norm on each q/k
head, a sliding window that hides a key) is the reference's step. Soft-capped scores (Gemma 2)
take the attention's NumPy steps, capped as the reference caps them. Every output number is one fixed
sequence of operations, so no bit depends on the thread count (docs/engine-conventions.md).

:class:`Rows` runs R decoding steps at once, row r a new token on its own caches at its own
position (a speculative verification, or a batch of requests): every step as a one-row
forward takes it, only the products sharing the weights' reads, each row in the one-row
order. So row r's numbers are the bits of a one-token forward on the same caches.
"""

from __future__ import annotations

import threading
import weakref
from typing import NamedTuple

import numpy as np

from attnlab.engine._arrays import check_finite
from attnlab.engine.cache import KVCache
from attnlab.engine.errors import FieldError
from attnlab.engine.fast import quant
from attnlab.engine.fast.decode import _product, side_by_side, steps
from attnlab.engine.fast.quant import QuantMatrix, helpers, product, with_values
from attnlab.engine.fast.quant.rows import product_rows
from attnlab.engine.fast.workers import run
from attnlab.engine.forward import Reference
from attnlab.engine.hooks import no_hooks
from attnlab.engine.layers import RMSNormParams
from attnlab.engine.positions import RoPE
from attnlab.engine.threads import CORES

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))

# OpenBLAS's matrix-vector product on a whole 49152 x 576 embedding runs several times slower than on
# row slices of it (cache blocking): the output layer multiplies slice by slice, and our threads share
# the slices. The slices are fixed by this constant alone, so a logit is the same single-threaded BLAS
# sum whichever thread, and however many, computed it.
_LOGIT_ROWS = 4096


def _plain(x) -> bool:
    """A 2-D float32 or float64 NumPy array: what the fast steps take."""
    return type(x) is np.ndarray and x.ndim == 2 and x.dtype in _FLOATS


def _weight(w, dtype) -> bool:
    """A weight the fast products take for activations of ``dtype``."""
    if type(w) is np.ndarray:
        return w.ndim == 2 and w.dtype == dtype
    return isinstance(w, QuantMatrix) and dtype == np.float32


def _bias(b, dtype) -> bool:
    """No bias, or one the fast products add: a 1-D array of the activations' dtype."""
    return b is None or (type(b) is np.ndarray and b.ndim == 1 and b.dtype == dtype)


def joined(*views):
    """The one matrix whose adjacent column blocks ``views`` are (as :func:`side_by_side` makes), or None.

    Matrices kept as blocks of one format join without a copy: their parts stand side by side.
    Weights are joined once per params object and kept (:func:`_joined_weights`).
    """
    if all(isinstance(v, QuantMatrix) for v in views):
        same = len({(v.fmt, v.n_in) for v in views}) == 1
        return QuantMatrix.side_by_side(*views) if same else None
    return _columns(*views)


def _columns(*views):
    """The 2-D array whose adjacent column blocks are the 2-D (or (T, H, d)) ``views``, or None."""
    if not all(type(v) is np.ndarray for v in views):
        return None
    base = views[0].base
    if not isinstance(base, np.ndarray) or base.ndim != 2 or base.shape[0] != views[0].shape[0]:
        return None
    # run on every layer of every decoding step: plain attribute reads (np.prod and
    # __array_interface__ cost microseconds each, ~0.4 ms a step in all)
    start, item, one_row = base.ctypes.data, base.itemsize, base.shape[0] == 1
    col = 0
    for v in views:
        if v.ndim == 2:
            width, inner = v.shape[1], (item,)
        else:
            width, inner = v.shape[1] * v.shape[2], (v.shape[2] * item, item)
        if v.base is not base or v.strides[1:] != inner or v.ctypes.data != start + col * item:
            return None
        if not one_row and v.strides[0] != base.strides[0]:  # one row: its stride is never used
            return None
        col += width
    return base if col == base.shape[1] else base[:, :col]


# The one product's output behind the views a step just handed out (q, k from project_qkv; gate, up
# from gate_up), per thread: the next step (rotate, gated) finds it by identity in ~0.1 µs where
# _columns takes ~5 µs, 60 times a decoding step. A hook that returns new arrays misses it.
_made = threading.local()


def _joined_views(kind: str, *views):
    """The array ``views`` were cut from, as kept by :func:`_made_from` (else :func:`_columns`)."""
    kept = getattr(_made, kind, None)
    if kept is not None and all(a is b for a, b in zip(kept[0], views)):
        return kept[1]
    return _columns(*views)


def _made_from(kind: str, joined, *views):
    setattr(_made, kind, (views, joined))
    return views


_layouts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # params -> {names: joined or None}


def _joined_weights(params, *names):
    """``joined(params.<names>)`` computed once per params object."""
    kept = _layouts.get(params)
    if kept is None:
        kept = _layouts[params] = {}
    if names not in kept:
        kept[names] = joined(*(getattr(params, n) for n in names))
    return kept[names]


def _mat(w: QuantMatrix) -> tuple:
    """A matrix of blocks as the compiled products take it: format code, parts' addresses and rows, stride."""
    return w.code, w._at, w._rows, w.parts[0].shape[1]


class _BlockPlan(NamedTuple):
    """What a decoding step's compiled block (:mod:`attnlab.engine.fast.decode.block`) reads of a block:
    its products as blocks (q|k|v and gate|up joined) and as the compiled calls take them (:func:`_mat`),
    its two norms, the widest product input, and the attention's sizes, made once: a decoding step
    asks for 30 blocks, and each Python step of the asking costs (docs/performance.md)."""

    matrices: tuple  # (q|k|v, W_O, gate|up, W_down) as QuantMatrix, kept alive for late helpers
    qkv: tuple  # each product's _mat
    o: tuple
    gate_up: tuple
    down: tuple
    norm_1: np.ndarray  # (d_model,) float32, or empty: no weight
    eps_1: np.float32
    norm_2: np.ndarray
    eps_2: np.float32
    widest: int
    scale: np.float32
    group: int
    sizes: tuple  # (d_model, q|k|v's width, H * d_head, gate|up's width, d_ff, H + H_kv, d_head)


_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # params -> (arch, _BlockPlan or None)
_NO_FLOATS = np.zeros(0, np.float32)
_NO_CTL = np.zeros(1, np.int64)


def _block_plan(arch, p) -> _BlockPlan | None:
    """The plan of block ``p`` of ``arch`` for the compiled decoding block, or None where that does not
    apply: a pre-norm RMSNorm decoder with RoPE and gated SiLU, no biases, no q/k norms, no sandwich
    norms, no soft-capped scores, head sizes a multiple of 16, every product on quantised blocks."""
    kept = _plans.get(p)
    if kept is not None and kept[0] is arch:
        return kept[1]
    plan = None
    a = p.attn
    if (arch.causal and arch.norm_placement == "pre" and arch.norm == "rms" and arch.mlp == "gated"
            and arch.activation == "silu" and arch.positions == "rope" and not arch.post_norms
            and not arch.qk_norm and arch.attn_softcap is None and arch.d_head % 16 == 0
            and all(b is None for b in (a.b_q, a.b_k, a.b_v, a.b_o))
            and all(_rms(n, np.float32) for n in (p.norm_1, p.norm_2)) and quant.kernel()):  # fmt: skip
        qkv, gate_up = _joined_weights(a, "w_q", "w_k", "w_v"), _joined_weights(p.mlp, "w_gate", "w_up")
        mats = (qkv, a.w_o, gate_up, p.mlp.w_down)
        if all(isinstance(m, QuantMatrix) for m in mats):
            sizes = (arch.d_model, qkv.n_out, arch.n_head * arch.d_head, gate_up.n_out, arch.d_ff,
                     arch.n_head + arch.n_kv_head, arch.d_head)  # fmt: skip
            norms = (_norm_weight(p.norm_1), np.float32(p.norm_1.eps), _norm_weight(p.norm_2),
                     np.float32(p.norm_2.eps))  # fmt: skip
            plan = _BlockPlan(mats, *(_mat(m) for m in mats), *norms, max(m.n_in for m in mats),
                              np.float32(arch.scale), arch.group, sizes)  # fmt: skip
    _plans[p] = (arch, plan)
    return plan


_scratch = threading.local()  # per thread: sizes -> the compiled block's working arrays


def _buffers(sizes: tuple) -> tuple:
    """This thread's working arrays for a block of ``sizes``: h, mid, qkv, rot, side, attn, both, act
    (rewritten by every block it runs; the block's output is a new array)."""
    kept = getattr(_scratch, "kept", None)
    if kept is None:
        kept = _scratch.kept = {}
    bufs = kept.get(sizes)
    if bufs is None:
        d, n_qkv, n_side, n_gu, d_ff, heads, d_head = sizes
        shapes = ((1, d), (1, d), (1, n_qkv), (1, heads, d_head), (1, n_side), (1, d), (1, n_gu), (1, d_ff))
        bufs = kept[sizes] = tuple(np.empty(shape, np.float32) for shape in shapes)
    return bufs


def _rms(n, dtype) -> bool:
    """An RMSNorm the compiled steps take for activations of ``dtype``: no weight, or a NumPy one of it."""
    return isinstance(n, RMSNormParams) and (n.weight is None or (type(n.weight) is np.ndarray
                                                                 and n.weight.dtype == dtype))


def _norm_weight(n: RMSNormParams) -> np.ndarray:
    """The norm's weight as the compiled block takes it: a float32 copy of its own (a file's read-only
    view would be another compiled signature), or empty for none."""
    return _NO_FLOATS if n.weight is None else np.array(n.weight, np.float32)


class Fast(Reference):
    """The reference's steps with faster forms where they apply (see the module docstring)."""

    @staticmethod
    def kernels():
        return steps.kernels()  # the compiled steps, or None: NumPy's

    def whole_block(self, arch, p, x, *, hook, cache, rope, positions, key_padding, window):
        """One token through block ``p`` in three compiled calls (:mod:`attnlab.engine.fast.decode.block`):
        the bits of the steps below one by one. None (the steps run) with a hook, more than one row, no
        NumPy cache, a window that hides a key, or a block :func:`_block_plan` does not take."""
        if (hook is not no_hooks or key_padding is not None or type(x) is not np.ndarray or x.shape[0] != 1
                or x.ndim != 2 or x.dtype != np.float32 or type(cache) is not KVCache
                or type(positions) is not np.ndarray or rope is None):  # fmt: skip
            return None
        k_buf, v_buf = cache._k_buf, cache._v_buf
        if k_buf is None or k_buf.ndim != 3 or k_buf.dtype != np.float32 or v_buf.dtype != np.float32:
            return None
        past = cache.keys.shape[-2]
        if (window is not None and past + 1 > window) or past + 1 >= steps._SPLIT_SCORES:
            return None
        plan = _block_plan(arch, p)
        if plan is None or self.kernels() is None:
            return None
        from attnlab.engine.fast.decode import block as compiled

        if not (x.flags.c_contiguous and x.flags.writeable):  # one compiled signature: C order, writeable
            x = x.copy()
        cache.extend(1)  # the new token's key and value are written by attend_start
        k_buf, v_buf, s = cache._k_buf, cache._v_buf, past + 1
        cos, sin = steps.cos_sin(rope, positions, np.float32)
        h, mid, qkv, rot, side, attn, both, act = _buffers(plan.sizes)
        w = np.empty((arch.n_head, 1, s), np.float32)
        shared = helpers()
        xs = None if shared is None else shared.hold(plan.matrices, plan.widest)
        ctl, room, on = (_NO_CTL, _NO_FLOATS, False) if xs is None else (shared.ctl, xs, True)
        least = quant._THREAD_WEIGHTS  # the step-by-step products' threshold (same bits either way)
        try:
            if not compiled.attend_start(x, plan.norm_1, plan.eps_1, ctl, on, room, least, *plan.qkv, h, qkv,
                                         cos, sin, rope.convention == "half", arch.n_head, arch.n_kv_head,
                                         rot, k_buf, v_buf, s, plan.group, plan.scale, w):  # fmt: skip
                cache.truncate(s - 1)  # a number not finite: the steps one by one say which
                return None
            np.exp(w, out=w)
            compiled.attend_finish(w, v_buf, s, plan.group, side, ctl, on, room, least, *plan.o, attn, x, mid,
                                   plan.norm_2, plan.eps_2, h, *plan.gate_up, both, act)  # fmt: skip
            np.exp(act, out=act)
            out = np.empty_like(x)
            compiled.mlp_finish(both, act, ctl, on, room, least, *plan.down, attn, mid, out)
        finally:
            if on:
                shared.busy.release()
        return out

    def embed(self, table, ids, scale: float = 1.0):
        if isinstance(table, QuantMatrix):  # W_E^T as blocks: a token's embedding is one stored row
            x = table.stored_rows(list(ids))
            return x if scale == 1.0 else x * np.float32(scale)
        return super().embed(table, ids, scale)

    def norm(self, x, params):
        if _plain(x) and _rms(params, x.dtype):
            return steps.rms(x, params, self.kernels())
        return super().norm(x, params)

    def linear(self, x, w, b):
        if _plain(x) and _weight(w, x.dtype) and _bias(b, x.dtype):
            y = _product(x, w)
            if b is not None:  # x @ w, then + b: the reference's two steps
                y += b
            return y
        return super().linear(x, w, b)

    def project_qkv(self, h, p, arch):
        fits = _plain(h) and all(_weight(w, h.dtype) for w in (p.w_q, p.w_k, p.w_v))
        biases = (p.b_q, p.b_k, p.b_v)
        if not fits or not all(_bias(b, h.dtype) for b in biases):
            return super().project_qkv(h, p, arch)
        w = _joined_weights(p, "w_q", "w_k", "w_v")
        if w is not None:  # one product when w_q, w_k, w_v sit side by side
            qkv = _product(h, w)
        else:
            qkv = np.concatenate([_product(h, p.w_q), _product(h, p.w_k), _product(h, p.w_v)], axis=1)
        n = h.shape[0]
        n_q, n_k = arch.n_head * arch.d_head, arch.n_kv_head * arch.d_head
        for b, cols in zip(biases, (slice(0, n_q), slice(n_q, n_q + n_k), slice(n_q + n_k, None))):
            if b is not None:  # each projection's bias added to its product, as the reference adds it
                qkv[:, cols] += b
        if not np.isfinite(qkv).all():  # name the projection that overflowed, as the reference does
            for name, cols in (("q = x @ w_q", slice(0, n_q)), ("k = context @ w_k", slice(n_q, n_q + n_k)),
                               ("v = context @ w_v", slice(n_q + n_k, None))):  # fmt: skip
                check_finite(np, qkv[:, cols], name)
        q = qkv[:, :n_q].reshape(n, arch.n_head, arch.d_head)
        k = qkv[:, n_q : n_q + n_k].reshape(n, arch.n_kv_head, arch.d_head)
        v = qkv[:, n_q + n_k :].reshape(n, arch.n_kv_head, arch.d_head)
        _made_from("qk", qkv[:, : n_q + n_k], q, k)
        return q, k, v

    def rotate(self, q, k, rope: RoPE, positions):
        if not (type(q) is np.ndarray and q.ndim == 3 and q.dtype in _FLOATS and type(k) is np.ndarray
                and k.dtype == q.dtype and type(positions) is np.ndarray):  # fmt: skip
            return super().rotate(q, k, rope, positions)
        n, n_head, d = q.shape
        qk = _joined_views("qk", q, k)  # q, k side by side in one array: one rotation
        if qk is None:
            qk = np.concatenate([q.reshape(n, -1), k.reshape(n, -1)], axis=1)
        out = steps.rotate_qk(rope, qk, n_head + k.shape[1], d, positions, self.kernels())
        return out[:, :n_head], out[:, n_head:]  # (T, H, d), (T, H_kv, d)

    def attend(self, q, k, v, *, arch, cache, key_padding, on_scores, on_pattern, window=None):
        if not self._attend_applies(q, k, v, arch, cache, key_padding, window):
            return super().attend(q, k, v, arch=arch, cache=cache, key_padding=key_padding,
                                  on_scores=on_scores, on_pattern=on_pattern, window=window)  # fmt: skip
        keys, values = k.transpose(1, 0, 2), v.transpose(1, 0, 2)  # (H_kv, T, d)
        if cache is not None:
            keys, values = cache.append(keys, values)  # (H_kv, S, d): everything cached
        return self._attend_rows(q, keys, values, arch, on_scores, on_pattern)

    def _attend_rows(self, q, keys, values, arch, on_scores=None, on_pattern=None):
        scale = q.dtype.type(arch.scale)
        done = steps.attend(q, arch.n_head, keys, values, arch.group, scale, self.kernels(),
                            on_scores, on_pattern, arch.attn_softcap, arch.causal, keep=False)  # fmt: skip
        if done is None:
            raise ValueError(
                f"the scores q . k * scale overflowed to infinity; the inputs are too large for {q.dtype}"
            )
        _, _, side = done
        return side.reshape(q.shape[0], arch.n_head, -1)  # (T, H, d_head): a view of side (T, H * d)

    @staticmethod
    def _attend_applies(q, k, v, arch, cache, key_padding, window=None) -> bool:
        if key_padding is not None or (not arch.causal and cache is not None):
            return False  # an encoder's single sequence (no padding, no cache) takes the steps unmasked
        if window is not None:  # the compiled steps know no window: fine while it hides no key
            keys = q.shape[0] + (cache.length if cache is not None else 0)
            if keys > window:
                return False
        if not all(type(a) is np.ndarray and a.ndim == 3 and a.dtype == q.dtype for a in (q, k, v)):
            return False
        if q.dtype not in _FLOATS:
            return False
        return cache is None or (type(cache) is KVCache and (cache.keys is None or cache._k_buf is not None))

    def gate_up(self, h, p):
        if not (_plain(h) and _weight(p.w_gate, h.dtype) and _weight(p.w_up, h.dtype)):
            return super().gate_up(h, p)
        w = _joined_weights(p, "w_gate", "w_up")
        if w is not None:  # one product when gate and up sit side by side
            both = _product(h, w)
        else:
            both = np.concatenate([_product(h, p.w_gate), _product(h, p.w_up)], axis=1)
        d_ff = p.w_gate.shape[1]
        return _made_from("gate_up", both, both[:, :d_ff], both[:, d_ff:])

    def gated(self, pre, lin, activation: str):
        if activation != "silu" or not (_plain(pre) and _plain(lin) and lin.dtype == pre.dtype):
            return super().gated(pre, lin, activation)
        both = _joined_views("gate_up", pre, lin)
        if both is None or not both.flags.c_contiguous:
            both = np.concatenate([pre, lin], axis=1)
        return steps.gated(both, pre.shape[1], self.kernels())

    def act(self, pre, activation: str):
        k = self.kernels()
        if activation == "gelu" and k is not None and type(pre) is np.ndarray and pre.dtype == np.float32:
            return steps.gelu(pre, k)  # the reference's bits, one compiled pass
        return super().act(pre, activation)

    def unembed(self, x, weights):
        e = weights.embed if weights.unembed is None else None
        if isinstance(e, QuantMatrix):  # the blocks of W_E^T: fixed slices that our threads share
            return product(x, e)
        if e is None or not (_plain(x) and type(e) is np.ndarray and e.dtype == x.dtype):
            return super().unembed(x, weights)
        out = np.empty((x.shape[0], e.shape[0]), dtype=x.dtype)

        def logit_slice(start: int, _buffers) -> None:
            part = e[start : start + _LOGIT_ROWS]  # (rows, d_model), contiguous
            out[:, start : start + part.shape[0]] = (part @ x.T).T

        # the output layer streams the whole embedding (113 MB in float32 for SmolLM2): two cores
        # read it about twice as fast as one (docs/performance.md)
        run(logit_slice, range(0, e.shape[0], _LOGIT_ROWS), CORES)
        return out


    def unembed_columns(self, x, weights, tokens: tuple[int, ...]):
        """On quantised blocks the forward's bits (each logit one FMA chain over the stored values; a
        lone row is doubled, since a one-row product sums in another order); else the reference's."""
        e = weights.embed if weights.unembed is None else weights.unembed  # W_Eᵀ or W_U: a token's column
        if not isinstance(e, QuantMatrix):
            return super().unembed_columns(x, weights, tokens)
        columns = _columns_of(e, tokens)
        lone = x.shape[0] == 1
        out = product(np.repeat(x, 2, axis=0) if lone else x, columns)
        return out[:1] if lone else out


_answer_columns: dict = {}  # (id(E^T), tokens) -> (E^T, the tokens' columns as blocks): a sweep's few


def _columns_of(e: QuantMatrix, tokens: tuple[int, ...]) -> QuantMatrix:
    key = (id(e), tokens)
    kept = _answer_columns.get(key)
    if kept is None or kept[0] is not e:
        if len(e.parts) != 1:  # pragma: no cover - an output layer is one tensor
            raise NotImplementedError("an output layer in several parts")
        if len(_answer_columns) > 16:
            _answer_columns.clear()
        kept = _answer_columns[key] = (e, QuantMatrix(e.fmt, np.ascontiguousarray(e.parts[0][list(tokens)])))
    return kept[1]


class Rows(Fast):
    """R decoding steps at once (see the module docstring): the forward's ``caches`` hold, per layer,
    one KVCache per row (rows may share one: consecutive tokens of one sequence, in order), and its
    ``positions`` (R,) each row's position."""

    def linear(self, x, w, b):
        if b is None and _plain(x) and _weight(w, x.dtype):
            return _rows_product(x, w)
        return super().linear(x, w, b)

    def project_qkv(self, h, p, arch):
        n_q, n_k = arch.n_head * arch.d_head, arch.n_kv_head * arch.d_head
        w = _joined_weights(p, "w_q", "w_k", "w_v")
        if w is not None:
            qkv = _rows_product(h, w)
        else:
            qkv = np.concatenate([_rows_product(h, p.w_q), _rows_product(h, p.w_k),
                                  _rows_product(h, p.w_v)], axis=1)  # fmt: skip
        if not np.isfinite(qkv).all():
            check_finite(np, qkv, "q, k, v = x @ w_q, w_k, w_v")
        n = h.shape[0]
        return (qkv[:, :n_q].reshape(n, arch.n_head, arch.d_head),
                qkv[:, n_q : n_q + n_k].reshape(n, arch.n_kv_head, arch.d_head),
                qkv[:, n_q + n_k :].reshape(n, arch.n_kv_head, arch.d_head))  # fmt: skip

    def attend(self, q, k, v, *, arch, cache, key_padding, on_scores, on_pattern, window=None):
        if window is not None or arch.attn_softcap is not None:  # rows_apply keeps such models off Rows
            raise ValueError("Rows attends without a sliding window or soft-capped scores")
        if on_scores is not None or on_pattern is not None:
            raise FieldError(("fwd_hooks",), "hooks on the scores or pattern need one sequence, not rows")
        caches, rows = cache, range(q.shape[0])
        if cache is None or len(caches) != q.shape[0]:
            got = 0 if cache is None else len(caches)
            raise FieldError(("caches",), f"hold {got} caches a layer for {q.shape[0]} rows; give one a row")
        before = [c.length for c in caches]
        for r in rows:  # each row appends its key and value to its cache, in row order
            caches[r].append(k[r : r + 1].transpose(1, 0, 2), v[r : r + 1].transpose(1, 0, 2))
        sides = []
        try:
            for r in rows:  # then attends to its cache's keys up to its own
                seen = before[r] + sum(1 for s in rows[:r] if caches[s] is caches[r]) + 1
                keys, values = caches[r].keys[..., :seen, :], caches[r].values[..., :seen, :]
                sides.append(self._attend_rows(q[r : r + 1], keys, values, arch))
        except ValueError:
            for c, length in zip(caches, before):
                c.truncate(min(length, c.length))
            raise
        return np.concatenate(sides)  # (R, H, d_head)

    def gate_up(self, h, p):
        w = _joined_weights(p, "w_gate", "w_up")
        both = _rows_product(h, w) if w is not None else np.concatenate(
            [_rows_product(h, p.w_gate), _rows_product(h, p.w_up)], axis=1)  # fmt: skip
        d_ff = p.w_gate.shape[1]
        return both[:, :d_ff], both[:, d_ff:]

    def unembed(self, x, weights):
        e = weights.embed if weights.unembed is None else None
        if isinstance(e, QuantMatrix):
            return product_rows(x, e)
        return np.concatenate([super(Rows, self).unembed(x[r : r + 1], weights) for r in range(x.shape[0])])


class OnValues(Fast):
    """The reference's block steps on the weights' float values (quantised blocks made float32 as
    gguf dequantizes them), with the fast embedding and output layer: the steps a trace of the Real
    model view takes, the numbers that view shows (and the programs behind them print)."""

    def whole_block(self, arch, p, x, **options):
        return None  # the reference's steps, one by one

    def norm(self, x, params):
        return Reference.norm(self, x, params)

    def linear(self, x, w, b):
        return Reference.linear(self, x, w.values() if isinstance(w, QuantMatrix) else w, b)

    def project_qkv(self, h, p, arch):
        return Reference.project_qkv(self, h, with_values(p), arch)

    def rotate(self, q, k, rope, positions):
        return Reference.rotate(self, q, k, rope, positions)

    def attend(self, q, k, v, **options):
        return Reference.attend(self, q, k, v, **options)

    def gate_up(self, h, p):
        return Reference.gate_up(self, h, with_values(p))

    def gated(self, pre, lin, activation: str):
        return Reference.gated(self, pre, lin, activation)


def _rows_product(x: np.ndarray, w) -> np.ndarray:
    """``x @ w`` for x (R, n_in), row r the bits of the one-row product ``_product(x[r:r+1], w)``."""
    if isinstance(w, QuantMatrix):
        return product_rows(x, w)
    return np.concatenate([_product(x[r : r + 1], w) for r in range(x.shape[0])])


def rows_apply(arch, weights) -> bool:
    """Whether :class:`Rows` runs this model: a pre-norm decoder on float or block weights whose steps
    take their fast forms (RMSNorm, no biases, gated SiLU, rotary or no positions, no sliding window
    and no soft-capped scores)."""
    if not arch.causal or arch.norm_placement != "pre" or arch.norm != "rms" or arch.mlp != "gated":
        return False
    if arch.activation != "silu" or arch.positions == "learned":
        return False
    if arch.sliding_window is not None or arch.attn_softcap is not None:
        return False
    b = weights.blocks[0]
    return all(x is None for x in (b.attn.b_q, b.attn.b_k, b.attn.b_v, b.attn.b_o))


FAST = Fast()
ROWS = Rows()
ON_VALUES = OnValues()

__all__ = ["FAST", "ON_VALUES", "ROWS", "Fast", "OnValues", "Rows", "joined", "rows_apply", "side_by_side"]
