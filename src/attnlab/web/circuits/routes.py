"""The Circuits page's API: the head census of a kept trace, and circuits jobs in the model worker.

Under ``/api/circuits`` (the contract: docs/real-model-api.md, "Circuits"):

- ``GET /models``: each model's pickers (layers, heads, scores) and what it can show;
- ``POST /{model}/tokens``: a text's tokens as the position pickers list them (tokenizer alone);
- ``GET /census/{job_id}?score=``: every head's score on a kept trace (a Real model trace job),
  as a map and a ranked list, answered from the bodies kept with the trace;
- ``GET /census/{job_id}/heads/{layer}/{head}?score=``: where that head's score comes from;
- ``POST /ablation``, ``/attribution``, ``/lens``, ``/head``, ``/patching``: a circuits job
  (202, or the identical one already in line), run by the model worker;
- ``GET /jobs/{id}``: its status line, progress and, once done, its view;
- ``POST /jobs/{id}/cancel``: stop it (a sweep answers with what it had done).

Each validates, calls one function of ``lab/circuits`` (``requests``, ``census``) and returns; every
refusal is 4xx in the page's words (``lab/fields.py`` names the field).
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import Response

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits import requests
from attnlab.lab.circuits.census import census_body, evidence_view
from attnlab.lab.circuits.page import model_choices, text_positions
from attnlab.lab.circuits.problems import no_such_job
from attnlab.models import registry
from attnlab.models.jobs.texts import count_text
from attnlab.web.circuits.schema import AblationIn, HeadIn, PatchingIn, PositionIn, Score, TextIn
from attnlab.web.realmodel import line
from attnlab.web.realmodel.line import ERRORS, STARTING, Index, JobId

router = APIRouter(prefix="/api/circuits", tags=["circuits"])

def _json(data: dict, status: int = 200) -> Response:
    body = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return Response(body, status_code=status, media_type="application/json")


def _start(kind: str, body, request: Request) -> Response:
    job = line.started(lambda: requests.start(line.line_of(request), kind, **body.model_dump()))
    return _json(requests.answer(line.JOBS, job), 202)


def _job(job_id: str):
    job = line.JOBS.circuit_job(job_id)
    if job is None:
        raise line.at_job(404, no_such_job(), "not_found")
    return job


@router.get("/models")
def models() -> Response:
    """Each model's pickers (its layers and heads, the census scores) and which views it has."""
    specs = [{"name": s.name, "title": s.title, "decoder": s.generates, "n_layer": s.n_layer,
              "kv_groups": s.kv_groups} for s in registry.SPECS.values()]  # fmt: skip
    return _json({"models": model_choices(specs)})


@router.post("/{model}/tokens", responses={422: ERRORS[422]})
def tokens(model: Annotated[str, Path(max_length=40)], body: TextIn) -> Response:
    """A text's tokens for ``model`` as the position pickers list them (its tokenizer alone)."""
    try:
        found = count_text(model, body.text)
    except FieldError as error:
        raise line.refused(error, where="path" if error.loc == ("model",) else "body") from None
    spec = registry.spec(model)
    return _json(text_positions(model=model, tokens=found, cap=spec.max_tokens, title=spec.title))


@router.get("/census/{job_id}", responses=ERRORS)
def census(job_id: JobId, score: Annotated[Score, Query()] = "induction") -> Response:
    """Every head's ``score`` on a kept trace: the map, the ranked heads and their words (kept bodies)."""
    job = line.done(job_id)
    return Response(census_body(job, score), media_type="application/json")


@router.get("/census/{job_id}/heads/{layer}/{head}", responses=ERRORS)
def evidence(job_id: JobId, layer: Index, head: Index,
             score: Annotated[Score, Query()] = "induction") -> Response:  # fmt: skip
    """Where one head's ``score`` comes from: each query's value and the query rows contributing most."""
    job = line.done(job_id)
    return _json(line.checked(lambda: evidence_view(job, layer, head, score)))


@router.post("/ablation", status_code=202, responses=STARTING)
def ablation(body: AblationIn, request: Request) -> Response:
    """Switch heads off (zero or mean) on a text: a job; poll ``/jobs/{id}``."""
    return _start("ablation", body, request)


@router.post("/attribution", status_code=202, responses=STARTING)
def attribution(body: PositionIn, request: Request) -> Response:
    """Direct logit attribution of the top token at ``position`` (a decoder): a job."""
    return _start("attribution", body, request)


@router.post("/lens", status_code=202, responses=STARTING)
def lens(body: PositionIn, request: Request) -> Response:
    """The logit lens at ``position`` (a decoder): a job."""
    return _start("lens", body, request)


@router.post("/head", status_code=202, responses=STARTING)
def head(body: HeadIn, request: Request) -> Response:
    """What one head reads and writes at query ``position``: a job."""
    return _start("head", body, request)


@router.post("/patching", status_code=202, responses=STARTING)
def patching(body: PatchingIn, request: Request) -> Response:
    """A patching sweep of two prompts: a job with progress; ``/jobs/{id}/cancel`` stops it."""
    return _start("patching", body, request)


@router.get("/jobs/{job_id}", responses=ERRORS)
def job_status(job_id: JobId) -> Response:
    """A circuits job's status line and progress; its view once done (or cancelled with a partial sweep)."""
    return _json(requests.answer(line.JOBS, _job(job_id)))


@router.post("/jobs/{job_id}/cancel", responses=ERRORS)
def cancel(job_id: JobId) -> Response:
    """Stop a circuits job: a waiting one leaves the line; a running sweep stops after its current patch."""
    _job(job_id)
    return _json(requests.answer(line.JOBS, line.JOBS.cancel(job_id)))
