"""Activation patching: one clean activation into the corrupted run, and what the metric does.

Two prompts of the same token length (clean: "The Eiffel Tower is in the city of",
corrupted: "The Colosseum is in the city of") run once each (:func:`pair`). A patch
replaces one activation of the corrupted run with the clean run's, recomputes from the
patched layer on (the corrupted run's cached residual stream enters that layer) and
reads a metric:

- decoder: the logit difference ``logit(answers[0]) - logit(answers[1])`` at ``position``
  (default the last token), from :meth:`.model.Decoder.answer_logits` on the final
  residual's row (on the q4_1 path the forward's own bits);
- encoder (no next token): the cosine of the pooled sentence embedding with the clean
  run's.

The fraction recovered is (metric_patched - metric_corrupt) / (metric_clean - metric_corrupt).
The three metrics come from the same function on the same kind of row, so: a residual
patch at a position before the first token where the prompts differ gives exactly 0
(causal attention: the clean and corrupted rows there are the same bits, so the patched
run is the corrupted run), and the residual leaving the last block at the metric's
position gives exactly 1 (decoder; tested).

Sweeps (:func:`residual_sweep`, :func:`head_sweep`, :func:`mlp_sweep`, :func:`pattern_sweep`,
:func:`kv_sweep`) report
``progress(done, total)`` after each patch and stop at a ``cancel`` check (a
``threading.Event`` or a callable returning True) with :class:`Cancelled`. A patch whose
clean value equals the corrupted one bit for bit is not recomputed: its metric is the
corrupted run's, which is what recomputing gives (``Sweep.skipped`` marks it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from attnlab.engine.hooks import block_names
from attnlab.engine.threads import one_blas_thread
from attnlab.models.circuits import checks
from attnlab.models.circuits.edits import KV, Intervention, SetHead, SetKV, SetMLP, SetPattern, SetResid, plan
from attnlab.models.circuits.metrics import cosine, fraction_recovered, logit_difference
from attnlab.models.circuits.runs import Cache, check_ids, final_residual, resume, run
from attnlab.models.errors import Refusal

Progress = Callable[[int, int], None]  # (patches done, patches in all)
Cancel = threading.Event | Callable[[], bool]


class Cancelled(Exception):
    """A sweep stopped by its cancel check; ``sweep`` holds what was done (NaN elsewhere)."""

    def __init__(self, sweep: Sweep) -> None:
        super().__init__(f"cancelled after {sweep.done} of {sweep.values.size} patches")
        self.sweep = sweep


@dataclass(frozen=True, eq=False, kw_only=True)
class Pair:
    """A clean and a corrupted run of one token length, and the metric on each.

    ``metric``: "logit_difference" (decoder; ``answers`` (right, other) token ids,
    ``answer_logits`` (2, 2) float64: rows clean, corrupt; columns right, other) or
    "cosine" (encoder; ``answers`` None). ``position``: the token whose metric is read
    (decoder; the encoder's metric is the whole sentence's, position None).
    ``clean_value``, ``corrupt_value``: the metric on each run (float64).
    """

    clean: Cache
    corrupt: Cache
    metric: str
    answers: tuple[int, int] | None
    position: int | None
    clean_value: float
    corrupt_value: float
    answer_logits: np.ndarray | None = None

    def recovered(self, value) -> np.ndarray | float:
        """The fraction recovered for metric value(s) ``value``."""
        return fraction_recovered(value, self.clean_value, self.corrupt_value)


@dataclass(frozen=True, eq=False, kw_only=True)
class Sweep:
    """A patching sweep: ``values[i, j]`` the metric after patching row i, column j.

    ``kind``: "residual" (rows layers, columns positions; ``site`` "pre", "mid" or
    "post"), "heads" (rows layers, columns query heads; ``positions``: where each head's
    z was patched, None = every position), "mlp" (rows layers; columns positions, or
    one column ``None`` when the whole layer's output was patched), "pattern" (rows layers,
    columns query heads: each head's attention pattern) or "keys" / "values" (rows layers,
    columns KV heads: on a GQA model a column reaches its whole group). ``recovered``: the
    fraction recovered, same shape. ``skipped``: patches not recomputed (clean value ==
    corrupted value, bit for bit). ``done``: patches computed or skipped (all, unless
    cancelled; the rest are NaN).
    """

    kind: str
    site: str | None
    layers: tuple[int, ...]
    columns: tuple[int | None, ...]
    positions: tuple[int, ...] | None
    values: np.ndarray
    recovered: np.ndarray
    skipped: np.ndarray
    clean_value: float
    corrupt_value: float
    done: int


def pair(model, clean_ids, corrupt_ids, *, answers=None, position: int = -1) -> Pair:
    """Run both prompts and measure each (see the module); ``answers`` (right, other) for a decoder."""
    clean_ids, corrupt_ids = check_ids(model, clean_ids), check_ids(model, corrupt_ids)
    if len(clean_ids) != len(corrupt_ids):
        raise Refusal(("corrupt",), "circuits.lengths_differ", len(clean_ids), len(corrupt_ids))
    if model.kind == "decoder":
        answers = checks.answers(answers, model.arch.d_vocab)
        position = checks.position(position, len(clean_ids), loc=("position",))
    clean = run(model, clean_ids)
    corrupt = run(model, corrupt_ids)
    if model.kind == "encoder":
        return Pair(clean=clean, corrupt=corrupt, metric="cosine", answers=None, position=None,
                    clean_value=cosine(clean.pooled, clean.pooled),
                    corrupt_value=cosine(corrupt.pooled, clean.pooled))  # fmt: skip
    with one_blas_thread():
        both = np.stack([_answer_logits(model, c.resid[-1], answers, position) for c in (clean, corrupt)])
    return Pair(
        clean=clean,
        corrupt=corrupt,
        metric="logit_difference",
        answers=answers,
        position=position,
        clean_value=logit_difference(both[0, 0], both[0, 1]),
        corrupt_value=logit_difference(both[1, 0], both[1, 1]),
        answer_logits=both,
    )


def measure(model, p: Pair, x_final: np.ndarray) -> float:
    """The pair's metric on a final residual stream x_final (T, d) (after the last block)."""
    with one_blas_thread():
        return _measure(model, p, x_final)


