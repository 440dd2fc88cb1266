"""One forward pass that keeps every activation circuits need, and runs again from any layer on.

:func:`run` runs the model's forward (:meth:`attnlab.models.model.Model.forward`, the one
forward) with hooks that keep a :class:`Cache`, and interventions (:mod:`.edits`) made at the
hook points where asked. :func:`resume` starts from a cached run's residual stream at one
layer (the forward's ``start_at_layer``) and runs only the blocks from there on, again keeping
a :class:`Cache` (the layers below copied from the cached run); :func:`final_residual` does the
same and keeps only the residual after the last block (what a patching sweep needs).

Without interventions a run's logits are ``model.forward(ids)``'s bit for bit (the hooks only
read), and a decoder's ``resid[L]`` goes into the final norm exactly as in the forward. Every
array of a :class:`Cache` is read-only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from attnlab.models.circuits import checks
from attnlab.models.circuits.edits import Intervention, Plan, plan
from attnlab.models.errors import Refusal


@dataclass(frozen=True, eq=False, kw_only=True)
class Cache:
    """A run's activations, in the model's dtype (float32 on the q4_1 and float32 paths).

    ``resid`` (L+1, T, d): point l enters block l (``blocks.l.hook_resid_pre``), point L
    leaves the last block; ``mid`` (L, T, d): between each block's sublayers (pre-norm
    x + attention, ``hook_resid_mid``; post-norm LayerNorm_1(x + attention),
    ``ln1.hook_normalized``); ``z`` (L, T, H, d_head): each query head's output before W_O
    (``attn.hook_z``); ``attn_out`` (L, T, d): the attention sublayer's output (after W_O and
    its bias); ``mlp_out`` (L, T, d): the feed-forward output before its residual add. Decoder:
    ``final_rms`` (T,), the final RMSNorm's divisor sqrt(mean(x^2) + eps) as the model computed
    it (its scale is 1 / final_rms), and ``logits`` (T, V) (None when the run was asked not to
    keep them). Encoder: ``pooled`` (d,), the unit-length sentence embedding. ``edits``: the
    interventions this run applied; ``start``: the first block it computed (below: another run's).
    """

    model: str
    kind: str
    path: str
    ids: tuple[int, ...]
    resid: np.ndarray
    mid: np.ndarray
    z: np.ndarray
    attn_out: np.ndarray
    mlp_out: np.ndarray
    final_rms: np.ndarray | None = None
    logits: np.ndarray | None = None
    pooled: np.ndarray | None = None
    edits: tuple = ()
    start: int = 0

    @property
    def n_layer(self) -> int:
        return self.resid.shape[0] - 1

    @property
    def n_tokens(self) -> int:
        return self.resid.shape[1]

    @property
    def resid_pre(self) -> np.ndarray:
        """(L, T, d): the residual stream entering each block."""
        return self.resid[:-1]

    @property
    def resid_post(self) -> np.ndarray:
        """(L, T, d): the residual stream leaving each block."""
        return self.resid[1:]

    @property
    def final_scale(self) -> np.ndarray | None:
        """(T,) float64: 1 / final_rms, the final norm's per-position scale (decoder)."""
        return None if self.final_rms is None else 1.0 / self.final_rms.astype(np.float64)


def check_ids(model, ids) -> list[int]:
    """The token ids as ints: at least one, each in the vocabulary, within the model's positions."""
    ids = model.check_ids(ids)
    if len(ids) > model.arch.n_ctx:
        raise Refusal(("ids",), "circuits.too_long", len(ids), model.arch.n_ctx)
    return ids


def run(model, ids, *, edits: Iterable[Intervention] = (), logits: bool = True) -> Cache:
    """Run ``model`` on token ids ``ids`` with ``edits``, keeping every activation.

    ``logits``: a decoder also keeps its (T, V) logits (the largest array: leave them
    out for long texts when only the residual stream is needed).
    """
    ids = check_ids(model, ids)
    edits = tuple(edits)
    p = plan(model, len(ids), edits)
    return _record(model, ids, None, 0, p, None, edits, logits)


def resume(
    model, base: Cache, layer: int, *, edits: Iterable[Intervention] = (), logits: bool = True
) -> Cache:
    """``base`` run again from block ``layer`` on, with ``edits`` (below: base's activations).

    Edits below ``layer`` are refused: they would need the blocks below run again
    (use :func:`run`, or resume from the lowest edited layer).
    """
    layer = checks.index(layer, model.arch.n_layer + 1, loc=("layer",), model=model.name, what="layer")
    edits = tuple(edits)
    p = plan(model, base.n_tokens, edits)
    if p.start < layer:
        raise Refusal(("layer",), "circuits.edits_below", p.start, layer)
    return _record(model, list(base.ids), base.resid[layer], layer, p, base, edits, logits)


def final_residual(model, x: np.ndarray, start: int, p: Plan) -> np.ndarray:
    """The residual stream after the last block (T, d), from ``x`` entering block ``start``, with ``p``.

    No recording: the blocks from ``start`` on, ``p``'s writes only.
    """
    n = model.arch.n_layer
    out = model.forward(None, start_at_layer=start, resid=_writable(x), stop_at_layer=n,
                        fwd_hooks=p.hooks(start, n))  # fmt: skip
    return p.at_point(n, out)


def _record(model, ids, x, start: int, p: Plan, base: Cache | None, edits: tuple, logits: bool) -> Cache:
    a = model.arch
    L, T, d = a.n_layer, len(ids), a.d_model
    arrays = {
        "resid": np.empty((L + 1, T, d), model.dtype),
        "mid": np.empty((L, T, d), model.dtype),
        "z": np.empty((L, T, a.n_head, a.d_head), model.dtype),
        "attn_out": np.empty((L, T, d), model.dtype),
        "mlp_out": np.empty((L, T, d), model.dtype),
    }
    if base is not None and start > 0:  # the blocks below are base's: copy their rows once
        for name, arr in arrays.items():
            arr[:start] = getattr(base, name)[:start]

    def keeper(name: str):
        def keep(layer: int, value: np.ndarray) -> None:
            arrays[name][layer] = value

        return keep

    keep = {kind: keeper(kind) for kind in ("resid", "mid", "z", "attn_out", "mlp_out")}
    hooks = p.hooks(start, L, keep)
    if x is None:
        x = model.forward(ids, stop_at_layer=L, fwd_hooks=hooks)
    else:
        x = model.forward(None, start_at_layer=start, resid=_writable(x), stop_at_layer=L, fwd_hooks=hooks)
    x = p.at_point(L, x)
    arrays["resid"][L] = x
    extra: dict = {}
    if a.head == "logits":
        extra["final_rms"] = final_rms(model, x)
        extra["logits"] = model.head(x) if logits else None
    else:
        extra["pooled"] = model.head(x)
    for arr in (*arrays.values(), *extra.values()):
        if arr is not None:
            arr.flags.writeable = False
    return Cache(
        model=model.name,
        kind=model.kind,
        path=model.path,
        ids=tuple(ids),
        edits=(base.edits if base is not None else ()) + edits,
        start=start,
        **arrays,
        **extra,
    )


def final_rms(model, x: np.ndarray) -> np.ndarray:
    """The final RMSNorm's divisor per row of x (n, d): ``sqrt(mean(x^2) + eps)``, as it computes it."""
    return np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + model.weights.final_norm.eps)[..., 0]


def _writable(x: np.ndarray) -> np.ndarray:
    """x, or a copy of it when it is a cache's read-only row (the compiled steps take writable arrays)."""
    return x if x.flags.writeable else x.copy()
