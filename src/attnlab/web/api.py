"""The lab's JSON API: the explorer state in, everything the page draws out.

``POST /api/trace`` runs the engine once for the state and once for the
reference (q = [2, 1]), and returns the trace, the display strings, the words,
the comparison, the generated Python, the geometry and the challenge.
``POST /api/state`` takes the held example and the edits to apply (the page's
one state) and answers with everything both views draw: the held sequence and
the explorer's row, in one answer (:func:`state_answer`). ``GET /api/example``
returns the worked example and what "Reset example" restores. Display strings
are built in ``attnlab.lab.display``; this module only validates and serialises.
Errors are 422 with the field path (``q[0]``, ``values[1][0]``);
an engine ``FieldError`` is answered at its ``loc`` (``web.errors.field_error_detail``).
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import ValidationError

from attnlab.engine.errors import FieldError, relocate
from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab.challenge import check
from attnlab.lab.display import comparison as display_comparison
from attnlab.lab.display import display_strings
from attnlab.lab.examples import WORKED
from attnlab.lab.geometry import geometry
from attnlab.lab.python_code import to_python
from attnlab.lab.sequence import Held, apply_edit, sequence_view
from attnlab.lab.words import explain
from attnlab.web.api_notebook import StateRequest, held_in
from attnlab.web.errors import field_error_detail, validation_detail
from attnlab.web.schema import ErrorResponse, ExampleOut, LabState, TraceResponse

router = APIRouter(prefix="/api", tags=["lab"])

ERRORS = {
    413: {"model": ErrorResponse, "description": "The request body is too large"},
    422: {"model": ErrorResponse, "description": "A field the learner has to fix"},
}

def build_response(trace: QueryTrace) -> dict:
    """Return the full answer for one trace (the shape of ``TraceResponse``)."""
    comparison, reference = display_comparison(trace)
    return {
        "trace": trace.to_dict(),
        "display": display_strings(trace),
        "words": explain(trace).to_dict(),
        "compare": comparison,
        "python": to_python(trace),
        "geometry": geometry(trace, reference=reference),
        "challenge": check(trace).to_dict(),
    }


MAX_MESSAGE_CHARS = 512 * 1024


def state_answer(held: Held, edits: list[dict] = ()) -> dict:
    """Apply ``edits`` in order to the held example and answer with everything both views draw.

    ``{"sequence": sequence_view(new held), "explorer": build_response(explorer row's trace)}``:
    the notebook's held table, summaries and explorer row label come from
    ``sequence``; the explorer's trace, display strings, words, comparison,
    Python, geometry and challenge from ``explorer``. One request per state.
    """
    new = held
    for i, edit in enumerate(edits):
        try:
            new = apply_edit(new, edit)
        except FieldError as err:  # located at edit.q[1]: say which of the edits
            loc = ("edits", i, *err.loc[1:]) if err.loc[:1] == ("edit",) else err.loc
            raise type(err)(loc, relocate(str(err), err.loc, loc)) from None
    return {"sequence": sequence_view(new), "explorer": build_response(new.explorer_trace())}


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
    return {"status": 200, "body": build_response(trace)}


@router.post("/trace", response_model=TraceResponse, responses=ERRORS)
def post_trace(state: LabState) -> dict:
    """Trace one query over the sources and return everything the explorer draws.

    The engine's ``FieldError`` (e.g. ``keys[2]`` is too wide) escapes to
    ``field_error_handler``, which answers 422 at ``["body", *error.loc]``.
    """
    return build_response(trace_query(**state.engine_args()))


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
    """Return the worked example (q = [2, 1] over A, B, C), its answer and what Reset restores."""
    state = {**WORKED.to_dict(), "allowed": [True] * len(WORKED.keys), "scale": None}
    return {
        "state": state,
        "reset": {"q": list(WORKED.q), "first_value_x": WORKED.values[0][0]},
        "result": build_response(trace_query(**state)),
    }
