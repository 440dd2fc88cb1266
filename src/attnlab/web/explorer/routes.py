"""The lab's JSON API: the explorer state in, everything the page draws out.

``POST /api/trace`` runs the engine once for the state and once for the
reference (q = [2, 1]), and returns the trace, the display strings, the words,
the comparison, the generated Python, the geometry and the challenge.
``POST /api/state`` takes the held example and the edits to apply (the page's
one state) and answers with everything both views draw: the held sequence and
the explorer's row, in one answer (:func:`state_answer`). ``GET /api/example``
returns the worked example and what "Reset example" restores. Display strings
are built in ``attnlab.lab.explorer.display``; this module only validates and serialises.
Errors are 422 with the field path (``q[0]``, ``values[1][0]``);
an engine ``FieldError`` is answered at its ``loc`` (``web.errors.field_error_detail``).
"""

from __future__ import annotations

from functools import cache

from fastapi import APIRouter
from pydantic import ValidationError

from attnlab.engine.errors import FieldError, relocate
from attnlab.engine.single import trace_query
from attnlab.lab.explorer.answer import explorer_answer
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.notebook.sequence import STARTING, Held, apply_edit, sequence_view
from attnlab.lab.notebook.stepper import stepper
from attnlab.web.errors import field_error_detail, validation_detail
from attnlab.web.explorer.schema import ErrorResponse, ExampleOut, LabState, TraceResponse
from attnlab.web.notebook.routes import StateRequest, held_in

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
            loc = ("edits", i, *err.loc[1:]) if err.loc[:1] == ("edit",) else err.loc
            raise type(err)(loc, relocate(str(err), err.loc, loc)) from None
    trace = new.explorer_trace()
    return {"sequence": sequence_view(new), "explorer": explorer_answer(trace), "stepper": stepper(trace)}


def answer_for(text: str) -> dict:
    """Answer one state given as JSON text: ``{"status", "body"}`` exactly as POST would.

    A message with a ``"held"`` member is a ``StateRequest`` (``POST /api/state``);
    any other is a ``LabState`` (``POST /api/trace``).
    """
    if '"held"' in text[:64]:
        try:
            body = StateRequest.model_validate_json(text)
            return {"status": 200, "body": state_answer(*_state_args(body))}
        except ValidationError as error:
            return {"status": 422, "body": {"detail": validation_detail(error.errors(), body=True)}}
        except FieldError as error:
            return {"status": 422, "body": {"detail": [field_error_detail(error)]}}
    try:
        state = LabState.model_validate_json(text)
        trace = trace_query(**state.engine_args())
    except ValidationError as error:  # deep or malformed JSON included: pydantic says json_invalid
        return {"status": 422, "body": {"detail": validation_detail(error.errors(), body=True)}}
    except FieldError as error:
        return {"status": 422, "body": {"detail": [field_error_detail(error)]}}
    return {"status": 200, "body": explorer_answer(trace)}


@router.post("/trace", response_model=TraceResponse, responses=ERRORS)
def post_trace(state: LabState) -> dict:
    """Trace one query over the sources and return everything the explorer draws.

    The engine's ``FieldError`` (e.g. ``keys[2]`` is too wide) escapes to
    ``field_error_handler``, which answers 422 at ``["body", *error.loc]``.
    """
    return explorer_answer(trace_query(**state.engine_args()))


def _state_args(body: StateRequest) -> tuple[Held, list[dict]]:
    return held_in(body.held), [e.model_dump(exclude_none=True) for e in body.edits]


@router.post("/state", responses=ERRORS)
def post_state(body: StateRequest) -> dict:
    """Apply one edit to the held example and return everything the page draws, in one answer.

    Body ``{"held": HeldIn, "edits": [EditIn, ...]}`` (the shapes of
    ``/api/notebook/edit``, 0 to 4 edits applied in order); answer
    ``{"sequence": sequence_view, "explorer": TraceResponse}`` (see
    :func:`state_answer`). Errors are 422 at the field: ``held.values[2][0]``,
    ``edits[0].q[1]``; a mask change that empties a row is ``mask_refused``.
    """
    return state_answer(*_state_args(body))


@router.get("/example", response_model=ExampleOut)
def get_example() -> dict:
    """Return the worked example, its answers and what Reset restores (see :func:`example_answer`)."""
    return example_answer()


@cache
def example_answer() -> dict:
    """Return the worked example (q = [2, 1] over A, B, C), its answer and what Reset restores.

    The page starts from this one answer: ``state`` and ``result`` are the
    explorer's, ``sequence`` and ``stepper`` the starting held example's (whose
    explorer row is the worked example, so ``result`` answers both).
    """
    state = {**WORKED.to_dict(), "allowed": [True] * len(WORKED.keys), "scale": None}
    start = state_answer(STARTING)
    return {
        "state": state,
        "reset": {"q": list(WORKED.q), "first_value_x": WORKED.values[0][0]},
        "result": explorer_answer(trace_query(**state)),
        "sequence": start["sequence"],
        "stepper": start["stepper"],
    }
