"""A state or a trace given as JSON text, answered as its POST would be: for the drag sockets.

``answer_state(text)`` is ``POST /api/state`` and ``answer_trace(text)`` is
``POST /api/trace``, each as ``{"status": 200, "body": ...}`` or
``{"status": 422, "body": ErrorResponse}``: the same validation and the same
lab functions, so a socket's answers equal the POSTs'.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel, ValidationError

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.state import state_answer
from attnlab.web.errors import field_error_detail, validation_detail
from attnlab.web.explorer.schema import LabState, StateRequest

MAX_MESSAGE_CHARS = 512 * 1024


def _answer(text: str, model: type[BaseModel], answer: Callable[[BaseModel], dict], shape: str) -> dict:
    try:
        return {"status": 200, "body": answer(model.model_validate_json(text))}
    except (ValidationError, FieldError) as error:
        try:  # the request as sent, for the names the learner gave (an own example's sources)
            sent = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, an over-long integer, nested too deep
            sent = None
        if isinstance(error, ValidationError):  # deep or malformed JSON included: json_invalid
            detail = validation_detail(error.errors(), body=True, shape=shape, request_body=sent)
        else:
            detail = [field_error_detail(error, shape=shape, request_body=sent)]
        return {"status": 422, "body": {"detail": detail}}


def answer_state(text: str) -> dict:
    """Answer one ``StateRequest`` given as JSON text: ``{"status", "body"}`` exactly as
    ``POST /api/state`` would (the drag socket ``/api/state/ws``)."""
    return _answer(text, StateRequest, lambda body: state_answer(*body.args()), "held")


def answer_trace(text: str) -> dict:
    """Answer one ``LabState`` given as JSON text exactly as ``POST /api/trace`` would."""
    return _answer(text, LabState, lambda s: explorer_answer(trace_query(**s.engine_args())), "explorer")
