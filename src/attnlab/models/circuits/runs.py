"""One forward pass that keeps every activation circuits need, and runs again from any layer on.

:func:`run` embeds the tokens and runs every block (:mod:`.stack`: the model's own calls,
in its order), with interventions (:mod:`.edits`) where asked, and keeps a :class:`Cache`.
:func:`resume` starts from a cached run's residual stream at one layer and runs only
the blocks from there on, again keeping a :class:`Cache` (the layers below copied from
the cached run); :func:`final_residual` does the same and keeps only the residual after
the last block (what a patching sweep needs).

Without interventions a run's logits are ``model.forward(ids)``'s bit for bit, and a
decoder's ``resid[L]`` goes into the final norm exactly as in the forward. Every array of a
:class:`Cache` is read-only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.engine.threads import one_blas_thread
from attnlab.models.circuits import checks
from attnlab.models.circuits.edits import Intervention, Plan, plan
from attnlab.models.circuits.stack import Decoder, Encoder, stack_of


@dataclass(frozen=True, eq=False, kw_only=True)
class Cache:
    """A run's activations, in the model's dtype (float32 on the q4_1 and float32 paths).

    ``resid`` (L+1, T, d): point l enters block l, point L leaves the last block;
    ``mid`` (L, T, d): between each block's sublayers (pre-norm x + attention,
    post-norm LayerNorm_1(x + attention)); ``z`` (L, T, H, d_head): each query head's
    output before W_O; ``attn_out`` (L, T, d): the attention sublayer's output (after
    W_O and its bias); ``mlp_out`` (L, T, d): the feed-forward output before its
    residual add. Decoder: ``final_rms`` (T,), the final RMSNorm's divisor
    sqrt(mean(x^2) + eps) as the model computed it (its scale is 1 / final_rms), and
    ``logits`` (T, V) (None when the run was asked not to keep them). Encoder:
    ``pooled`` (d,), the unit-length sentence embedding. ``edits``: the interventions
    this run applied; ``start``: the first block it computed (below: another run's).
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


def run(model, ids, *, edits: Iterable[Intervention] = (), logits: bool = True) -> Cache:
    """Run ``model`` on token ids ``ids`` with ``edits``, keeping every activation.

    ``logits``: a decoder also keeps its (T, V) logits (the largest array: leave them
    out for long texts when only the residual stream is needed).
    """
    stack = stack_of(model)
    ids = stack.check_ids(ids)
    edits = tuple(edits)
    p = plan(stack, len(ids), edits)
    with one_blas_thread():
        x0 = stack.embed(ids)
        return _record(stack, ids, x0, 0, p, None, edits, logits)


def resume(
    model, base: Cache, layer: int, *, edits: Iterable[Intervention] = (), logits: bool = True
) -> Cache:
    """``base`` run again from block ``layer`` on, with ``edits`` (below: base's activations).

    Edits below ``layer`` are refused: they would need the blocks below run again
    (use :func:`run`, or resume from the lowest edited layer).
    """
    stack = stack_of(model)
    layer = checks.index(layer, stack.n_layer + 1, loc=("layer",), model=stack.name, what="layer")
    edits = tuple(edits)
    p = plan(stack, base.n_tokens, edits)
    if p.start < layer:
        raise FieldError(("layer",), checks.edits_below(p.start, layer))
    with one_blas_thread():
        return _record(stack, list(base.ids), base.resid[layer], layer, p, base, edits, logits)


def final_residual(stack: Decoder | Encoder, x: np.ndarray, start: int, p: Plan) -> np.ndarray:
    """The residual stream after the last block (T, d), from ``x`` entering block ``start``, with ``p``.

    No recording: the blocks from ``start`` on, ``p``'s hooks and residual writes only.
    Call inside ``one_blas_thread()``.
    """
    x = _writable(p.at_point(start, x))
    for i in range(start, stack.n_layer):
        x, _ = stack.block(i, x, p.edits(i))
        x = p.at_point(i + 1, x)
    return x


def _record(stack, ids, x, start: int, p: Plan, base: Cache | None, edits: tuple, logits: bool) -> Cache:
    L, T, d = stack.n_layer, len(ids), stack.d_model
    H, dh = stack.n_head, stack.d_head
    arrays = {
        "resid": np.empty((L + 1, T, d), stack.dtype),
        "mid": np.empty((L, T, d), stack.dtype),
        "z": np.empty((L, T, H, dh), stack.dtype),
        "attn_out": np.empty((L, T, d), stack.dtype),
        "mlp_out": np.empty((L, T, d), stack.dtype),
    }
    if base is not None and start > 0:  # the blocks below are base's: copy their rows once
        for name, a in arrays.items():
            a[:start] = getattr(base, name)[:start]
    layer = [0]  # the block being recorded

    def keeper(name: str, reshape=None):
        def keep(a: np.ndarray) -> np.ndarray:
            row = a.reshape(a.shape[-2], -1) if a.ndim > 2 else a  # the encoder's batch of one
            arrays[name][layer[0]] = row if reshape is None else row.reshape(reshape)
            return a

        return keep

    keep = {"z": keeper("z", (T, H, dh)), "mid": keeper("mid"), "mlp": keeper("mlp_out")}
    x = _writable(p.at_point(start, x))
    arrays["resid"][start] = x
    for i in range(start, L):
        layer[0] = i
        x, attn = stack.block(i, x, p.edits(i, keep))
        x = p.at_point(i + 1, x)
        arrays["attn_out"][i] = attn
        arrays["resid"][i + 1] = x
    extra: dict = {}
    if stack.kind == "decoder":
        extra["final_rms"] = stack.final_rms(x)
        extra["logits"] = stack.logits(x) if logits else None
    else:
        extra["pooled"] = stack.pooled(x)
    for a in (*arrays.values(), *extra.values()):
        if a is not None:
            a.flags.writeable = False
    return Cache(
        model=stack.name,
        kind=stack.kind,
        path=stack.path,
        ids=tuple(ids),
        edits=(base.edits if base is not None else ()) + edits,
        start=start,
        **arrays,
        **extra,
    )


def _writable(x: np.ndarray) -> np.ndarray:
    """x, or a copy of it when it is a cache's read-only row (the compiled steps take writable arrays)."""
    return x if x.flags.writeable else x.copy()
