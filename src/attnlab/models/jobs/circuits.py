"""The circuits views' numbers as model-worker jobs (:class:`~.kinds.CircuitJob`): a text in, numbers out.

Each function here is called in the worker as ``function(model, say, check, job=id,
**arguments)`` (``CircuitJob.work``): it reads the text as the model does
(:mod:`attnlab.models.circuits.texts`), finds the text's run (or the two prompts' pair) among
those the worker keeps (:mod:`.kept`: run once, reused by the next view of the same text), and
returns the view's numbers as plain data (arrays, dataclasses of arrays, the tokens' texts); a
``Cache`` or ``Pair`` never crosses the pipe, and no words are made here: the lab words the numbers
in the server (:mod:`attnlab.lab.circuits.requests`), and the CLI and the widgets call these same
functions in their own process. A patching sweep reports ``say("running", total)`` and
``say("progress", done)`` after each patch and calls ``check()`` before each: there it makes way
for other learners' jobs, and once it is cancelled it raises :class:`~.kinds.Stopped` with its
partial numbers.

The server names them by :data:`FUNCTIONS` (``Jobs.circuit(model, FUNCTIONS["lens"], ...)``).
"""

from __future__ import annotations

import dataclasses

from attnlab.models.circuits import checks
from attnlab.models.circuits.ablation import ablate, layer_change, next_token_change
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.heads import head_reads, head_writes
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.patching import (
    Cancelled,
    head_sweep,
    kv_sweep,
    mlp_sweep,
    pattern_sweep,
    residual_sweep,
)
from attnlab.models.circuits.texts import answer_id, is_encoder, token_texts, tokenize
from attnlab.models.errors import Refusal
from attnlab.models.jobs.kept import cache_of, pair_of
from attnlab.models.jobs.kinds import Stopped

FUNCTIONS = {name: f"attnlab.models.jobs.circuits:{name}"
             for name in ("ablation", "attribution", "lens", "head", "patching")}  # fmt: skip
SWEEPS = ("residual", "heads", "mlp", "pattern", "keys", "values")  # what a patching sweep may patch
TOP = 5  # tokens shown before and after at each position (ablation), and a lens's top tokens
SOURCES = 5  # keys a head attends to most, each with the tokens its value promotes


def _text(model, ids, tokens) -> dict:
    return {"model": model.name, "path": model.path, "kind": model.kind, "ids": [int(i) for i in ids],
            "tokens": list(tokens)}  # fmt: skip


def ablation(model, say, check, *, job: str | None = None, text: str, heads: tuple, how: str,
             layer: int | None) -> dict:  # fmt: skip
    """``heads`` switched off (``how`` "zero" or "mean"): a decoder's next-token change at every position
    (with the texts of the tokens it names), an encoder's change leaving ``layer`` (default the last)."""
    ids, tokens = tokenize(model, text)
    say("running", 0)
    a = ablate(model, cache_of(model, ids), [(int(lay), int(h)) for lay, h in heads], how=how)
    out = _text(model, ids, tokens) | {"heads": a.heads, "how": how}
    if model.kind == "decoder":
        change = next_token_change(a, top=TOP)
        texts = token_texts(model, [*change["top_ids_before"].ravel(), *change["top_ids_after"].ravel()])
        return out | {"change": change, "texts": texts}
    return out | {"change": layer_change(a, model.arch.n_layer - 1 if layer is None else layer)}


def attribution(model, say, check, *, job: str | None = None, text: str, position: int,
                token: int | None) -> dict:  # fmt: skip
    """The logit of ``token`` (default the top token) at ``position`` as a sum of each component's term."""
    _decoder(model, "logit attribution")
    ids, tokens = tokenize(model, text)
    say("running", 0)
    a = logit_attribution(model, cache_of(model, ids), position, token)
    return _text(model, ids, tokens) | {"attribution": a, "texts": token_texts(model, [a.token])}


def lens(model, say, check, *, job: str | None = None, text: str, position: int, token: int | None) -> dict:
    """The logit lens at ``position``: each block's output read as the last (the full logits left out)."""
    _decoder(model, "logit lens")
    ids, tokens = tokenize(model, text)
    say("running", 0)
    found = logit_lens(model, cache_of(model, ids), position, top=TOP, token=token)
    texts = token_texts(model, [*found.top_ids.ravel(), found.answer, found.token])
    return _text(model, ids, tokens) | {"lens": dataclasses.replace(found, logits=None), "texts": texts}


