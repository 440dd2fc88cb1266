"""A state or a trace, answered as JSON bytes: for the POST routes and their drag sockets alike.

``trace_body(state)`` and ``state_body(request)`` are ``POST /api/trace`` and ``POST
/api/state`` once FastAPI has read the body: the lab's answer written as FastAPI writes
a route's response model (validated, then dumped by pydantic), in the worker thread
that computed it, so the event loop never serialises a large answer.

``reply(text, kind)`` answers a socket's message (JSON text) as its POST would:
``(200, body)`` or ``(422, {"detail": [...]})``. The text is read as FastAPI reads a
body (Python's ``json``, then the model), so every refusal is the POST's own: a lone
surrogate at its field (``string_unicode``), an over-long integer at its field
(``number_too_long``), JSON nested too deeply (``json_too_deep``), bad JSON
(``json_invalid``). ``answer_state`` and ``answer_trace`` give the same as
``{"status", "body"}`` objects.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel, TypeAdapter, ValidationError

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.state import state_answer
from attnlab.web.errors import field_error_detail, model_limits, unreadable_json_detail, validation_detail
from attnlab.web.explorer.schema import LabState, StateAnswer, StateRequest, TraceResponse

MAX_MESSAGE_CHARS = 512 * 1024
_TRACE_OUT = TypeAdapter(TraceResponse)
_STATE_OUT = TypeAdapter(StateAnswer)


def _dump(adapter: TypeAdapter, answer: dict) -> bytes:
    # what FastAPI does with a route's return value and its response_model
    return adapter.dump_json(adapter.validate_python(answer, from_attributes=True), by_alias=True)


def trace_body(state: LabState) -> bytes:
    """``POST /api/trace``'s answer to a read ``LabState``, as JSON bytes."""
    return _dump(_TRACE_OUT, explorer_answer(trace_query(**state.engine_args())))


def state_body(request: StateRequest) -> bytes:
    """``POST /api/state``'s answer to a read ``StateRequest``, as JSON bytes."""
    return _dump(_STATE_OUT, state_answer(*request.args()))


KINDS: dict[str, tuple[type[BaseModel], Callable[..., bytes], str]] = {
    "state": (StateRequest, state_body, "held"),  # the model read, its answer, the shape of its names
    "trace": (LabState, trace_body, "explorer"),
}


def reply(text: str, kind: str) -> tuple[int, bytes]:
    """Answer one message of ``kind`` ("state" or "trace"): (status, the body's JSON bytes)."""
    model, body, shape = KINDS[kind]
    try:
        sent = json.loads(text)
    except (ValueError, RecursionError) as error:  # as FastAPI's reading of a POST body fails
        detail = unreadable_json_detail(error, text.encode("utf-8", "surrogatepass"), shape=shape)
        return 422, _errors([detail])
    try:
        return 200, body(model.model_validate(sent, from_attributes=True))  # as FastAPI validates a body
    except ValidationError as error:
        detail = validation_detail(
            error.errors(), body=True, shape=shape, request_body=sent, limits=model_limits(model)
        )
    except FieldError as error:
        detail = [field_error_detail(error, shape=shape, request_body=sent)]
    return 422, _errors(detail)


def _errors(detail: list[dict]) -> bytes:
    return json.dumps({"detail": detail}).encode()


def answer_state(text: str) -> dict:
    """Answer one ``StateRequest`` given as JSON text: ``{"status", "body"}`` exactly as
    ``POST /api/state`` would (the drag socket ``/api/state/ws``)."""
    status, body = reply(text, "state")
    return {"status": status, "body": json.loads(body)}


def answer_trace(text: str) -> dict:
    """Answer one ``LabState`` given as JSON text exactly as ``POST /api/trace`` would."""
    status, body = reply(text, "trace")
    return {"status": status, "body": json.loads(body)}
