"""What the Real model view's routes share: the job line, a kept job by id, and their refusals.

``JOBS`` is the server's one job line (``attnlab.models.jobs.JOBS``; tests put
another here). ``done(job_id)`` is a finished trace job or a 404/409 in the
page's words; ``in_path`` turns a ValueError about a path parameter into a 422.
Not a route module: ``jobs.py``, ``views.py`` and ``bridge.py`` import it, never
each other.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import HTTPException, Path
from fastapi.exceptions import RequestValidationError

from attnlab.engine.errors import Loc, field_text
from attnlab.lab.fields import job_gone, job_message, job_unfinished, trace_dropped, trace_dropped_note
from attnlab.models.jobkinds import TraceJob
from attnlab.models.jobs import JOBS
from attnlab.web.explorer.schema import ErrorResponse

__all__ = ["ERRORS", "JOBS", "Index", "JobId", "at_job", "done", "error", "gone", "in_path", "not_found"]

ERRORS = {
    404: {"model": ErrorResponse, "description": "No such job (finished jobs are kept for a while)"},
    409: {"model": ErrorResponse, "description": "The job has not finished (or it failed)"},
    410: {"model": ErrorResponse, "description": "The trace was dropped to make room (type trace_dropped)"},
    413: {"model": ErrorResponse, "description": "The request body is too large"},
    422: {"model": ErrorResponse, "description": "A field the learner has to fix"},
}

JobId = Annotated[str, Path(max_length=32)]
Index = Annotated[int, Path(ge=0, le=10_000)]


def error(loc: Loc, msg: str, *, where: str = "body") -> RequestValidationError:
    """A 422 naming the field at ``loc`` (in the body, or the path for layer, head, index)."""
    field = field_text(loc)
    text = msg if msg.startswith(field) else f"{field}: {msg}"
    return RequestValidationError([{"loc": [where, *loc], "msg": text, "type": "value_error"}])


def in_path(name: str, check) -> object:
    """Run ``check()``; a ValueError from it is a 422 on path parameter ``name``."""
    try:
        return check()
    except ValueError as problem:
        raise error((name,), str(problem), where="path") from None


def at_job(status: int, msg: str, type_: str) -> HTTPException:
    """A refusal located at the path's job id, in the page's words (``attnlab.lab.fields``)."""
    return HTTPException(
        status_code=status, detail=[{"loc": ["path", "job_id"], "field": "job_id", "msg": msg, "type": type_}]
    )


def not_found(kind: str = "trace") -> HTTPException:
    return at_job(404, job_gone(kind), "not_found")


def gone(job_id: str) -> HTTPException:
    """A trace id not kept: 410 ``trace_dropped`` (with the page's note) if dropped to make room, else 404."""
    if not JOBS.was_dropped(job_id):
        return not_found()
    refusal = at_job(410, trace_dropped(), "trace_dropped")
    refusal.detail[0]["note"] = trace_dropped_note()  # the page traces the text again and says so
    return refusal


def done(job_id: str) -> TraceJob:
    job = JOBS.trace_job(job_id)
    if job is None:
        raise gone(job_id)
    if job.status != "done" or job.trace is None:
        msg = job_message(job.loc, job.message) if job.status == "error" else job_unfinished(job.status)
        raise at_job(409, msg, "not_ready")
    return job