def head(model, say, check, *, job: str | None = None, text: str, layer: int, head: int,
         position: int) -> dict:  # fmt: skip
    """What query head ``head`` of ``layer`` reads (any model) and writes (a decoder) at ``position``."""
    ids, tokens = tokenize(model, text)
    say("running", 0)
    cache = cache_of(model, ids)
    query = checks.position(position, cache.n_tokens, loc=("position",))
    reads = head_reads(model, cache, layer, head)
    writes = texts = None
    if model.kind == "decoder":
        writes = head_writes(model, cache, layer, head, query, sources=SOURCES, top=TOP)
        texts = token_texts(model, [*writes.promoted_ids.ravel(), *writes.written_ids])
    return _text(model, ids, tokens) | {"reads": reads, "writes": writes, "query": query, "texts": texts,
                                        "rotated": model.arch.positions == "rope"}  # fmt: skip


def patching(model, say, check, *, job: str | None = None, clean: str, corrupt: str, right: str | None,
             other: str | None, position: int, sweep: str, site: str, first_layer: int | None,
             last_layer: int | None, per_position: bool) -> dict:  # fmt: skip
    """One patching sweep of two prompts: its pair's metric and the sweep's values, with progress and
    Cancel (a cancelled sweep raises :class:`Stopped` with its partial numbers)."""
    sweep = checks.choice(sweep, SWEEPS, loc=("sweep",))
    clean_ids, clean_tokens = tokenize(model, clean, field="clean")
    corrupt_ids, corrupt_tokens = tokenize(model, corrupt, field="corrupt")
    if len(clean_ids) != len(corrupt_ids):
        raise Refusal(("corrupt",), "circuits.lengths_differ", len(clean_ids), len(corrupt_ids))
    layers = sweep_layers(model, first_layer, last_layer)
    answers = None
    if not is_encoder(model):
        answers = (answer_id(model, right, field="right"), answer_id(model, other, field="other"))
        if answers[0] == answers[1]:
            raise Refusal(("other",), "circuits.same_answers", answers[0])
    p = pair_of(model, clean_ids, corrupt_ids, answers=answers, position=position)
    total = patch_count(model, p.corrupt.n_tokens, sweep, layers, per_position)
    say("running", total)
    told = {"layers": layers, "progress": lambda done, _total: say("progress", done), "cancel": check}
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
    texts = token_texts(model, [*(answers or ())])
    out = {
        "model": model.name, "path": model.path, "kind": model.kind, "sweep": done, "total": total,
        "cancelled": cancelled, "site": site, "per_position": per_position,
        "n_head": model.arch.n_head, "n_kv_head": model.arch.n_kv_head,
        "pair": {"metric": p.metric, "clean_value": p.clean_value, "corrupt_value": p.corrupt_value,
                 "clean_ids": [int(i) for i in p.clean.ids], "corrupt_ids": [int(i) for i in p.corrupt.ids],
                 "answers": p.answers, "position": p.position},
        "clean_tokens": clean_tokens, "corrupt_tokens": corrupt_tokens,
        "answer_texts": None if answers is None else (right, other), "texts": texts,
    }  # fmt: skip
    if cancelled:
        raise Stopped(out)
    return out


patching.makes_way = True  # between two patches, another learner's job may run (models/jobs/work.py)
patching.stops = True  # cancelled, it stops before its next patch and keeps the partial sweep


def sweep_layers(model, first: int | None, last: int | None) -> list[int]:
    """Layers ``first``..``last`` (default: every layer), else a refusal at the one to fix."""
    n = model.arch.n_layer
    lo = 0 if first is None else checks.index(first, n, loc=("first_layer",), model=model.name, what="layer")
    hi = n - 1 if last is None else checks.index(last, n, loc=("last_layer",), model=model.name, what="layer")
    if hi < lo:
        raise Refusal(("last_layer",), "circuits.layers_reversed", lo, hi)
    return list(range(lo, hi + 1))


def patch_count(model, n_tokens: int, kind: str, layers, per_position: bool) -> int:
    """How many patches a sweep of ``kind`` over ``layers`` makes (its progress's total)."""
    a = model.arch
    columns = {"residual": n_tokens, "heads": a.n_head, "pattern": a.n_head, "keys": a.n_kv_head,
               "values": a.n_kv_head, "mlp": n_tokens if per_position else 1}[kind]  # fmt: skip
    return len(layers) * columns


def _decoder(model, what: str) -> None:
    if model.kind != "decoder":
        from attnlab.models import registry

        raise Refusal(("model",), "circuits.encoder_has_no", what, registry.title(model.name))
