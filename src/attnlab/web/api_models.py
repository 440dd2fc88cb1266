"""The Real model view's JSON API: traces of real pretrained transformers.

Everything under ``/api/models``. Tracing a text is a job: ``POST
/api/models/jobs`` answers 202 at once with the job's id, a single worker
thread loads the model (first time only) and runs it, and ``GET
/api/models/jobs/{id}`` reports the status and the layers done. When it is
done, ``.../layers/{layer}`` returns every head's weights in that layer and
``.../rows/{layer}/{head}/{index}`` one query's row in the explorer's terms
(``trace_query`` on the real q, keys and values). The explorer's own
requests never wait for a model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pathlib import Path as FilePath

from fastapi import APIRouter, HTTPException, Path
from fastapi.responses import Response
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict

from attnlab.lab import numbers as fmt
from attnlab.lab.words import explain
from attnlab.models.heads import layer_profiles, top_sources
from attnlab.models.jobs import JOBS, MAX_CHARS, MAX_TOKENS, Busy, Job
from attnlab.models.minilm import MiniLMConfig
from attnlab.models.registry import MODEL_NAMES, is_loaded
from attnlab.models.smollm import SmolLM2Config
from attnlab.web.schema import ErrorResponse

router = APIRouter(prefix="/api/models", tags=["models"])
# The view's page; its own router so the app adds it with the API (one line in ROUTERS).
page_router = APIRouter()
PAGE = FilePath(__file__).parent / "static" / "real-model.html"

ERRORS = {
    404: {"model": ErrorResponse, "description": "No such job (finished jobs are kept for a while)"},
    409: {"model": ErrorResponse, "description": "The job has not finished (or it failed)"},
    413: {"model": ErrorResponse, "description": "The request body is too large"},
    422: {"model": ErrorResponse, "description": "A field the learner has to fix"},
}
ModelName = Literal["minilm", "smollm2"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelInfo(BaseModel):
    name: str
    title: str
    kind: str
    n_layer: int
    n_head: int
    n_kv_head: int
    kv_groups: list[list[int]]
    loaded: bool


class ModelsOut(BaseModel):
    models: list[ModelInfo]
    max_chars: int
    max_tokens: int


class TraceIn(Strict):
    """A text to trace (at most ``MAX_CHARS`` characters and ``MAX_TOKENS`` tokens)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"model": "minilm", "text": "The cat sat on the mat."}]},
    )
    model: ModelName
    text: str


class TraceSummary(BaseModel):
    tokens: list[str]
    labels: list[str]
    n_layer: int
    n_head: int
    n_kv_head: int
    kv_groups: list[list[int]]
    causal: bool
    scale: float
    scale_display: str


class JobOut(BaseModel):
    id: str
    model: str
    status: Literal["queued", "loading", "running", "done", "error"]
    progress: float
    progress_display: str
    layers_done: int
    n_layer: int
    message: str
    field: str | None
    result: TraceSummary | None


class HeadOut(BaseModel):
    head: int
    kv_head: int
    kind: str
    previous: str
    first: str
    breadth: str
    weights: list[list[float]]
    shares: list[list[str]]


class LayerOut(BaseModel):
    job: str
    layer: int
    tokens: list[str]
    allowed: list[list[bool]]
    heads: list[HeadOut]


class SourceOut(BaseModel):
    index: int
    label: str
    allowed: bool
    score: float | None
    score_display: str
    share: float
    share_display: str


class TopOut(BaseModel):
    label: str
    share: float
    share_display: str


class RowOut(BaseModel):
    job: str
    layer: int
    head: int
    kv_head: int
    index: int
    query: str
    scale_display: str
    sources: list[SourceOut]
    top: list[TopOut]
    summary: str
    match: str
    share: str


def _info() -> list[ModelInfo]:
    m, s = MiniLMConfig(), SmolLM2Config()
    group = s.n_head // s.n_kv_head
    return [
        ModelInfo(
            name="minilm",
            title="all-MiniLM-L6-v2",
            kind="encoder (bidirectional)",
            n_layer=m.n_layer,
            n_head=m.n_head,
            n_kv_head=m.n_head,
            kv_groups=[[h] for h in range(m.n_head)],
            loaded=is_loaded("minilm"),
        ),
        ModelInfo(
            name="smollm2",
            title="SmolLM2-135M-Instruct",
            kind="decoder (causal, GQA)",
            n_layer=s.n_layer,
            n_head=s.n_head,
            n_kv_head=s.n_kv_head,
            kv_groups=[list(range(g * group, (g + 1) * group)) for g in range(s.n_kv_head)],
            loaded=is_loaded("smollm2"),
        ),
    ]


def _error(field: str, msg: str, *, where: str = "body") -> RequestValidationError:
    """A 422 naming ``field`` (in the body, or the path for layer, head, index)."""
    text = msg if msg.startswith(field) else f"{field}: {msg}"
    return RequestValidationError([{"loc": [where, field], "msg": text, "type": "value_error"}])


def _not_found() -> HTTPException:
    return HTTPException(
        status_code=404,
        detail=[
            {
                "loc": ["path", "job_id"],
                "field": "job_id",
                "msg": "job_id: no such job (finished jobs are kept for a while)",
                "type": "not_found",
            }
        ],
    )