def patch_value(model, p: Pair, edits: Sequence[Intervention]) -> float:
    """The metric after ``edits`` on the corrupted run, recomputed from the lowest edited layer on."""
    return _patched_metric(model, p, plan(model, p.corrupt.n_tokens, edits))


def patched_run(model, p: Pair, edits: Sequence[Intervention], *, logits: bool = True) -> Cache:
    """The corrupted run with ``edits``, every activation kept (below the first edit: the corrupted run's)."""
    start = plan(model, p.corrupt.n_tokens, edits).start
    return resume(model, p.corrupt, start, edits=edits, logits=logits)


# -- the patches, from the clean run --------------------------------------------------------------


def residual_patch(p: Pair, layer: int, position: int, site: str = "pre") -> SetResid:
    """The clean run's residual stream at (``site`` of ``layer``, ``position``)."""
    return SetResid(layer, site, _site(p.clean, site)[layer], (position,))


def head_patch(p: Pair, layer: int, head: int, positions: Sequence[int] | None = None) -> SetHead:
    """The clean run's output of query head ``head`` in ``layer`` (every position, or ``positions``)."""
    return SetHead(layer, head, p.clean.z[layer, :, head], None if positions is None else tuple(positions))


def mlp_patch(p: Pair, layer: int, positions: Sequence[int] | None = None) -> SetMLP:
    """The clean run's feed-forward output in ``layer`` (every position, or ``positions``)."""
    return SetMLP(layer, p.clean.mlp_out[layer], None if positions is None else tuple(positions))


def attention_of(model, c: Cache, layer: int) -> dict[str, np.ndarray]:
    """A run's attention in ``layer``: ``pattern`` (H, T, T), the keys ``k`` (T, H_kv, d_head) the
    scores read (after RoPE where the model rotates them) and the values ``v`` (T, H_kv, d_head).

    The forward's own hook points (its steps, on the residual stream entering the layer): the
    run's bits, so a patch of the run's own pattern, keys or values changes nothing.
    """
    n = block_names(layer)
    k = n.rot_k if model.arch.positions == "rope" else n.k
    _, kept = model.run_with_cache(None, names=[n.pattern, k, n.v], start_at_layer=layer,
                                   resid=np.array(c.resid[layer]), stop_at_layer=layer + 1)  # fmt: skip
    return {"pattern": kept[n.pattern], "k": kept[k], "v": kept[n.v]}


