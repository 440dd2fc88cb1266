"""What a program has in place of attnlab's array-API, thread and error helpers: their NumPy forms.

attnlab's engine is written against the Python array API standard (``array_api_compat``) and
shares some work among its own threads; a program is plain NumPy on one thread. The engine
functions a program embeds (:mod:`.bundle`) call a few helpers that need more than NumPy; each
is replaced here by a function of the same name and meaning for NumPy arrays (NumPy 2 has the
array API's functions under their standard names), which gives the same numbers:

- :func:`namespace` (engine/_arrays.py): NumPy itself;
- :func:`embed` (engine/positions.py): rows of a table, ``np.take``;
- :func:`attend` (engine/attention.py): the grouping of GQA's query heads, then the engine's own
  ``_attend`` (the arithmetic: scores, masks, the guarded softmax, the mix);
- :func:`angles` (engine/positions.py ``RoPE.angles``): positions times the inverse frequencies;
- :func:`run` and :data:`CORES` (engine/fast/workers.py, engine/threads.py): every task in turn on
  one thread (the engine fixes its pieces so that their bits never depend on the threads);
- :func:`holds_one_blas_thread` (engine/threads.py): nothing to hold (a program sets one BLAS
  thread before NumPy loads);
- :class:`FieldError` (engine/errors.py) and :class:`Refusal` (models/errors.py): a ``ValueError``
  at a field;
- :func:`erf` (engine/layers.py): ``erf_float32``, what the engine takes for float32 arrays;
- :class:`QuantMatrix` and :func:`product` (engine/fast/quant): a program's weights are float32
  arrays, never quantised blocks.

Each is tested against what it replaces (``tests/lab/realmodel/program/test_compat.py``).
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.attention import AttentionResult, _attend, _group_mask, _grouped, _ungroup
from attnlab.engine.layers import erf_float32

CORES = 1  # a program runs every piece of work on its one thread


def namespace(*arrays):
    """The array namespace of ``arrays``: NumPy (a program's arrays are NumPy's)."""
    return np


def arange(xp, n: int, like, dtype=None):
    """``0, 1, ..., n-1``."""
    return np.arange(n, dtype=dtype)


def _device(x):
    """Where ``x`` lives: NumPy arrays on the CPU."""
    return "cpu"


def embed(table, ids, *, field: str = "ids"):
    """Rows ``ids`` of ``table``: shape ids.shape + (d_model,)."""
    return np.take(table, np.asarray(ids, dtype=np.int64), axis=0)


def angles(self, positions, *, like):
    """RoPE's rotation angles (..., L, head_dim/2) at ``positions`` (..., L): float64 positions times the
    inverse frequencies."""
    pos = np.asarray(positions, dtype=np.int64).astype(np.float64)
    return np.expand_dims(pos, axis=-1) * self.inverse_frequencies


def attend(
    q, k, v, *, mask, causal, scale, key_padding_mask, enable_gqa, return_trace, check_values,
    on_scores=None, on_weights=None,
) -> AttentionResult:  # fmt: skip
    """Attention of q (..., H, L, d) on k, v (..., H_kv, S, d) whose values are checked, with boolean
    masks only (True = may attend): ``mask`` (L, S) and ``key_padding_mask`` (..., 1, S).

    With GQA (``enable_gqa``, H_kv < H) query head h reads KV head h // g: the query heads grouped as
    (..., H_kv, g, L, d), k and v broadcast over the group, the hooks called on (..., H, L, S). Then
    ``_attend`` does the arithmetic. Returns the output (..., H, L, d_v) and the weights (..., H, L, S).
    """
    xp = np
    bool_masks = [m for m in (mask, None if key_padding_mask is None else
                              xp.expand_dims(key_padding_mask, axis=-2)) if m is not None]  # fmt: skip
    groups = q.shape[-3] // k.shape[-3] if enable_gqa else 1
    if groups > 1:
        n_kv, qs = k.shape[-3], q.shape
        q = xp.reshape(q, qs[:-3] + (n_kv, groups) + qs[-2:])  # (..., H_kv, g, L, d_k)
        k_g = xp.expand_dims(k, axis=-3)  # (..., H_kv, 1, S, d_k)
        v_g = xp.expand_dims(v, axis=-3)  # (..., H_kv, 1, S, d_v)
        bool_masks = [_group_mask(xp, m, n_kv, groups) for m in bool_masks]
        hooks = [None if f is None else _grouped(xp, f, n_kv, groups, what)
                 for f, what in ((on_scores, "scores"), (on_weights, "weights"))]  # fmt: skip
        parts = _attend(xp, q, k_g, v_g, bool_masks, None, causal, scale, *hooks)
        parts = {name: _ungroup(xp, name, a) for name, a in parts.items()}
    else:
        parts = _attend(xp, q, k, v, bool_masks, None, causal, scale, on_scores, on_weights)
    return AttentionResult(output=parts["output"], weights=parts["weights"],
                           fully_masked=parts["fully_masked"])  # fmt: skip


def run(work, tasks, n_threads: int) -> None:
    """Call ``work(task, buffers)`` for every task, in order, on this thread."""
    buffers: dict = {}
    for task in tasks:
        work(task, buffers)


def _float_helpers(x, w):
    """None: a program multiplies every column block itself, with NumPy's matmul. (attnlab hands a short
    prompt's blocks to helper threads that call the same sgemm as NumPy's matmul on each block: the
    same bits.)"""
    return None


def holds_one_blas_thread(fn):
    """``fn`` as it is: the program set one BLAS thread before NumPy loaded."""
    return fn


class FieldError(ValueError):
    """A bad value in one input field: where (``loc``) and what is wrong (``problem``)."""

    def __init__(self, loc, problem: str, **refs) -> None:
        self.loc, self.problem = loc, problem
        super().__init__(f"{loc} {problem}")


class Refusal(FieldError):
    """A control refused at field ``loc``, for the reason ``kind``."""

    def __init__(self, loc, kind: str, *args, **facts) -> None:
        super().__init__(loc, f"is refused ({kind}): {args!r}")


def erf(x):
    """The error function of a float32 array: ``erf_float32``, as the engine computes it for float32."""
    return erf_float32(x)


class QuantMatrix:
    """Quantised blocks of a matrix: none in a program, whose weights are float32 arrays."""


def product(x, w):
    """A product on quantised blocks: never called, a program's weights being float32 arrays."""
    raise TypeError("this program multiplies float32 arrays only")