def _job_out(job: Job) -> JobOut:
    result = None
    if job.status == "done" and job.trace is not None:
        t = job.trace
        result = TraceSummary(
            tokens=t.tokens,
            labels=t.labels(),
            n_layer=t.n_layer,
            n_head=t.n_head,
            n_kv_head=len(t.kv_groups),
            kv_groups=t.kv_groups,
            causal=t.causal,
            scale=t.scale,
            scale_display=fmt.rounded(t.scale),
        )
    return JobOut(
        id=job.id,
        model=job.model,
        status=job.status,
        progress=job.progress,
        progress_display=fmt.percent(job.progress),
        layers_done=job.layers_done,
        n_layer=job.n_layer,
        message=job.message,
        field=job.error_field,
        result=result,
    )


def _done(job_id: str) -> Job:
    job = JOBS.get(job_id)
    if job is None:
        raise _not_found()
    if job.status != "done" or job.trace is None:
        msg = job.message if job.status == "error" else f"job {job_id} is {job.status}"
        raise HTTPException(
            status_code=409,
            detail=[
                {"loc": ["path", "job_id"], "field": "job_id", "msg": f"job_id: {msg}", "type": "not_ready"}
            ],
        )
    return job


JobId = Annotated[str, Path(max_length=32)]
Index = Annotated[int, Path(ge=0, le=10_000)]


@router.get("", response_model=ModelsOut)
def models() -> ModelsOut:
    """The models the view can trace, their shapes, and the view's length caps."""
    return ModelsOut(models=_info(), max_chars=MAX_CHARS, max_tokens=MAX_TOKENS)


@router.post(
    "/jobs",
    response_model=JobOut,
    status_code=202,
    responses={**ERRORS, 429: {"model": ErrorResponse, "description": "Too many jobs waiting"}},
)
def start_job(body: TraceIn) -> JobOut:
    """Start tracing ``text`` with ``model``; poll the job for progress and the result."""
    if body.model not in MODEL_NAMES:  # pragma: no cover - the Literal already refuses it
        raise _error("model", f"use one of {', '.join(MODEL_NAMES)}")
    try:
        job = JOBS.start(body.model, body.text)
    except Busy as error:
        raise HTTPException(
            status_code=429, detail=[{"loc": ["body"], "field": "body", "msg": str(error), "type": "busy"}]
        ) from None
    except ValueError as error:
        raise _error("text", str(error)) from None
    return _job_out(job)


@router.get("/jobs/{job_id}", response_model=JobOut, responses=ERRORS)
def job_status(job_id: JobId) -> JobOut:
    """A job's status and progress; with ``result`` (tokens, heads, GQA groups) once done."""
    job = JOBS.get(job_id)
    if job is None:
        raise _not_found()
    return _job_out(job)


@router.get("/jobs/{job_id}/layers/{layer}", response_model=LayerOut, responses=ERRORS)
def job_layer(job_id: JobId, layer: Index) -> LayerOut:
    """Every head's attention weights in ``layer`` (row = query token), with what each head does."""
    job = _done(job_id)
    t = job.trace
    try:
        profiles = layer_profiles(t, layer)
    except ValueError as error:
        raise _error("layer", str(error), where="path") from None
    heads = []
    for h, p in enumerate(profiles):
        w = t.weights[layer, h].astype(float)
        heads.append(
            HeadOut(
                head=h,
                kv_head=t.kv_head(h),
                kind=p["kind"],
                previous=fmt.percent(p["previous"]),
                first=fmt.percent(p["first"]),
                breadth=fmt.rounded(p["breadth"], 2),
                weights=w.tolist(),
                shares=[
                    [fmt.rounded(x, 2) if ok else "" for x, ok in zip(row, allowed)]
                    for row, allowed in zip(w.tolist(), t.allowed.tolist())
                ],
            )
        )
    return LayerOut(job=job.id, layer=layer, tokens=t.tokens, allowed=t.allowed.tolist(), heads=heads)


@router.get("/jobs/{job_id}/rows/{layer}/{head}/{index}", response_model=RowOut, responses=ERRORS)
def job_row(job_id: JobId, layer: Index, head: Index, index: Index) -> RowOut:
    """Token ``index``'s query in ``layer``/``head``, computed as the explorer computes one query."""
    job = _done(job_id)
    t = job.trace
    try:
        row = t.query_row(layer, head, index)
    except ValueError as error:
        field = str(error).split(" ", 1)[0]
        raise _error(field if field in ("layer", "head") else "index", str(error), where="path") from None
    labels = list(row.labels)
    sources = [
        SourceOut(
            index=i,
            label=labels[i],
            allowed=row.allowed[i],
            score=row.scores[i] if row.allowed[i] else None,
            score_display=fmt.rounded(row.scores[i]) if row.allowed[i] else "blocked",
            share=row.weights[i],
            share_display=fmt.percent(row.weights[i]) if row.allowed[i] else "—",
        )
        for i in range(len(labels))
    ]
    top = [
        TopOut(label=label, share=share, share_display=fmt.percent(share))
        for label, share in top_sources(list(row.weights), labels, k=3)
    ]
    words = explain(row)
    return RowOut(
        job=job.id,
        layer=layer,
        head=head,
        kv_head=t.kv_head(head),
        index=index,
        query=labels[index],
        scale_display=fmt.rounded(row.scale if row.scale else t.scale),
        sources=sources,
        top=top,
        summary=words.summary,
        match=words.match,
        share=words.share,
    )


@page_router.get("/real-model", include_in_schema=False)
def real_model_page() -> Response:
    """The Real model view (a page of its own, static like the lab's)."""
    return Response(PAGE.read_bytes(), media_type="text/html; charset=utf-8", headers={"cache-control": "no-cache"})
