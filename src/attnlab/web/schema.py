"""What every route shares: a strict request model, the error answer's shape, and the error table.

``Strict`` refuses a field the request model does not name (a typo is an error at its
field, never silently ignored). Every error answer is ``ErrorResponse``
(``web.errors`` builds it). ``errors(...)`` documents the status codes a route answers,
from the one table below, for the OpenAPI schema.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["ERRORS", "ErrorItem", "ErrorResponse", "Strict", "errors"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorItem(BaseModel):
    """One problem with a request: where (``loc``, ``field``) and what (``msg``)."""

    loc: list[str | int]
    field: str
    msg: str
    type: str


class ErrorResponse(BaseModel):
    detail: list[ErrorItem]


# Each status code the API answers, as OpenAPI documents it (the model is always ErrorResponse).
ERRORS: dict[int, dict] = {
    403: {"description": "The teacher's token is missing or wrong (type not_teacher)"},
    404: {"description": "No such job (finished jobs are kept for a while)"},
    409: {"description": "The job has not finished (or it failed)"},
    410: {"description": "The trace was dropped to make room (type trace_dropped)"},
    413: {"description": "The request body is too large"},
    422: {"description": "A field the learner has to fix"},
    429: {
        "description": "This client is past its share of the server's time; Retry-After: when to ask again",
        "headers": {"Retry-After": {"description": "seconds (an estimate)", "schema": {"type": "integer"}}},
    },
    503: {"description": "The server is stopping"},
}


def errors(*codes: int, said: dict[int, str] | None = None) -> dict:
    """The ``responses=`` of a route that answers ``codes``: each from ``ERRORS``, its
    description replaced where ``said`` gives one (``{404: "No lab of that name"}``)."""
    out: dict = {}
    for code in codes:
        entry = {"model": ErrorResponse, **ERRORS[code]}
        if said and code in said:
            entry["description"] = said[code]
        out[code] = entry
    return out
