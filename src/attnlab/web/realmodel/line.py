"""What the routes of model jobs share: the job line, who asks, a kept job by id, and their refusals.

``JOBS`` is the server's one job line (``attnlab.models.jobs.line.JOBS``; tests put
another here). ``line_of(request)`` is that line as the request's client sees it
(``client_of``: its address and the page's tab, so the line serves each in turn; a route
with its own idea of who asks, a class's learner say, passes ``JOBS.of(Client(address,
learner))`` instead). ``done(job_id)`` is a finished trace job or a 404/409 in the page's
words; ``refused`` turns a ``FieldError`` into a 422 at its field, its problem passed on as
raised (the page names the field: ``attnlab.lab.fields``), and ``in_path`` does so for a
check on a path parameter; ``started`` puts a job in the line or refuses it (``STARTING``:
those answers: 429 with ``Retry-After`` when the line is full or the computer has its
``PER_ADDRESS`` jobs in line, 503 when the server stops).
Not a route module: ``jobs.py``, ``views.py``, ``bridge.py``, the Circuits page's
``web/circuits/routes.py`` and the connection labs' routes import it, never each other.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import HTTPException, Path, Request
from fastapi.exceptions import RequestValidationError

from attnlab.engine.errors import FieldError, Loc
from attnlab.lab.fields import job_gone, job_message, job_unfinished, trace_dropped, trace_dropped_note
from attnlab.models.jobs.kinds import TraceJob
from attnlab.models.jobs.line import JOBS, Busy, ClientLine, OverCap, Stopping
from attnlab.models.jobs.turns import Client
from attnlab.web.schema import errors

__all__ = [
    "ERRORS", "JOBS", "STARTING", "TAB_HEADER", "Index", "JobId", "at_job", "checked", "client_of", "done",
    "error", "gone", "in_path", "line_of", "not_found", "refused", "started",
]

ERRORS = errors(404, 409, 410, 413, 422)

# A route that starts a job answers these too (``started``).
STARTING = errors(404, 409, 410, 413, 422, 429, 503, said={
    429: "Too many jobs waiting (type busy), or this computer has its most jobs in line (type over_cap); the "
    "Retry-After header says in how many seconds to try again (an estimate from the jobs ahead and their "
    "measured rates)"
})

JobId = Annotated[str, Path(max_length=32)]
Index = Annotated[int, Path(ge=0, le=10_000)]
TAB_HEADER = "x-attnlab-tab"  # the page's tab: a random id it makes once (static/js/shared/http.js)
_TAB = re.compile(r"^[A-Za-z0-9_-]{1,32}$")


def client_of(request: Request) -> Client:
    """Who asks: the request's address and, on it, the class's learner (``request.state.class_learner``,
    set by ``web/classroom``) or else the page's tab (``TAB_HEADER``; another value is no tab)."""
    address = request.client.host if request.client else ""
    learner = getattr(request.state, "class_learner", None)
    if isinstance(learner, str) and learner:
        return Client(address, learner)
    tab = request.headers.get(TAB_HEADER, "")
    return Client(address, tab if _TAB.match(tab) else "")


def line_of(request: Request) -> ClientLine:
    """The job line as the request's client sees it: the jobs it starts are that client's."""
    return JOBS.of(client_of(request))


def refused(error: FieldError, *, where: str = "body") -> RequestValidationError:
    """A 422 at ``error``'s field, under ``where`` ("body", "path" or "query"), its problem as raised."""
    item = {"loc": [where, *error.loc], "msg": str(error), "type": "value_error", "ctx": {"error": error}}
    return RequestValidationError([item])


def error(loc: Loc, problem: str, *, where: str = "body") -> RequestValidationError:
    """A 422 at ``loc`` for ``problem``: words that never name the field (``is needed with …``)."""
    return refused(FieldError(loc, problem), where=where)


def in_path(name: str, check) -> object:
    """Run ``check()``; a ``FieldError`` from it is a 422 on path (or query) parameter ``name``."""
    try:
        return check()
    except FieldError as problem:
        raise refused(problem.rebased(problem.loc, (name,)), where="path") from None


def checked(compute, *, where: str = "path") -> object:
    """Run ``compute()`` (a view of a kept trace); a ``FieldError`` from it is a 422 at its own field."""
    try:
        return compute()
    except FieldError as problem:
        raise refused(problem, where=where) from None


def _line(status: int, error: Exception, type_: str, headers: dict | None = None) -> HTTPException:
    """The job line's refusal of a new job, located at the body (nothing in it is at fault)."""
    item = {"loc": ["body"], "field": "body", "msg": str(error), "type": type_}
    return HTTPException(status_code=status, detail=[item], headers=headers)


def started(start):
    """Run ``start()`` (it puts a job in the line) and return its job; a full line is a 429 with
    Retry-After, a stopping server a 503, and a ``FieldError`` a 422 at its field."""
    try:
        return start()
    except Busy as error:
        kind = "over_cap" if isinstance(error, OverCap) else "busy"
        raise _line(429, error, kind, headers={"Retry-After": str(error.retry_after)}) from None
    except Stopping as error:
        raise _line(503, error, "stopping") from None
    except FieldError as error:
        raise refused(error) from None


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

