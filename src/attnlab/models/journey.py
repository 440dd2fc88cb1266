"""One token's journey through the blocks: the residual stream, what attention and the MLP add.

From the forward's hook points (:func:`journey_arrays`), for every block ``l`` and token ``t``
(arrays ``(L, T)`` unless said):

- ``resid_in``: the L2 norm of the block's input row (the residual stream);
- ``attn``: the norm of what attention adds (its output, after W_O);
- ``mlp``: the norm of what the MLP adds;
- ``resid_out``: the norm of the block's output;
- ``norm_1`` / ``norm_2`` ``(L, T, 3)``: mean, root mean square and largest
  magnitude of the vector each norm normalises (pre-norm: the block's input and
  ``x + attention``; post-norm: ``x + MHA(x)`` and ``h + FFN(h)``);
- ``mlp_units`` / ``mlp_values`` ``(L, T, TOP_UNITS)``: the MLP units with the
  largest |activation| (after the activation; SwiGLU: silu(gate) * up), largest
  first, ties to the lower unit.

Statistics are float64 of the model's float32 rows, computed once with the
trace so that the view answers without the model.
"""

from __future__ import annotations

import numpy as np

TOP_UNITS = 5
STATS = ("mean", "rms", "max_abs")  # each norm's input: its statistics, in this order


def _stats(x: np.ndarray) -> np.ndarray:
    return np.stack([x.mean(-1), np.sqrt((x * x).mean(-1)), np.abs(x).max(-1)], axis=-1)


def journey_arrays(cache, arch) -> dict[str, np.ndarray]:
    """The journey of every token from a forward's hook points (``cache``: name -> activation,
    as :meth:`attnlab.models.model.Model.run_with_cache` keeps them), for a model of ``arch``.

    Pre-norm: norm_1 normalises the block's input (``hook_resid_pre``), norm_2 ``x + attention``
    (``hook_resid_mid``); post-norm: ``x + MHA(x)`` (``hook_resid_mid``) and ``h + FFN(h)``
    (``hook_resid_post``, before LayerNorm_2); the block's output is ``hook_resid_post``
    (pre-norm) or ``ln2.hook_normalized`` (post-norm).
    """
    from attnlab.engine.hooks import block_names

    pre = arch.norm_placement == "pre"
    out: dict[str, list] = {k: [] for k in ("resid_in", "attn", "mlp", "resid_out", "norm_1", "norm_2")}
    units, values = [], []
    for layer in range(arch.n_layer):
        n = block_names(layer)

        def rows(name):
            return np.asarray(cache[name], dtype=np.float64)

        x = rows(n.resid_pre)
        first = x if pre else rows(n.resid_mid)
        second = rows(n.resid_mid if pre else n.resid_post)
        out["resid_in"].append(np.linalg.norm(x, axis=-1))
        out["attn"].append(np.linalg.norm(rows(n.attn_out), axis=-1))
        out["mlp"].append(np.linalg.norm(rows(n.mlp_out), axis=-1))
        out["resid_out"].append(np.linalg.norm(rows(n.resid_post if pre else n.ln2), axis=-1))
        out["norm_1"].append(_stats(first))
        out["norm_2"].append(_stats(second))
        act = rows(n.mlp_post)  # (T, d_ff)
        order = top_units(act, TOP_UNITS)
        units.append(order.astype(np.int32))
        values.append(np.take_along_axis(act, order, axis=-1))
    arrays = {k: np.stack(v) for k, v in out.items()}
    arrays["mlp_units"] = np.stack(units)
    arrays["mlp_values"] = np.stack(values)
    return arrays


def top_units(act: np.ndarray, k: int) -> np.ndarray:
    """Per row of ``act`` (T, d_ff): the ``k`` units of largest |a|, largest first.

    Ties go to the lower index, exactly as ``np.argsort(-abs(act), kind="stable")[:, :k]``,
    but only the candidates at or above each row's k-th largest |a| are sorted (a full
    sort of 256 x 1536 per layer cost a third of a 256-token trace).
    """
    mag = np.abs(act)
    if mag.shape[-1] <= k:
        return np.argsort(-mag, axis=-1, kind="stable")
    kth = -np.partition(-mag, k - 1, axis=-1)[:, k - 1]
    out = np.empty((mag.shape[0], k), dtype=np.intp)
    for r, (row, bound) in enumerate(zip(mag, kth)):
        candidates = np.flatnonzero(row >= bound)  # ascending index: the stable sort keeps ties in this order
        out[r] = candidates[np.argsort(-row[candidates], kind="stable")][:k]
    return out
