"""Interventions as data, and the forward's hooks (:mod:`attnlab.engine.hooks`) they become.

- :class:`SetHead`: query head ``head``'s output z in ``layer`` (its slice of the heads side
  by side, before W_O: what that query head alone writes; on a GQA model never the KV head
  its group shares) takes ``value``. Zero ablation sets zeros, mean ablation the head's
  mean over the text's positions (:mod:`.ablation`), a head patch the clean run's z.
- :class:`SetMLP`: the feed-forward output of ``layer``, before its residual add.
- :class:`SetResid`: the residual stream at ``site`` "pre" (entering block ``layer``),
  "mid" (between its two sublayers: pre-norm ``x + attention``, post-norm
  ``LayerNorm_1(x + attention)``) or "post" (leaving it).
- :class:`SetPattern`: query head ``head``'s attention pattern in ``layer`` (its rows at the
  query ``positions``: how it shares its attention; the values it mixes stay the run's).
- :class:`SetKV`: KV head ``kv_head``'s keys (``which="k"``, after RoPE where the model rotates
  them: what the scores read) or values (``"v"``) in ``layer``. On a GQA model a KV head is
  shared: the patch reaches every query head of its group (the GQA pitfall; the view names
  the group).

``positions`` (token positions, or None: every one) say where the value goes; ``value``
is (T, width), or (width,) for the same vector at every position. An edit writes into a
copy in the model's dtype, so an intervention that sets the run's own values gives the
run's numbers bit for bit. Interventions are plain data: they pickle (a worker process
can receive them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from attnlab.engine.hooks import block_names
from attnlab.models.circuits import checks
from attnlab.models.errors import Refusal


@dataclass(frozen=True, eq=False)
class SetHead:
    """Query head ``head``'s z in ``layer`` := ``value`` (T, d_head) or (d_head,), at ``positions``."""

    layer: int
    head: int
    value: np.ndarray
    positions: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class SetMLP:
    """The feed-forward output of ``layer`` := ``value`` (T, d) or (d,), at ``positions``."""

    layer: int
    value: np.ndarray
    positions: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class SetResid:
    """The residual stream at ``site`` ("pre", "mid", "post") of ``layer`` := ``value``, at ``positions``."""

    layer: int
    site: str
    value: np.ndarray
    positions: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class SetPattern:
    """Query head ``head``'s pattern in ``layer`` := ``value`` (T, T) (each row a query's weights over
    the keys), at the query ``positions``."""

    layer: int
    head: int
    value: np.ndarray
    positions: tuple[int, ...] | None = None


@dataclass(frozen=True, eq=False)
class SetKV:
    """KV head ``kv_head``'s keys (``which`` "k") or values ("v") in ``layer`` := ``value`` (T, d_head)
    or (d_head,), at ``positions``."""

    layer: int
    kv_head: int
    which: str
    value: np.ndarray
    positions: tuple[int, ...] | None = None


Intervention = SetHead | SetMLP | SetResid | SetPattern | SetKV
KV = ("k", "v")


@dataclass(frozen=True)
class _Write:
    """One replacement in an array (..., T, width): ``value`` (T, w) into columns ``cols`` at ``rows``
    (of head ``head``'s (T, width) when the array is (H, T, width): an attention pattern)."""

    cols: slice
    value: np.ndarray
    rows: np.ndarray | slice
    head: int | None = None


@dataclass
class Plan:
    """Interventions sorted by where they act.

    ``start``: the first block whose numbers they change (``n_layer`` when only the
    residual leaving the last block changes); ``blocks[layer]``: the writes at that
    block's hook points ("z", "mid", "mlp"); ``points[p]``: the writes into the residual
    stream at point p (entering block p; p = n_layer: after the last block).
    """

    start: int
    mid_hook: str = "resid_mid"  # where "mid" is: pre-norm x + attention, post-norm LayerNorm_1 of it
    k_hook: str = "rot_k"  # the keys the scores read: after RoPE where the model rotates them
    blocks: dict[int, dict[str, list[_Write]]] = field(default_factory=dict)
    points: dict[int, list[_Write]] = field(default_factory=dict)

    def hooks(self, start: int, n_layer: int, keep: dict[str, Callable] | None = None) -> list:
        """``fwd_hooks`` for the forward from block ``start``: the writes at each hook point, then
        ``keep[kind](layer, value)`` (a recorder of "resid", "mid", "z", "attn_out", "mlp_out")."""
        keep = keep or {}
        out = []
        for layer in range(start, n_layer):
            n = block_names(layer)
            writes = self.blocks.get(layer, {})
            places = (
                ("resid", n.resid_pre, self.points.get(layer)),
                ("k", getattr(n, self.k_hook), writes.get("k")),
                ("v", n.v, writes.get("v")),
                ("pattern", n.pattern, writes.get("pattern")),
                ("mid", getattr(n, self.mid_hook), writes.get("mid")),
                ("z", n.z, writes.get("z")),
                ("attn_out", n.attn_out, None),
                ("mlp_out", n.mlp_out, writes.get("mlp")),
            )
            for kind, name, w in places:
                fn = _hook(w, keep.get(kind), layer, heads=kind in ("z", "k", "v"))
                if fn is not None:
                    out.append((name, fn))
        return out

    def at_point(self, point: int, x: np.ndarray) -> np.ndarray:
        """x (T, d) with the writes at residual point ``point`` (x itself when there are none)."""
        writes = self.points.get(point)
        return x if not writes else _apply(writes, x)


