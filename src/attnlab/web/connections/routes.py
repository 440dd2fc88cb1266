"""The connection labs' JSON API: each lab's answer, practice and study, export.

Everything under ``/api/connections`` (the labs: ``lab/connections/registry.py``):

- ``GET /api/connections``: the labs, their titles, routes and the connections they open from;
- ``GET /api/connections/{name}?n=64&tile=16``: everything lab ``name`` draws for that input
  (the same query as the page's own link, ``/connections/{name}?n=64&tile=16``);
- ``POST /api/connections/{name}/study``: ``{inputs, study, action}`` → ``{study, history, answer}``;
- ``POST /api/connections/{name}/export/json`` and ``/export/markdown``: ``{inputs, study}``.

A lab with a model part (``LAB.ask``) gets its model numbers first (``live.measured`` with
``models.labs.runs.measure`` on the server's job line: a run that takes a while is a job, and
the answer says so until it is done; the page asks again).

Routes validate, call one lab function and return. An input the lab refuses is
422 at its field (``["query", "tile"]``, ``["body", "inputs", "tile"]``) with
the control's own label in the message; an unknown lab is 404 at ``["path",
"name"]``; a study's or an action's error is the app's 422 at its field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from attnlab.lab.connections import export, live, registry
from attnlab.lab.connections.controls import ControlError
from attnlab.lab.connections.page import files, lab_page
from attnlab.lab.connections.study import apply
from attnlab.models.labs.runs import measure
from attnlab.web.realmodel import line
from attnlab.web.schema import Strict, errors

router = APIRouter(prefix="/api/connections", tags=["connections"])

ERRORS = errors(404, 413, 422, said={404: "No lab of that name"})
Name = Annotated[str, Path(max_length=40)]
Inputs = Annotated[dict[str, Any], Field(max_length=16)]


class StudyRequest(Strict):
    inputs: Inputs = {}
    study: dict[str, Any] = {"version": 1}
    action: dict[str, Any]


class ExportRequest(Strict):
    inputs: Inputs = {}
    study: dict[str, Any] = {"version": 1}


def _answer(call: Callable[[], Any], prefix: tuple[str, ...]) -> Any:
    """``call()``, or the lab's refusal of an input: 404 for an unknown lab, else 422 under ``prefix``."""
    try:
        return call()
    except ControlError as err:
        if err.loc[:1] == ("path",):
            return JSONResponse({"detail": [err.item()]}, status_code=404)
        return JSONResponse({"detail": [err.item(prefix)]}, status_code=422)


def _measured(name: str, given: dict, where: str, request: Request | None = None) -> dict:
    """Lab ``name``'s model numbers for ``given`` (``{}`` for a lab without a model part), its jobs
    the request's client's (this process's without one)."""
    jobs = line.line_of(request) if request is not None else line.JOBS
    return live.measured(name, given, where, lambda a: measure(a, jobs))


def _attachment(body: str, media_type: str, filename: str) -> Response:
    return Response(
        body, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )


@router.get("")
def get_labs() -> list[dict]:
    """Every lab: name, title, route and the main page's connections it opens from."""
    return registry.listing()


@router.get("/{name}", responses=ERRORS)
def get_lab(name: Name, request: Request) -> Any:
    """Everything lab ``name`` draws for the input in the query (missing inputs at their defaults)."""
    given = dict(request.query_params)
    return _answer(lambda: lab_page(name, given, "query", _measured(name, given, "query", request)), ())


@router.post("/{name}/study", responses=ERRORS)
def post_study(name: Name, body: StudyRequest, request: Request) -> Any:
    """Apply one practice or help action to the lab's study, checked on the learner's input."""
    return _answer(
        lambda: apply(name, body.inputs, body.study, body.action,
                      _measured(name, body.inputs, "inputs", request)),  # fmt: skip
        ("body",),
    )


@router.post(
    "/{name}/export/json",
    response_class=Response,
    responses={200: {"content": {"application/json": {}}}, **ERRORS},
)
def post_export_json(name: Name, body: ExportRequest, request: Request) -> Any:
    """The lab's input, every number at full precision, its words and the study, as JSON."""
    return _answer(
        lambda: _attachment(
            export.to_json(name, body.inputs, body.study, _measured(name, body.inputs, "inputs", request)),
            "application/json",
            files(name)["json"]["name"],
        ),
        ("body",),
    )


@router.post(
    "/{name}/export/markdown",
    response_class=Response,
    responses={200: {"content": {"text/markdown": {}}}, **ERRORS},
)
def post_export_markdown(name: Name, body: ExportRequest, request: Request) -> Any:
    """The lab's input, sentences, tables, study history and program, as Markdown."""
    return _answer(
        lambda: _attachment(
            export.to_markdown(name, body.inputs, body.study,
                               _measured(name, body.inputs, "inputs", request)),  # fmt: skip
            "text/markdown",
            files(name)["markdown"]["name"],
        ),
        ("body",),
    )
