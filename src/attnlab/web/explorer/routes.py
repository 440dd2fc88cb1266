"""The lab's JSON API: the page's one state in, everything the page draws out.

``POST /api/state`` is the page's one endpoint: the held example (its only
example: a sequence or one query, 1 to 8 sources) and the edits to apply to it
(a drag, a value, a mask cell, the row shown, Reset, a whole new example), and
it answers with everything the page draws in one answer
(:func:`attnlab.lab.explorer.state.state_answer`).
The drag socket ``/api/state/ws`` carries the same message and the same answer.
``GET /api/example`` is the page's first answer: the worked example's state
answer. ``POST /api/trace`` traces one stateless query over any
sources (up to the engine's limits), for scripts and the benchmarks; the page
does not use it. Display strings are built in ``attnlab.lab``; this module only
validates and serialises. Errors are 422 at the field (``held.values[2][0]``,
``edits[0].q[1]``); an engine ``FieldError`` is answered at its ``loc``
(``web.errors.field_error_detail``).

The two POSTs are the client's work, in its share of the server's time
(``attnlab.web.fairness``): run in a worker thread (the answer written there too),
or 429 with ``Retry-After`` for a client past its budget.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from attnlab.lab.explorer.state import example_answer
from attnlab.web import fairness
from attnlab.web.explorer.messages import state_body, trace_body
from attnlab.web.explorer.schema import ExampleOut, LabState, StateAnswer, StateRequest, TraceResponse
from attnlab.web.schema import errors

router = APIRouter(prefix="/api", tags=["lab"])

ERRORS = errors(413, 422, 429)


@router.post("/trace", response_model=TraceResponse, responses=ERRORS)
async def post_trace(state: LabState, request: Request) -> Response:
    """Trace one query over the sources and return everything the explorer draws.

    The engine's ``FieldError`` (e.g. ``keys[2]`` is too wide) escapes to
    ``field_error_handler``, which answers 422 at ``["body", *error.loc]``.
    """
    return await fairness.answer(request, trace_body, state)


@router.post("/state", response_model=StateAnswer, responses=ERRORS)
async def post_state(body: StateRequest, request: Request) -> Response:
    """Apply the edits to the held example and return everything the page draws, in one answer.

    Body ``{"held": HeldIn, "edits": [EditIn, ...]}`` (0 to 4 edits applied in
    order); answer ``{"sequence": sequence_view, "explorer": TraceResponse,
    "stepper": ...}`` (see :func:`state_answer`). Errors are 422 at the field: ``held.values[2][0]``,
    ``edits[0].q[1]``; a mask change that empties a row is ``mask_refused``.
    """
    return await fairness.answer(request, state_body, body)


@router.get("/example", response_model=ExampleOut)
def get_example() -> dict:
    """Return the page's first answer: the worked example's state answer."""
    return example_answer()