def plan(model, n_tokens: int, interventions: Iterable[Intervention]) -> Plan:
    """Check ``interventions`` against the model and ``n_tokens``; sort them by place (see :class:`Plan`)."""
    a = model.arch
    mid = "resid_mid" if a.norm_placement == "pre" else "ln1"
    out = Plan(start=a.n_layer + 1, mid_hook=mid, k_hook="rot_k" if a.positions == "rope" else "k")
    for i, edit in enumerate(interventions):
        loc = ("edits", i)
        layer = checks.index(edit.layer, a.n_layer, loc=(*loc, "layer"), model=model.name, what="layer")
        rows = checks.positions(edit.positions, n_tokens, loc=(*loc, "positions"))
        if isinstance(edit, SetHead):
            head = checks.index(edit.head, a.n_head, loc=(*loc, "head"), model=model.name, what="head")
            d = a.d_head
            write = _write(model, edit.value, n_tokens, d, rows, slice(head * d, (head + 1) * d), loc)
            out.blocks.setdefault(layer, {}).setdefault("z", []).append(write)
            out.start = min(out.start, layer)
        elif isinstance(edit, SetPattern):
            head = checks.index(edit.head, a.n_head, loc=(*loc, "head"), model=model.name, what="head")
            write = _write(model, edit.value, n_tokens, n_tokens, rows, slice(None), loc, head=head)
            out.blocks.setdefault(layer, {}).setdefault("pattern", []).append(write)
            out.start = min(out.start, layer)
        elif isinstance(edit, SetKV):
            g = checks.index(edit.kv_head, a.n_kv_head, loc=(*loc, "kv_head"), model=model.name,
                             what="KV head")  # fmt: skip
            which = checks.choice(edit.which, KV, loc=(*loc, "which"))
            d = a.d_head
            write = _write(model, edit.value, n_tokens, d, rows, slice(g * d, (g + 1) * d), loc)
            out.blocks.setdefault(layer, {}).setdefault(which, []).append(write)
            out.start = min(out.start, layer)
        elif isinstance(edit, SetMLP | SetResid):
            write = _write(model, edit.value, n_tokens, a.d_model, rows, slice(None), loc)
            site = "mlp" if isinstance(edit, SetMLP) else checks.choice(edit.site, checks.SITES,
                                                                        loc=(*loc, "site"))  # fmt: skip
            if site in ("mlp", "mid"):
                out.blocks.setdefault(layer, {}).setdefault(site, []).append(write)
                out.start = min(out.start, layer)
            else:
                point = layer if site == "pre" else layer + 1
                out.points.setdefault(point, []).append(write)
                out.start = min(out.start, point)
        else:
            kinds = ("SetHead", "SetMLP", "SetResid", "SetPattern", "SetKV")
            raise Refusal(loc, "circuits.unknown_choice", type(edit).__name__, kinds)
    out.start = min(out.start, a.n_layer)
    return out


def _write(model, value, n_tokens: int, width: int, rows, cols: slice, loc, head=None) -> _Write:
    v = np.asarray(value)
    if v.shape == (width,):
        v = np.broadcast_to(v, (n_tokens, width))
    if v.shape != (n_tokens, width):
        raise Refusal((*loc, "value"), "circuits.wrong_shape", v.shape, (n_tokens, width))
    v = v.astype(model.dtype, copy=False)
    at = slice(None) if rows is None else np.asarray(rows, dtype=np.intp)
    return _Write(cols=cols, value=v, rows=at, head=head)


def _apply(writes: list[_Write], a: np.ndarray) -> np.ndarray:
    """A C-contiguous copy of a (..., T, width) with every write made, in the order given."""
    out = np.array(a, dtype=a.dtype, order="C", copy=True)
    for w in writes:
        target = out if w.head is None else out[w.head]
        target[..., w.rows, w.cols] = w.value[w.rows]
    return out


def _hook(writes: list[_Write] | None, keep: Callable | None, layer: int, *, heads: bool) -> Callable | None:
    """A forward hook making ``writes`` (z, k and v seen as (T, heads * d_head), the heads' side-by-side
    columns; a pattern as (H, T, T)) and then calling ``keep(layer, value)``; None when there is
    nothing to do."""
    if not writes and keep is None:
        return None

    def hook(a: np.ndarray, name: str) -> np.ndarray:
        out = a
        if writes:
            flat = a.reshape(a.shape[0], -1) if heads else a  # z (T, H, d) as the heads side by side
            out = _apply(writes, flat).reshape(a.shape)
        if keep is not None:
            keep(layer, out)
        return out

    return hook
