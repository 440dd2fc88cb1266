"""The Real model view's JSON API: traces of real pretrained transformers.

Everything under ``/api/models``. Tracing a text is a job: ``POST
/api/models/jobs`` answers 202 at once with the job's id, a single worker
thread loads the model (first time only) and runs it, and ``GET
/api/models/jobs/{id}`` reports the status and the layers done. When it is
done, ``.../layers/{layer}`` returns every head's weights in that layer and
``.../rows/{layer}/{head}/{index}`` one query's row in the explorer's terms
(``trace_query`` on the real q, keys and values). ``POST /api/models/generate``
starts SmolLM2 continuing a text; polling ``GET /api/models/generate/{id}``
returns the pieces as they come (one per token). The explorer's own requests
never wait for a model.
"""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated

import numpy as np
from fastapi import APIRouter, HTTPException, Path
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from attnlab.lab import numbers as fmt
from attnlab.lab.words import explain
from attnlab.models.heads import layer_profiles, top_sources
from attnlab.models.jobs import JOBS, MAX_CHARS, MAX_TOKENS, Busy, Job
from attnlab.models.minilm import MiniLMConfig
from attnlab.models.registry import MODEL_NAMES, is_loaded
from attnlab.models.sampling import Sampling
from attnlab.models.smollm import SmolLM2Config
from attnlab.web.models_schema import (
    GenerateIn,
    GenerationOut,
    HeadOut,
    JobOut,
    LayerOut,
    ModelInfo,
    ModelsOut,
    RowOut,
    SourceOut,
    TopOut,
    TraceIn,
    TraceSummary,
)
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
    if job is None or not job.id.startswith("j"):  # "g..." ids are generations
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
    if job is None or not job.id.startswith("j"):  # "g..." ids are generations
        raise _not_found()
    return _job_out(job)


@router.get("/jobs/{job_id}/layers/{layer}", response_model=LayerOut, responses=ERRORS)
def job_layer(job_id: JobId, layer: Index, details: bool = False) -> LayerOut:
    """Every head's attention weights in ``layer`` (row = query token), with what each head does.

    ``details=true`` adds each head's q, k, v and scaled scores.
    """
    job = _done(job_id)
    t = job.trace
    try:
        profiles = layer_profiles(t, layer)
    except ValueError as error:
        raise _error("layer", str(error), where="path") from None
    heads = []
    for h, p in enumerate(profiles):
        w = t.weights[layer, h].astype(float)
        extra = {}
        if details:
            g = t.kv_head(h)
            scores = np.where(t.allowed, t.scores[layer, h].astype(float), np.nan).tolist()
            extra = {
                "q": t.q[layer, h].astype(float).tolist(),
                "k": t.k[layer, g].astype(float).tolist(),
                "v": t.v[layer, g].astype(float).tolist(),
                "scores": [[None if x != x else x for x in row] for row in scores],  # NaN: blocked
            }
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
                **extra,
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


def _generation_out(job: Job) -> GenerationOut:
    return GenerationOut(
        id=job.id,
        status=job.status,
        tokens=len(job.pieces),
        max_new_tokens=job.n_layer,
        pieces=list(job.pieces),
        text="".join(job.pieces),
        finish=job.finish if job.status == "done" else None,
        message=job.message,
        field=job.error_field,
    )


@router.post(
    "/generate",
    response_model=GenerationOut,
    status_code=202,
    responses={**ERRORS, 429: {"model": ErrorResponse, "description": "Too many jobs waiting"}},
)
def start_generation(body: GenerateIn) -> GenerationOut:
    """Start SmolLM2 continuing ``prompt`` (greedy unless ``temperature`` > 0); poll for the pieces."""
    try:
        sampling = Sampling(temperature=body.temperature, top_k=body.top_k, top_p=body.top_p, seed=body.seed)
        job = JOBS.generate(
            body.prompt, max_new_tokens=body.max_new_tokens, sampling=sampling, chat=body.chat
        )
    except Busy as error:
        raise HTTPException(
            status_code=429,
            detail=[{"loc": ["body"], "field": "body", "msg": str(error), "type": "busy"}],
        ) from None
    except ValueError as error:
        field = str(error).split(" ", 1)[0]
        raise _error(field if field in GenerateIn.model_fields else "prompt", str(error)) from None
    return _generation_out(job)


@router.get("/generate/{job_id}", response_model=GenerationOut, responses=ERRORS)
def generation_status(job_id: JobId) -> GenerationOut:
    """A generation's text so far, one piece per token, and why it stopped once done."""
    job = JOBS.get(job_id)
    if job is None or not job.id.startswith("g"):
        raise _not_found()
    return _generation_out(job)


@page_router.get("/real-model", include_in_schema=False)
def real_model_page() -> Response:
    """The Real model view (a page of its own, static like the lab's)."""
    return Response(
        PAGE.read_bytes(),
        media_type="text/html; charset=utf-8",
        headers={"cache-control": "no-cache"},
    )
