"""A circuits request, from the page's fields to a job in the line, and a job's answer.

:func:`start` checks what can be checked without the model (the text's tokens by the
tokenizer alone, the heads, layers and positions against the model's shape, the two
prompts' lengths, each answer's one token) and refuses with ``FieldError`` at the field, in
the lab's words, before anything is queued; then it hands the request to the job line
(``Jobs.circuit``) as one of :data:`.work.FUNCTIONS`. Positions are counted from the end
when negative (-1: the last token) and stored from the start, so the same request shares
one job. :func:`answer` is a job's JSON: its status line (``lab/circuits/status``) and,
once done (or cancelled with a partial sweep), the view.
"""

from __future__ import annotations

from attnlab.engine.errors import FieldError, field_text
from attnlab.lab.circuits.ablation import check_heads, parse_heads
from attnlab.lab.circuits.problems import (
    encoder_has_no,
    layers_reversed,
    lengths_differ,
    no_tokens,
    not_one_token,
    same_answer,
)
from attnlab.lab.circuits.status import circuit_status
from attnlab.lab.fields import job_message
from attnlab.lab.realmodel.tokens import token_label
from attnlab.models import registry
from attnlab.models.circuits import checks
from attnlab.models.jobs.circuits import FUNCTIONS
from attnlab.models.jobs.kinds import CircuitJob
from attnlab.models.jobs.texts import check_model, check_text, check_tokens

KIND_OF = {function: kind for kind, function in FUNCTIONS.items()}


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
        raise FieldError((field,), not_one_token(text, [token_label(p)["label"] for p in pieces], spec.title))
    return text


def start(jobs, kind: str, *, model: str, **fields) -> CircuitJob:
    """Queue (or join) the circuits job ``kind`` of :data:`.work.FUNCTIONS` for the page's ``fields``."""
    spec = registry.spec(check_model(model))
    arguments: dict = {}
    if kind == "ablation":
        n = _text(spec, fields["text"])
        heads = parse_heads(fields["heads"])
        check_heads(heads, model=spec.name, n_layer=spec.n_layer, n_head=spec.n_head)
        layer = None if spec.generates else _layer(spec, fields.get("layer"), "layer")
        arguments = {"text": fields["text"], "heads": tuple(heads), "how": fields["how"], "layer": layer}
    elif kind in ("attribution", "lens"):
        _decoder(spec, "logit attribution" if kind == "attribution" else "logit lens")
        n = _text(spec, fields["text"])
        arguments = {"text": fields["text"], "position": _position(fields["position"], n), "token": None}
    elif kind == "head":
        n = _text(spec, fields["text"])
        layer = _layer(spec, fields["layer"], "layer")
        head = checks.index(fields["head"], spec.n_head, loc=("head",), model=spec.name, what="head")
        arguments = {"text": fields["text"], "layer": layer, "head": head,
                     "position": _position(fields["position"], n)}  # fmt: skip
    elif kind == "patching":
        n_clean = _text(spec, fields["clean"], "clean")
        n_corrupt = _text(spec, fields["corrupt"], "corrupt")
        if n_clean != n_corrupt:
            raise FieldError(("corrupt",), lengths_differ(n_clean, n_corrupt))
        right = other = None
        if spec.generates:
            right, other = _answer(spec, fields["right"], "right"), _answer(spec, fields["other"], "other")
            if right == other:
                raise FieldError(("other",), same_answer(token_label(right)["label"]))
        first, last = _layer(spec, fields.get("first_layer"), "first_layer"), _layer(
            spec, fields.get("last_layer"), "last_layer")  # fmt: skip
        arguments = {
            "clean": fields["clean"], "corrupt": fields["corrupt"], "right": right, "other": other,
            "position": _position(fields.get("position", -1), n_clean) if spec.generates else -1,
            "sweep": fields["sweep"], "site": fields["site"], "first_layer": first, "last_layer": last,
            "per_position": bool(fields.get("per_position", False)),
        }  # fmt: skip
        if first is not None and last is not None and last < first:
            raise FieldError(("last_layer",), layers_reversed(first, last))
    else:  # pragma: no cover - the routes name only these kinds
        raise ValueError(kind)
    return jobs.circuit(spec.name, FUNCTIONS[kind], tuple(sorted(arguments.items())))


def answer(jobs, job: CircuitJob) -> dict:
    """A circuits job as the page polls it: status, place, progress and their words; then its view."""
    kind = KIND_OF[job.function]
    place = jobs.place(job)
    message = job_message(job.loc, job.message) if job.status == "error" else job.message
    words = circuit_status(
        kind=kind, status=job.status, title=registry.title(job.model), place=place, done=job.done_count,
        total=job.total, has_result=job.result is not None, message=message, cancel_asked=job.cancel_asked,
    )  # fmt: skip
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
        "result": job.result if job.status in ("done", "cancelled") else None,
    }

