"""A circuits request, once for every surface: its checks, its run (a job, or here), and its words.

The page's route, the ``attnlab`` command and the notebook widget ask the same five questions of a
model (``ablation``, ``attribution``, ``lens``, ``head``, ``patching``) through this module:

- :func:`arguments` checks a request's fields before anything runs, with what can be known without
  the model's weights (the text's tokens by the tokenizer alone, the heads, layers and positions
  against the model's shape, the two prompts' lengths, each answer's one token), and refuses at the
  field in the lab's words. Positions are counted from the end when negative (-1: the last token)
  and stored from the start, so equal requests share one job.
- :func:`start` queues the request in the model worker's line (the page; :func:`answer` is the job
  as the page polls it); :func:`here` runs it in this process (the command, the widget), with the
  same progress and Cancel.
- Either way the worker's function (:mod:`attnlab.models.jobs.circuits`) returns the numbers, and
  :func:`view` words them here (:mod:`.ablation`, :mod:`.attribution`, :mod:`.lens`, :mod:`.head`,
  :mod:`.patching`): the same JSON on every surface.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from attnlab.engine.errors import FieldError, field_text
from attnlab.lab.circuits.ablation import check_heads, layer_view, next_token_view, parse_heads
from attnlab.lab.circuits.attribution import attribution_view
from attnlab.lab.circuits.head import head_view
from attnlab.lab.circuits.lens import lens_view
from attnlab.lab.circuits.patching import KINDS, meaning, pair_view, sweep_view
from attnlab.lab.circuits.problems import (
    encoder_has_no,
    layers_reversed,
    lengths_differ,
    no_tokens,
    not_one_token,
    same_answer,
    unknown_choice,
)
from attnlab.lab.circuits.status import circuit_status
from attnlab.lab.fields import job_message
from attnlab.lab.realmodel.tokens import token_label
from attnlab.models import registry
from attnlab.models.circuits import checks
from attnlab.models.jobs import circuits as work
from attnlab.models.jobs.kinds import CircuitJob, Stopped
from attnlab.models.jobs.texts import check_model, check_text, check_tokens

REQUESTS = tuple(work.FUNCTIONS)  # ablation, attribution, lens, head, patching
KIND_OF = {function: kind for kind, function in work.FUNCTIONS.items()}
Progress = Callable[[int, int], None]


# -- the checks, once --------------------------------------------------------------------------


def _position(value: int, n_tokens: int) -> int:
    return checks.position(value, n_tokens, loc=("position",))


def _layer(spec, value: int | None, field: str) -> int | None:
    if value is None:
        return None
    return checks.index(value, spec.n_layer, loc=(field,), model=spec.name, what="layer")


def _text(spec, text: object, field: str = "text") -> int:
    """The text's token count, by the tokenizer alone; ``FieldError`` at ``field``: none, or over the cap."""
    check_text(text, field=field, max_chars=spec.max_chars)
    n = check_tokens(spec.name, text, field=field)
    if n == 0:
        raise FieldError((field,), no_tokens(spec.title))
    return n


def _decoder(spec, what: str) -> None:
    if not spec.generates:
        raise FieldError(("model",), encoder_has_no(what, spec.title))


def _answer(spec, text: object, field: str) -> str:
    """An answer of one token (by the tokenizer alone), else ``FieldError`` at ``field``."""
    if not isinstance(text, str) or not text:
        raise FieldError((field,), not_one_token("", [], spec.title))
    check_text(text if text.strip() else "x", field=field, max_chars=100)  # a lone space may be one token
    pieces = registry.token_strings(spec.name, text)
    if len(pieces) != 1:
        raise FieldError((field,), not_one_token(text, pieces, spec.title))
    return text


