"""The lab's JSON API: the page's one state in, everything the page draws out.

``POST /api/state`` is the page's one endpoint: the held example (its only
example: a sequence or one query, 1 to 8 sources) and the edits to apply to it
(a drag, a value, a mask cell, the row shown, Reset, a whole new example), and
it answers with everything the page draws in one answer (:func:`state_answer`).
The drag socket ``/api/state/ws`` carries the same message and the same answer.
``GET /api/example`` is the page's first answer: the worked example's state
answer. ``POST /api/trace`` traces one stateless query over any
sources (up to the engine's limits), for scripts and the benchmarks; the page
does not use it. Display strings are built in ``attnlab.lab``; this module only
validates and serialises. Errors are 422 at the field (``held.values[2][0]``,
``edits[0].q[1]``); an engine ``FieldError`` is answered at its ``loc``
(``web.errors.field_error_detail``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from fastapi import APIRouter
from pydantic import BaseModel, ValidationError

from attnlab.engine.errors import FieldError
from attnlab.engine.single import trace_query
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.notebook.sequence import STARTING, Held, apply_edit, sequence_view
from attnlab.lab.notebook.stepper import stepper
from attnlab.web.errors import field_error_detail, validation_detail
from attnlab.web.explorer.schema import (
    ErrorResponse,
    ExampleOut,
    LabState,
    StateAnswer,
    StateRequest,
    TraceResponse,
)

router = APIRouter(prefix="/api", tags=["lab"])

ERRORS = {
    413: {"model": ErrorResponse, "description": "The request body is too large"},
    422: {"model": ErrorResponse, "description": "A field the learner has to fix"},
}

MAX_MESSAGE_CHARS = 512 * 1024


def state_answer(held: Held, edits: list[dict] = ()) -> dict:
    """Apply ``edits`` in order to the held example and answer with everything both views draw.

    ``{"sequence": sequence_view(new held), "explorer": explorer_answer(explorer row's trace),
    "stepper": stepper(explorer row's trace)}``: the notebook's held table, summaries and
    explorer row label come from ``sequence``; the explorer's trace, display strings, words,
    comparison, Python, geometry and challenge from ``explorer``; the stepper's four steps
    from ``stepper``. One request per state, and no view asks for a second.
    """
    new = held
    for i, edit in enumerate(edits):
        try:
            new = apply_edit(new, edit)
        except FieldError as err:  # located at edit.q[1]: say which of the edits
            raise err.rebased(("edit",), ("edits", i)) from None
    trace = new.explorer_trace()
    return {"sequence": sequence_view(new), "explorer": explorer_answer(trace), "stepper": stepper(trace)}


def _answer(text: str, model: type[BaseModel], answer: Callable[[BaseModel], dict]) -> dict:
    try:
        return {"status": 200, "body": answer(model.model_validate_json(text))}
    except ValidationError as error:  # deep or malformed JSON included: pydantic says json_invalid
        return {"status": 422, "body": {"detail": validation_detail(error.errors(), body=True)}}
    except FieldError as error:
        return {"status": 422, "body": {"detail": [field_error_detail(error)]}}


def answer_state(text: str) -> dict:
    """Answer one ``StateRequest`` given as JSON text: ``{"status", "body"}`` exactly as
    ``POST /api/state`` would (the drag socket ``/api/state/ws``)."""
    return _answer(text, StateRequest, lambda body: state_answer(*body.args()))


def answer_trace(text: str) -> dict:
    """Answer one ``LabState`` given as JSON text exactly as ``POST /api/trace`` would."""
    return _answer(text, LabState, lambda state: explorer_answer(trace_query(**state.engine_args())))


@router.post("/trace", response_model=TraceResponse, responses=ERRORS)
def post_trace(state: LabState) -> dict:
    """Trace one query over the sources and return everything the explorer draws.

    The engine's ``FieldError`` (e.g. ``keys[2]`` is too wide) escapes to
    ``field_error_handler``, which answers 422 at ``["body", *error.loc]``.
    """
    return explorer_answer(trace_query(**state.engine_args()))


@router.post("/state", response_model=StateAnswer, responses=ERRORS)
def post_state(body: StateRequest) -> dict:
    """Apply the edits to the held example and return everything the page draws, in one answer.

    Body ``{"held": HeldIn, "edits": [EditIn, ...]}`` (0 to 4 edits applied in
    order); answer ``{"sequence": sequence_view, "explorer": TraceResponse,
    "stepper": ...}`` (see :func:`state_answer`). Errors are 422 at the field: ``held.values[2][0]``,
    ``edits[0].q[1]``; a mask change that empties a row is ``mask_refused``.
    """
    return state_answer(*body.args())


@router.get("/example", response_model=ExampleOut)
def get_example() -> dict:
    """Return the page's first answer: the worked example's state answer."""
    return example_answer()


@cache
def example_answer() -> dict:
    """Return the worked A/B/C sequence's state answer (its explorer row is q = [2, 1]).

    The page starts from this one answer; the worked example is declared once
    (``lab.explorer.examples``) and reaches the page only here, as
    ``sequence.example``: the page's Reset and "Load the worked example" are edits.
    """
    return state_answer(STARTING)