def pattern_patch(model, p: Pair, layer: int, head: int, positions: Sequence[int] | None = None):
    """The clean run's attention pattern of query head ``head`` in ``layer`` (every query, or
    ``positions``): a :class:`SetPattern`."""
    pattern = attention_of(model, p.clean, layer)["pattern"][head]
    return SetPattern(layer, head, pattern, None if positions is None else tuple(positions))


def kv_patch(model, p: Pair, layer: int, kv_head: int, which: str, positions: Sequence[int] | None = None):
    """The clean run's keys (``which`` "k") or values ("v") of KV head ``kv_head`` in ``layer``: a
    :class:`SetKV`."""
    value = attention_of(model, p.clean, layer)[which][:, kv_head]
    return SetKV(layer, kv_head, which, value, None if positions is None else tuple(positions))


# -- the sweeps -------------------------------------------------------------------------------


def residual_sweep(
    model,
    p: Pair,
    *,
    site: str = "pre",
    layers: Sequence[int] | None = None,
    positions: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Sweep:
    """Patch the residual stream at every (layer, position): values (layers, positions)."""
    site = checks.choice(site, checks.SITES, loc=("site",))
    rows = _layers(model, layers)
    cols = _positions(p, positions)
    clean, corrupt = _site(p.clean, site), _site(p.corrupt, site)

    def patches(layer: int, position: int):
        same = np.array_equal(clean[layer, position], corrupt[layer, position])
        return (None if same else [residual_patch(p, layer, position, site)])

    return _sweep(model, p, "residual", site, rows, cols, None, patches, progress, cancel)


def head_sweep(
    model,
    p: Pair,
    *,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
    positions: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Sweep:
    """Patch each query head's output (z, before W_O) at every (layer, head): values (layers, heads).

    ``positions``: patch each head's z there only (None: every position).
    """
    rows = _layers(model, layers)
    cols = tuple(checks.index(h, model.arch.n_head, loc=("heads", i), model=model.name, what="head")
                 for i, h in enumerate(range(model.arch.n_head) if heads is None else heads))  # fmt: skip
    where = checks.positions(positions, p.corrupt.n_tokens, loc=("positions",))
    at = slice(None) if where is None else list(where)

    def patches(layer: int, head: int):
        same = np.array_equal(p.clean.z[layer, at, head], p.corrupt.z[layer, at, head])
        return None if same else [head_patch(p, layer, head, where)]

    return _sweep(model, p, "heads", None, rows, cols, where, patches, progress, cancel)


def mlp_sweep(
    model,
    p: Pair,
    *,
    layers: Sequence[int] | None = None,
    per_position: bool = False,
    positions: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Sweep:
    """Patch each layer's feed-forward output: values (layers, 1), or (layers, positions) ``per_position``."""
    rows = _layers(model, layers)
    cols: tuple = _positions(p, positions) if per_position else (None,)

    def patches(layer: int, position: int | None):
        at = slice(None) if position is None else position
        same = np.array_equal(p.clean.mlp_out[layer, at], p.corrupt.mlp_out[layer, at])
        return None if same else [mlp_patch(p, layer, None if position is None else (position,))]

    return _sweep(model, p, "mlp", None, rows, cols, None, patches, progress, cancel)


def pattern_sweep(
    model,
    p: Pair,
    *,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Sweep:
    """Patch each query head's attention pattern (every query row) at every (layer, head): values (layers,
    heads). The values the head mixes stay the corrupted run's: only where it looks is the clean one's."""
    rows = _layers(model, layers)
    cols = tuple(checks.index(h, model.arch.n_head, loc=("heads", i), model=model.name, what="head")
                 for i, h in enumerate(range(model.arch.n_head) if heads is None else heads))  # fmt: skip
    kept: dict = {}

    def patches(layer: int, head: int):
        if layer not in kept:
            kept.clear()  # one layer's patterns at a time: (H, T, T) each, for both runs
            kept[layer] = (attention_of(model, p.clean, layer), attention_of(model, p.corrupt, layer))
        clean, corrupt = kept[layer]
        if np.array_equal(clean["pattern"][head], corrupt["pattern"][head]):
            return None
        return [SetPattern(layer, head, clean["pattern"][head])]

    return _sweep(model, p, "pattern", None, rows, cols, None, patches, progress, cancel)


def kv_sweep(
    model,
    p: Pair,
    which: str,
    *,
    layers: Sequence[int] | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> Sweep:
    """Patch each KV head's keys (``which`` "k") or values ("v") at every (layer, KV head): values
    (layers, KV heads). On a GQA model each patch reaches every query head of the KV head's group."""
    which = checks.choice(which, KV, loc=("which",))
    rows = _layers(model, layers)
    cols = tuple(range(model.arch.n_kv_head))
    kept: dict = {}

    def patches(layer: int, g: int):
        if layer not in kept:
            kept.clear()
            kept[layer] = (attention_of(model, p.clean, layer), attention_of(model, p.corrupt, layer))
        clean, corrupt = kept[layer]
        if np.array_equal(clean[which][:, g], corrupt[which][:, g]):
            return None
        return [SetKV(layer, g, which, clean[which][:, g])]

    return _sweep(model, p, "keys" if which == "k" else "values", None, rows, cols, None, patches, progress,
                  cancel)  # fmt: skip


# -- the work -----------------------------------------------------------------------------------


def _sweep(model, p: Pair, kind, site, rows, cols, where, patches, progress, cancel) -> Sweep:
    values = np.full((len(rows), len(cols)), np.nan)
    skipped = np.zeros(values.shape, dtype=bool)
    total, done = values.size, 0
    stop = cancel.is_set if isinstance(cancel, threading.Event) else cancel

    def result() -> Sweep:
        return Sweep(kind=kind, site=site, layers=rows, columns=cols, positions=where, values=values,
                     recovered=np.asarray(p.recovered(values)), skipped=skipped,
                     clean_value=p.clean_value, corrupt_value=p.corrupt_value, done=done)  # fmt: skip

    for i, layer in enumerate(rows):
        for j, col in enumerate(cols):
            if stop is not None and stop():
                raise Cancelled(result())
            edits = patches(layer, col)
            if edits is None:
                values[i, j], skipped[i, j] = p.corrupt_value, True
            else:
                values[i, j] = _patched_metric(model, p, plan(model, p.corrupt.n_tokens, edits))
            done += 1
            if progress is not None:
                progress(done, total)
    return result()


def _patched_metric(model, p: Pair, edits) -> float:
    with one_blas_thread():
        x = final_residual(model, p.corrupt.resid[edits.start], edits.start, edits)
        return _measure(model, p, x)


def _measure(model, p: Pair, x_final: np.ndarray) -> float:
    if p.metric == "cosine":
        return cosine(model.head(x_final), p.clean.pooled)
    a = _answer_logits(model, x_final, p.answers, p.position)
    return logit_difference(a[0], a[1])


def _answer_logits(model, x_final: np.ndarray, answers, position: int) -> np.ndarray:
    return model.answer_logits(x_final[position : position + 1], answers)[0]


def _site(c: Cache, site: str) -> np.ndarray:
    """(L, T, d): the residual stream at ``site`` of every layer."""
    return {"pre": c.resid[:-1], "mid": c.mid, "post": c.resid[1:]}[site]


def _layers(model, layers) -> tuple[int, ...]:
    chosen = range(model.arch.n_layer) if layers is None else layers
    return tuple(checks.index(v, model.arch.n_layer, loc=("layers", i), model=model.name, what="layer")
                 for i, v in enumerate(chosen))  # fmt: skip


def _positions(p: Pair, positions) -> tuple[int, ...]:
    n = p.corrupt.n_tokens
    chosen = range(n) if positions is None else positions
    return tuple(checks.position(v, n, loc=("positions", i)) for i, v in enumerate(chosen))