def arguments(kind: str, *, model: str, **fields) -> tuple[str, dict]:
    """The model's name and the worker function's arguments for request ``kind`` with the page's
    ``fields``, checked (see the module); ``FieldError`` at the field to fix."""
    spec = registry.spec(check_model(model))
    if kind == "ablation":
        _text(spec, fields["text"])
        heads = parse_heads(fields["heads"]) if isinstance(fields["heads"], str) else list(fields["heads"])
        check_heads(heads, model=spec.name, n_layer=spec.n_layer, n_head=spec.n_head)
        layer = None if spec.generates else _layer(spec, fields.get("layer"), "layer")
        how = checks.choice(fields.get("how", "zero"), checks.HOWS, loc=("how",))
        return spec.name, {
            "text": fields["text"],
            "heads": tuple(map(tuple, heads)),
            "how": how,
            "layer": layer,
        }
    if kind in ("attribution", "lens"):
        _decoder(spec, "logit attribution" if kind == "attribution" else "logit lens")
        n = _text(spec, fields["text"])
        return spec.name, {
            "text": fields["text"],
            "position": _position(fields.get("position", -1), n),
            "token": fields.get("token"),
        }
    if kind == "head":
        n = _text(spec, fields["text"])
        layer = _layer(spec, fields["layer"], "layer")
        head = checks.index(fields["head"], spec.n_head, loc=("head",), model=spec.name, what="head")
        return spec.name, {
            "text": fields["text"],
            "layer": layer,
            "head": head,
            "position": _position(fields.get("position", -1), n),
        }
    if kind == "patching":
        sweep = fields.get("sweep", "residual")
        if sweep not in KINDS:
            raise FieldError(("sweep",), unknown_choice(sweep, KINDS))
        site = checks.choice(fields.get("site", "pre"), checks.SITES, loc=("site",))
        n_clean = _text(spec, fields["clean"], "clean")
        n_corrupt = _text(spec, fields["corrupt"], "corrupt")
        if n_clean != n_corrupt:
            raise FieldError(("corrupt",), lengths_differ(n_clean, n_corrupt))
        right = other = None
        if spec.generates:
            right, other = (
                _answer(spec, fields.get("right"), "right"),
                _answer(spec, fields.get("other"), "other"),
            )
            if right == other:
                raise FieldError(("other",), same_answer(token_label(right)["label"]))
        first, last = (
            _layer(spec, fields.get("first_layer"), "first_layer"),
            _layer(spec, fields.get("last_layer"), "last_layer"),
        )
        if first is not None and last is not None and last < first:
            raise FieldError(("last_layer",), layers_reversed(first, last))
        return spec.name, {
            "clean": fields["clean"],
            "corrupt": fields["corrupt"],
            "right": right,
            "other": other,
            "position": _position(fields.get("position", -1), n_clean) if spec.generates else -1,
            "sweep": sweep,
            "site": site,
            "first_layer": first,
            "last_layer": last,
            "per_position": bool(fields.get("per_position", False)),
        }
    raise FieldError(("kind",), unknown_choice(kind, REQUESTS))


# -- the run: a job in the line, or here -------------------------------------------------------


def start(jobs, kind: str, *, model: str, **fields) -> CircuitJob:
    """Queue (or join) request ``kind`` in the model worker's line (the page; ``jobs``: its client's)."""
    name, args = arguments(kind, model=model, **fields)
    return jobs.circuit(name, work.FUNCTIONS[kind], tuple(sorted(args.items())))


def here(
    kind: str,
    *,
    model: str,
    weights: str = "auto",
    progress: Progress | None = None,
    cancel: threading.Event | Callable[[], bool] | None = None,
    **fields,
) -> tuple[dict, bool]:
    """Request ``kind`` run in this process (the command, the widget): ``(view, cancelled)``.

    ``progress(done, total)`` after each patch of a sweep; ``cancel`` (an Event, or a callable that
    says True) stops a sweep before its next patch, and the view is then the partial sweep.
    """
    name, args = arguments(kind, model=model, **fields)
    m = registry.get_model(name, weights)
    told = {"total": 0}

    def say(what: str, *payload) -> None:
        if what == "running":
            told["total"] = payload[0]
        elif what == "progress" and progress is not None:
            progress(payload[0], told["total"])

    stop = cancel.is_set if isinstance(cancel, threading.Event) else cancel

    def check() -> bool:  # the worker's Check: True stops a sweep before its next patch, its cells kept
        return stop is not None and bool(stop())

    try:
        numbers = getattr(work, kind)(m, say, check, **args)
    except Stopped as stopped:
        if stopped.result is None:
            raise
        return view(kind, stopped.result), True
    return view(kind, numbers), False


# -- the words -------------------------------------------------------------------------------------


def program_source(numbers: dict, corrupt_ids=None) -> dict:
    """What "How is this computed?" needs besides a number's descriptor (``POST /api/models/program``):
    the model, the token ids (and a patch's corrupted prompt's), their texts, the path the numbers ran on."""
    out = {
        "model": numbers["model"],
        "ids": list(numbers["ids"]),
        "tokens": list(numbers["tokens"]),
        "path": numbers["path"],
    }
    if corrupt_ids is not None:
        out["corrupt_ids"] = [int(i) for i in corrupt_ids]
    return out


