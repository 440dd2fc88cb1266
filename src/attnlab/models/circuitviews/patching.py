"""Activation patching as the page shows it: one sweep over a pair of prompts, with progress and Cancel.

:func:`patching_view` runs a sweep (``models/circuits/patching``: the residual stream at
every (layer, token), each query head's output, or each MLP's) on a :class:`Pair` and
answers what a patch means, the two runs' metric and the map of fractions recovered, in the
lab's words (``lab/circuits/patching``). ``progress(done, total)`` is called after each
patch; ``cancel`` (an Event, or a callable returning True) stops the sweep between patches,
and the answer is then the partial sweep (``sweep.cancelled``: the cells not done are blank).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.patching import KINDS, meaning, pair_view, sweep_view
from attnlab.lab.circuits.problems import layers_reversed, unknown_choice
from attnlab.models.circuits import checks
from attnlab.models.circuits.patching import (
    Cancelled,
    Pair,
    head_sweep,
    kv_sweep,
    mlp_sweep,
    pattern_sweep,
    residual_sweep,
)
from attnlab.models.circuitviews.texts import program_source, token_texts


def sweep_layers(model, first: int | None, last: int | None) -> list[int]:
    """Layers ``first``..``last`` (default: every layer), else ``FieldError`` at the one to fix."""
    n = model.arch.n_layer
    lo = 0 if first is None else checks.index(first, n, loc=("first_layer",), model=model.name, what="layer")
    hi = n - 1 if last is None else checks.index(last, n, loc=("last_layer",), model=model.name, what="layer")
    if hi < lo:
        raise FieldError(("last_layer",), layers_reversed(lo, hi))
    return list(range(lo, hi + 1))


def patch_count(model, p: Pair, kind: str, layers: Sequence[int], per_position: bool) -> int:
    """How many patches a sweep of ``kind`` over ``layers`` makes (its progress's total)."""
    a = model.arch
    columns = {"residual": p.corrupt.n_tokens, "heads": a.n_head, "pattern": a.n_head, "keys": a.n_kv_head,
               "values": a.n_kv_head, "mlp": p.corrupt.n_tokens if per_position else 1}[kind]  # fmt: skip
    return len(layers) * columns


def patching_view(model, p: Pair, *, sweep: str = "residual", site: str = "pre",
                  layers: Sequence[int] | None = None, per_position: bool = False,
                  progress: Callable[[int, int], None] | None = None, cancel=None,
                  answers: tuple[str, str] | None = None, job: str | None = None) -> dict:  # fmt: skip
    """JSON-ready: ``sweep`` ("residual", "heads", "mlp", "pattern", "keys" or "values") of pair ``p``
    over ``layers`` (default all).

    ``site``: where a residual patch goes ("pre", "mid", "post"); ``per_position``: MLP patches
    token by token (else each layer's whole output); ``answers``: the two answer tokens' texts
    (decoder; default the model's labels of ``p.answers``).
    """
    if sweep not in KINDS:
        raise FieldError(("sweep",), unknown_choice(sweep, KINDS))
    layers = list(range(model.arch.n_layer)) if layers is None else list(layers)
    total = patch_count(model, p, sweep, layers, per_position)
    told = {"layers": layers, "progress": progress, "cancel": cancel}
    run = {
        "residual": lambda: residual_sweep(model, p, site=site, **told),
        "heads": lambda: head_sweep(model, p, **told),
        "mlp": lambda: mlp_sweep(model, p, per_position=per_position, **told),
        "pattern": lambda: pattern_sweep(model, p, **told),
        "keys": lambda: kv_sweep(model, p, "k", **told),
        "values": lambda: kv_sweep(model, p, "v", **told),
    }[sweep]
    cancelled = False
    try:
        done = run()
    except Cancelled as stop:
        done, cancelled = stop.sweep, True
    texts = token_texts(model, [*p.clean.ids, *p.corrupt.ids, *(p.answers or ())])
    clean_tokens = [texts[int(i)] for i in p.clean.ids]
    corrupt_tokens = [texts[int(i)] for i in p.corrupt.ids]
    if answers is None and p.answers is not None:
        answers = (texts[p.answers[0]], texts[p.answers[1]])
    group = model.arch.n_head // model.arch.n_kv_head
    return {
        "model": model.name,
        "meaning": meaning(sweep, site, decoder=model.kind == "decoder", per_position=per_position),
        "pair": pair_view(
            metric=p.metric, clean_value=p.clean_value, corrupt_value=p.corrupt_value,
            clean_ids=p.clean.ids, corrupt_ids=p.corrupt.ids, clean_tokens=clean_tokens,
            corrupt_tokens=corrupt_tokens, answers=answers, position=p.position, answer_ids=p.answers,
        ),  # fmt: skip
        "sweep": sweep_view(
            done, total=total, cancelled=cancelled, metric=p.metric, clean_tokens=clean_tokens,
            kv_heads=[h // group for h in range(model.arch.n_head)]
            if group > 1 or sweep in ("keys", "values") else None, position=p.position,
            answer_ids=p.answers, job=job,
        ),  # fmt: skip
        "program_source": program_source(model, p.clean.ids, clean_tokens, p.corrupt.ids),
    }
