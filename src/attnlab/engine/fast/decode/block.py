"""A decoding step's whole block on quantised blocks, in three compiled calls (imported on first use).

One token through a Llama-style block is ~20 small steps (two RMSNorms, four products, RoPE, the
cache, the scores, the softmax, the mix, SwiGLU, two residual adds); taken one by one from Python
they cost about a third of a SmolLM2 decoding step beside the products themselves
(docs/performance.md). Here they run as three calls, split where NumPy's ``exp`` runs (the fast
path's softmax and SiLU use NumPy's exp, whose bits a compiled exp would not give):

1. :func:`attend_start`: RMSNorm, the q|k|v product, RoPE on q and k, the new key and value into
   the cache's buffers, the scaled scores less each row's maximum;
2. ``np.exp`` of the scores; :func:`attend_finish`: divide and mix (``weights @ v``), the output
   product, the residual add, RMSNorm, the gate|up product, SiLU's argument;
3. ``np.exp``; :func:`mlp_finish`: SiLU times up, the down product, the residual add.

Each is the kernels the step-by-step fast path calls (:mod:`.kernels`,
:func:`attnlab.engine.fast.quant.kernels.matvec_parts` or the helpers' ``run_job``, which give
the same bits), in the same order on the same numbers, so a block run here is the bits of the
one forward's block on :data:`attnlab.engine.fast.ops.FAST` (tested): hooks, which need the
steps one by one, never see a difference.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.fast.compiled import _jit
from attnlab.engine.fast.decode.kernels import mix, rms_rows, rotate_heads, scores, silu_finish, silu_start
from attnlab.engine.fast.quant.kernels import matvec_parts
from attnlab.engine.fast.quant.share import MAX_PIECES, PATIENCE, PIECE_ROWS, run_job


@_jit(error_model="numpy")
def times(ctl, shared, xs, fmt, starts, rows, stride, x, out, least):
    """``out[0] = x[0] @ W`` for W's stored rows (quant's fixed order): with the helpers when
    ``shared`` and W has ``least`` multiply-adds or more (x copied into their buffer ``xs``, as
    ``share.Sharing.product`` copies it), else alone. Both give the same bits."""
    n_in, n_out = x.shape[1], out.shape[1]
    if shared and n_in * n_out >= least and (n_out + PIECE_ROWS - 1) // PIECE_ROWS <= MAX_PIECES:
        room = xs[:n_in]
        room[:] = x[0]
        run_job(ctl, fmt, starts, rows, stride, room, 0, out, PATIENCE)
    else:
        matvec_parts(fmt, starts, rows, stride, x[0], out[0])


@_jit(error_model="numpy")
def attend_start(x, norm_w, eps, ctl, shared, xs, least, fmt, starts, rows, stride,
                 h, qkv, cos, sin, half, n_head, n_kv, rot, k_buf, v_buf, s, g, scale, w):  # fmt: skip
    """h = RMSNorm(x); qkv = h @ [W_Q | W_K | W_V]; rot = RoPE(q heads, k heads); the new token's k
    and v into position s - 1 of the cache's buffers (H_kv, capacity, d); w (H, 1, s) = the scaled
    scores on the first s keys less each row's maximum. False when q, k, v or a score is not finite
    (then the caller takes the steps one by one, which name the error)."""
    rms_rows(x, norm_w, eps, h)
    times(ctl, shared, xs, fmt, starts, rows, stride, h, qkv, least)
    for c in range(qkv.shape[1]):
        if not np.isfinite(qkv[0, c]):
            return False
    d = rot.shape[2]
    rotate_heads(qkv, n_head + n_kv, d, cos, sin, half, rot)
    v0 = (n_head + n_kv) * d
    for j in range(n_kv):
        for i in range(d):
            k_buf[j, s - 1, i] = rot[0, n_head + j, i]
            v_buf[j, s - 1, i] = qkv[0, v0 + j * d + i]
    return scores(rot, n_head, k_buf[:, :s], g, scale, w)  # a view cut here: one compiled signature


@_jit(error_model="numpy")
def attend_finish(w, v_buf, s, g, side, ctl, shared, xs, least, o_fmt, o_starts, o_rows, o_stride, attn,
                  x, mid, norm_w, eps, h, gu_fmt, gu_starts, gu_rows, gu_stride, both, act):  # fmt: skip
    """side = softmax rows @ v (w exp'd on entry; v: the buffer's first s values); attn = side @ W_O;
    mid = x + attn; h = RMSNorm(mid); both = h @ [W_gate | W_up]; act = -|gate| (SiLU's exp's argument)."""
    mix(w, v_buf[:, :s], g, side)
    times(ctl, shared, xs, o_fmt, o_starts, o_rows, o_stride, side, attn, least)
    for c in range(x.shape[1]):
        mid[0, c] = x[0, c] + attn[0, c]
    rms_rows(mid, norm_w, eps, h)
    times(ctl, shared, xs, gu_fmt, gu_starts, gu_rows, gu_stride, h, both, least)
    silu_start(both, act.shape[1], act)


@_jit(error_model="numpy")
def mlp_finish(both, act, ctl, shared, xs, least, fmt, starts, rows, stride, down, mid, out):
    """act = silu(gate) * up (act = exp(-|gate|) on entry); down = act @ W_down; out = mid + down."""
    silu_finish(both, act.shape[1], act)
    times(ctl, shared, xs, fmt, starts, rows, stride, act, down, least)
    for c in range(out.shape[1]):
        out[0, c] = mid[0, c] + down[0, c]