def view(kind: str, n: dict, *, job: str | None = None) -> dict:
    """The JSON the page, the command and the widget show for request ``kind``'s numbers ``n``."""
    if kind == "patching":
        return _patching(n, job)
    source = {"program_source": program_source(n)}
    tokens = n["tokens"]
    if kind == "ablation":
        if n["kind"] == "decoder":
            return (
                next_token_view(
                    n["change"], heads=n["heads"], how=n["how"], tokens=tokens, texts=n["texts"], job=job
                )
                | source
            )
        return layer_view(n["change"], heads=n["heads"], how=n["how"], tokens=tokens, job=job) | source
    if kind == "attribution":
        a = n["attribution"]
        return (
            attribution_view(a, tokens=tokens, token_text=n["texts"][a.token], path=n["path"], job=job)
            | source
        )
    if kind == "lens":
        return lens_view(n["lens"], tokens=tokens, texts=n["texts"], job=job) | source
    if kind == "head":
        return (
            head_view(
                n["reads"],
                n["writes"],
                query=n["query"],
                tokens=tokens,
                texts=n["texts"],
                rotated=n["rotated"],
                job=job,
            )
            | source
        )
    raise ValueError(kind)


def _patching(n: dict, job: str | None) -> dict:
    p = n["pair"]
    answers = n["answer_texts"]
    if answers is None and p["answers"] is not None:
        answers = (n["texts"][p["answers"][0]], n["texts"][p["answers"][1]])
    sweep = n["sweep"]
    group = n["n_head"] // n["n_kv_head"]
    kv_heads = (
        [h // group for h in range(n["n_head"])] if group > 1 or sweep.kind in ("keys", "values") else None
    )
    return {
        "model": n["model"],
        "meaning": meaning(
            sweep.kind, n["site"], decoder=n["kind"] == "decoder", per_position=n["per_position"]
        ),
        "pair": pair_view(
            metric=p["metric"],
            clean_value=p["clean_value"],
            corrupt_value=p["corrupt_value"],
            clean_ids=p["clean_ids"],
            corrupt_ids=p["corrupt_ids"],
            clean_tokens=n["clean_tokens"],
            corrupt_tokens=n["corrupt_tokens"],
            answers=answers,
            position=p["position"],
            answer_ids=p["answers"],
        ),
        "sweep": sweep_view(
            sweep,
            total=n["total"],
            cancelled=n["cancelled"],
            metric=p["metric"],
            clean_tokens=n["clean_tokens"],
            kv_heads=kv_heads,
            position=p["position"],
            answer_ids=p["answers"],
            job=job,
        ),
        "program_source": program_source(
            {"model": n["model"], "ids": p["clean_ids"], "tokens": n["clean_tokens"], "path": n["path"]},
            p["corrupt_ids"],
        ),
    }


# -- a job as the page polls it --------------------------------------------------------------------

_WORDED: OrderedDict[tuple[str, str], dict] = OrderedDict()  # (job id, status) -> its view, worded once
_KEEP = 32
_lock = threading.Lock()


def answer(jobs, job: CircuitJob) -> dict:
    """A circuits job as the page polls it: status, place, progress and their words; then its view."""
    kind = KIND_OF[job.function]
    place = jobs.place(job)
    message = job_message(job.loc, job.message) if job.status == "error" else job.message
    words = circuit_status(
        kind=kind,
        status=job.status,
        title=registry.title(job.model),
        place=place,
        done=job.done_count,
        total=job.total,
        has_result=job.result is not None,
        message=message,
        cancel_asked=job.cancel_asked,
    )
    result = None
    if job.status in ("done", "cancelled") and job.result is not None:
        key = (job.id, job.status)
        with _lock:
            result = _WORDED.get(key)
        if result is None:
            result = view(kind, job.result, job=job.id)
            with _lock:
                _WORDED[key] = result
                while len(_WORDED) > _KEEP:
                    _WORDED.popitem(last=False)
    return {
        "id": job.id,
        "kind": kind,
        "model": job.model,
        "status": job.status,
        "place": place,
        "done": job.done_count,
        "total": job.total,
        "cancel_asked": job.cancel_asked,
        "message": message,
        "field": None if job.loc is None else field_text(job.loc),
        **words,
        "result": result,
    }
