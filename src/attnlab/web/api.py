"""The lab's JSON API: the explorer state in, everything the page draws out.

``POST /api/trace`` runs the engine once for the state and once for the
reference (q = [2, 1]), and returns the trace, the display strings, the words,
the comparison, the generated Python, the geometry and the challenge.
``GET /api/example`` returns the worked example and what "Reset example"
restores. Errors are 422 with the field path (``q[0]``, ``values[1][0]``);
an engine ``FieldError`` is answered at its ``loc`` (``web.errors.field_error_detail``).
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import ValidationError

from attnlab.engine.errors import FieldError
from attnlab.engine.single import QueryTrace, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.challenge import check
from attnlab.lab.compare import compare, reference_for, reference_query
from attnlab.lab.examples import WORKED
from attnlab.lab.geometry import geometry
from attnlab.lab.python_code import to_python
from attnlab.lab.words import explain
from attnlab.web.errors import field_error_detail, validation_detail
from attnlab.web.schema import ErrorResponse, ExampleOut, LabState, TraceResponse

router = APIRouter(prefix="/api", tags=["lab"])

ERRORS = {
    413: {"model": ErrorResponse, "description": "The request body is too large"},
    422: {"model": ErrorResponse, "description": "A field the learner has to fix"},
}

def _display(trace: QueryTrace) -> dict:
    sources = []
    for i, label in enumerate(trace.labels):
        ok = trace.allowed[i]
        carry = trace.carries[i]
        precise = (
            f"{label}: key={fmt.precise_vector(trace.keys[i])}; "
            f"value={fmt.precise_vector(trace.values[i])}; dot={fmt.precise(trace.dots[i])}; "
            f"score={fmt.precise(trace.scores[i])}; "
            + (
                f"share={fmt.precise(trace.weights[i])}; contribution={fmt.precise_vector(carry)}"
                if ok
                else "blocked by the mask (share 0, no contribution)"
            )
        )
        sources.append(
            {
                "label": label,
                "index": i,
                "allowed": ok,
                "key": fmt.vector(trace.keys[i]),
                "value": fmt.vector(trace.values[i]),
                "dot": fmt.rounded(trace.dots[i]),
                "score": fmt.rounded(trace.scores[i]),
                "share": fmt.rounded(trace.weights[i]) if ok else "blocked",
                "percent": fmt.percent(trace.weights[i]) if ok else "blocked",
                "carry": fmt.vector(carry),
                "precise": precise,
            }
        )
    scale = "√" + fmt.rounded(trace.d_k) if trace.scale is None else fmt.rounded(trace.scale)
    return {
        "q": fmt.vector(trace.q),
        "q_coords": [fmt.precise(x) for x in trace.q],
        "q_precise": fmt.precise_vector(trace.q),
        "values_coords": [[fmt.precise(x) for x in v] for v in trace.values],
        "scale": scale,
        "m": fmt.rounded(trace.m),
        "z": fmt.rounded(trace.z),
        "output": fmt.vector(trace.output),
        "output_precise": fmt.precise_vector(trace.output),
        "m_z_precise": f"m={fmt.precise(trace.m)}; stable denominator={fmt.precise(trace.z)}",
        "sources": sources,
    }


def _compare(trace: QueryTrace) -> tuple[dict, QueryTrace | None]:
    try:
        reference = reference_for(trace)
    except ValueError as error:
        message = (
            f"The comparison with q = {fmt.vector(reference_query(trace.d_k))} is not available: {error}."
        )
        return (
            {
                "available": False,
                "message": message,
                "active": False,
                "summary": None,
                "reference": None,
                "changed": None,
                "display": None,
            },
            None,
        )
    result = compare(trace, reference).to_dict()
    changed = result["changed"]
    flat = [
        *changed["dots"],
        *changed["scores"],
        changed["m"],
        changed["z"],
        *changed["weights"],
        *(c for row in changed["carries"] for c in row),
        *changed["output"],
    ]
    return (
        {
            "available": True,
            "message": "",
            "active": any(flat),
            "summary": result["summary"],
            "reference": result["reference"],
            "changed": changed,
            "display": {
                "q": fmt.vector(reference.q),
                "scores": [fmt.rounded(s) for s in reference.scores],
                "weights": [fmt.rounded(w) for w in reference.weights],
                "output": fmt.vector(reference.output),
            },
        },
        reference,
    )


def build_response(trace: QueryTrace) -> dict:
    """Return the full answer for one trace (the shape of ``TraceResponse``)."""
    comparison, reference = _compare(trace)
    return {
        "trace": trace.to_dict(),
        "display": _display(trace),
        "words": explain(trace).to_dict(),
        "compare": comparison,
        "python": to_python(trace),
        "geometry": geometry(trace, reference=reference),
        "challenge": check(trace).to_dict(),
    }


MAX_MESSAGE_CHARS = 512 * 1024


def answer_for(text: str) -> dict:
    """Answer one state given as JSON text: ``{"status", "body"}`` exactly as POST would."""
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


@router.get("/example", response_model=ExampleOut)
def get_example() -> dict:
    """Return the worked example (q = [2, 1] over A, B, C), its answer and what Reset restores."""
    state = {**WORKED.to_dict(), "allowed": [True] * len(WORKED.keys), "scale": None}
    return {
        "state": state,
        "reset": {"q": list(WORKED.q), "first_value_x": WORKED.values[0][0]},
        "result": build_response(trace_query(**state)),
    }
