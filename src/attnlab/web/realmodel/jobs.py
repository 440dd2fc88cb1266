"""The Real model view's JSON API: traces of real pretrained transformers.

Everything under ``/api/models``. Tracing a text is a job: ``POST
/api/models/jobs`` answers 202 at once with the job; one worker process
(``attnlab.models.jobs.line``) loads the model (first time only) and runs the jobs
in order, and ``GET /api/models/jobs/{id}`` reports the status, the layers
done and the job's ``place`` in line (0 = the model is on it). An identical
request gets the same job. When the line is full the answer is 429 with a
``Retry-After`` header (seconds, an estimate). When a job is done,
``.../layers/{layer}`` returns every head's weights in that layer and
``.../rows/{layer}/{head}/{index}`` one query's row in the explorer's terms
(``trace_query`` on the real q, keys and values), answered from the trace
kept in this process. ``POST /api/models/generate`` starts SmolLM2 continuing
a text; polling ``GET /api/models/generate/{id}`` returns the pieces as they
come (one per token). Each kind's ids are unknown to the other's routes. The
explorer's own requests never wait for a model.
"""

from __future__ import annotations

import asyncio
import ctypes
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

import numpy as np
from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import TypeAdapter
from starlette.background import BackgroundTask

from attnlab.engine.errors import FieldError, field_text
from attnlab.lab.fields import details_need_head, job_message
from attnlab.lab.realmodel.catalog import about, listing
from attnlab.lab.realmodel.kinds import layer_profiles
from attnlab.lab.realmodel.modelview import head_numbers, share_texts
from attnlab.lab.realmodel.nexttoken import step_display
from attnlab.lab.realmodel.page import page_words, trace_names
from attnlab.lab.realmodel.query import query_row, row_labels
from attnlab.lab.realmodel.row import row_view
from attnlab.lab.realmodel.status import generation_status as generation_words
from attnlab.lab.realmodel.status import trace_status
from attnlab.lab.realmodel.tokens import trace_tokens
from attnlab.lab.realmodel.worker import worker_why
from attnlab.models import registry
from attnlab.models.errors import Refusal
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobs.kinds import GenerationJob, TraceJob
from attnlab.models.jobs.texts import MAX_CHARS, MAX_TOKENS
from attnlab.models.sampling import Sampling
from attnlab.web.realmodel import line
from attnlab.web.realmodel.line import ERRORS, STARTING, Index, JobId
from attnlab.web.realmodel.schema import (
    GenerateIn,
    GenerationOut,
    HeadOut,
    JobOut,
    LayerOut,
    ModelAbout,
    ModelInfo,
    ModelsOut,
    RowOut,
    StepOut,
    TraceIn,
    TraceSummary,
)

router = APIRouter(prefix="/api/models", tags=["models"])
MAX_NAME = 400  # a model's name: "org/name", a found GGUF's "org/name/file.gguf", a models folder's path
# The view's page; its own router so the app adds it with the API (one line in ROUTERS).

def _listing() -> dict:
    """Every model on offer (shipped and found) and every file skipped, as the page's picker lists them:
    no model file is read to answer (``lab.realmodel.catalog``)."""
    return listing(loaded=line.JOBS.is_loaded, path=line.JOBS.weights_path)


def _job_out(job: TraceJob) -> JobOut:
    result = None
    done = job.status == "done" and job.trace is not None
    if done:
        t = job.trace
        labels = row_labels(t)
        result = TraceSummary(
            tokens=t.tokens,
            ids=[int(i) for i in t.ids],
            has_logits=t.logits is not None,
            has_journey=t.journey is not None,
            labels=labels,
            shown=trace_tokens(t.tokens, labels),
            n_layer=t.n_layer,
            n_head=t.n_head,
            n_kv_head=len(t.kv_groups),
            kv_groups=t.kv_groups,
            causal=t.causal,
            scale=t.scale,
            **trace_names(n_layer=t.n_layer, kv_groups=t.kv_groups, scale=t.scale),
        )
    place = line.JOBS.place(job)
    message = job_message(job.loc, job.message)
    words = trace_status(
        status=job.status, title=registry.title(job.model), place=place, progress=job.progress,
        layers_done=job.layers_done, n_layer=job.n_layer, message=message,
        n_tokens=len(job.trace.tokens) if done else None,
    )  # fmt: skip
    return JobOut(
        id=job.id,
        model=job.model,
        status=job.status,
        place=place,
        place_display=words["place_display"],
        progress=job.progress,
        progress_display=words["progress_display"],
        stage_display=words["stage_display"],
        done=words["done"],
        layers_done=job.layers_done,
        n_layer=job.n_layer,
        message=message,
        field=field_text(job.loc) if job.loc else None,
        result=result,
    )


@router.get("", response_model=ModelsOut)
def models() -> ModelsOut:
    """The models the view can trace (shipped, and found on this computer: the Hugging Face cache and the
    models folder), the files skipped and why, the view's caps and the job line's limits."""
    found = _listing()
    return ModelsOut(
        models=[ModelInfo(**m) for m in found["models"]],
        skipped=found["skipped"],
        skipped_title=found["skipped_title"],
        searched=found["searched"],
        groups=found["groups"],
        max_chars=MAX_CHARS,
        max_tokens=MAX_TOKENS,
        max_waiting=line.JOBS.max_waiting,
        trace_bytes_cap=line.JOBS.memory_cap,
        trace_bytes_kept=line.JOBS.kept_bytes,
        worker=line.JOBS.worker_mode,
        worker_why=worker_why(line.JOBS.worker_mode, line.JOBS.worker_fallback),
        words=page_words(),
    )


@router.get("/about", response_model=ModelAbout, responses={422: ERRORS[422]})
def model_about(model: Annotated[str, Query(max_length=MAX_NAME)]) -> ModelAbout:
    """One model as its own files describe it: shapes, the view's token cap for it (its context or the
    lab's cap, the smaller), whether it has a chat template, and which model writes when it is chosen.

    ``model`` is a name ``GET /api/models`` lists: a path is refused (the page opens no path a
    browser sends)."""
    try:
        name = registry.check_name(model)
        return ModelAbout(**about(name, loaded=line.JOBS.is_loaded(name), path=line.JOBS.weights_path(name)))
    except FieldError as error:
        raise line.refused(error.rebased(error.loc, ("model",)), where="query") from None
    except (ModelNotInstalled, ValueError) as error:  # a missing package, files that cannot be opened
        raise line.refused(Refusal(("model",), "cannot_load", str(error)), where="query") from None


@router.post("/jobs", response_model=JobOut, status_code=202, responses=STARTING)
def start_job(body: TraceIn, request: Request) -> JobOut:
    """Start tracing ``text`` with ``model`` (or join the identical job); poll it for progress and result.

    The job is the asking page's: the line serves each computer and tab in turn."""
    jobs = line.line_of(request)
    return _job_out(line.started(lambda: jobs.start(body.model, body.text)))


@router.get("/jobs/{job_id}", response_model=JobOut, responses=ERRORS)
def job_status(job_id: JobId) -> JobOut:
    """A job's status, place in line and progress; with ``result`` (tokens, heads, GQA groups) once done."""
    job = line.JOBS.trace_job(job_id)
    if job is None:
        raise line.gone(job_id)
    return _job_out(job)


# Whole-layer answers (the largest answer of a kept trace: 21 MB of JSON for a 256-token MiniLM
# layer) are sent as they are written, a head at a time, by two threads of their own: two heads
# are written at once (more wait), and what writing takes stays in those two threads' malloc arenas
# instead of spreading over every worker thread's (glibc keeps each arena's freed top).
_WRITERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="attnlab-layers")
HeadQuery = Annotated[int | None, Query(ge=0, le=10_000)]

try:  # glibc: malloc_trim gives freed heap pages back
    _libc = ctypes.CDLL("libc.so.6")
    _libc.malloc_trim.argtypes = [ctypes.c_size_t]
except (OSError, AttributeError):
    _libc = None


def _give_back_memory() -> None:
    """Return the freed heap of a large answer to the system (glibc; elsewhere nothing to do)."""
    if _libc is not None:
        _libc.malloc_trim(0)


@router.get("/jobs/{job_id}/layers/{layer}", response_model=LayerOut, responses=ERRORS)
def job_layer(
    job_id: JobId, layer: Index, details: bool = False, head: HeadQuery = None
) -> StreamingResponse:
    """Every head's attention weights in ``layer`` (row = query token), with what each head does.

    ``head=h``: that head alone (a page of one). ``details=true`` (with ``head``) adds its
    q, k, v and scaled scores: a whole layer's would be tens of megabytes. Sent as it is
    written (:func:`layer_json`), one head at a time, so no answer is ever whole in memory,
    and the memory given back after: 16 clients on the largest answer leave the server's
    memory where it was (``benchmarks/bench_load.py``, phase 4). The writers' threads do all
    the work of it, the head kinds included: the thread answering here only checks the request.
    """
    job = line.done(job_id)
    t = job.trace
    line.in_path("layer", lambda: t.check(layer=layer))
    if head is not None:
        line.in_path("head", lambda: t.check(head=head))
    elif details:
        raise line.error(("head",), details_need_head(t.n_head), where="query")
    pieces = _written(layer_json(job.id, t, layer, details=details, head=head))
    after = BackgroundTask(_give_back_memory)  # what writing it took, once it is sent
    return StreamingResponse(pieces, media_type="application/json", background=after)


async def _written(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    """Each piece as one of the writers' threads writes it (the next one only once this one is sent)."""
    loop = asyncio.get_running_loop()
    while (piece := await loop.run_in_executor(_WRITERS, next, pieces, None)) is not None:
        yield piece


def layer_json(job_id: str, t, layer: int, *, details: bool, head: int | None) -> Iterator[bytes]:
    """The ``LayerOut`` of ``layer`` as JSON, in pieces: the bytes of ``LayerOut(...).model_dump_json()``.

    Each head is written ``ROWS_PER_PIECE`` rows at a time (:func:`_head_json`): only those
    rows' numbers and share texts are Python objects at any time, never a layer's 1.5
    million (whose memory Python's small-object allocator would keep after), and no piece is
    large (large ones would stay in the allocator's arenas after).
    """
    frame = LayerOut(job=job_id, layer=layer, tokens=t.tokens, allowed=t.allowed.tolist(), heads=[])
    yield _opened(frame.model_dump_json(), '"heads":[]}')
    first = True
    for h, p in enumerate(layer_profiles(t, layer)):  # what each head does (the layer is checked)
        if head is None or h == head:
            if not first:
                yield b","
            yield from _head_json(t, layer, h, p, details)
            first = False
    yield b"]}"


ROWS_PER_PIECE = 32  # a piece of a head: 32 rows of 256 numbers or share texts, ~70 kB of JSON
_FLOATS = TypeAdapter(list[float])  # one row, written as HeadOut writes its rows
_TEXTS = TypeAdapter(list[str])
_ROWS = '"weights":[],"shares":[]'  # where a head's rows go in its frame (HeadOut's field order)


def _opened(frame: str, empty: str) -> bytes:
    """``frame`` (JSON) cut just inside the empty list that ``empty`` ends it with."""
    assert frame.endswith(empty)
    return frame[: -len("]}")].encode()


def _head_json(t, layer: int, h: int, p: dict, details: bool) -> Iterator[bytes]:
    """One head of a layer's answer, in pieces: its frame (``HeadOut`` with no rows) around its rows.

    With ``details`` its q, k, v and scores are in the frame (one head's: the route asks for one).
    """
    w = t.head_weights(layer, h).astype(float)
    extra = {}
    if details:
        g = t.kv_head(h)
        scores = np.where(t.allowed, t.head_scores(layer, h).astype(float), np.nan).tolist()
        extra = {
            "q": t.q[layer, h].astype(float).tolist(),
            "k": t.k[layer, g].astype(float).tolist(),
            "v": t.v[layer, g].astype(float).tolist(),
            "scores": [[None if x != x else x for x in row] for row in scores],  # NaN: blocked
        }
    numbers = head_numbers(p, w[:0], t.allowed[:0])  # its scores, printed; its shares come row by row
    frame = HeadOut(head=h, kv_head=t.kv_head(h), kind=p["kind"], weights=[], **numbers, **extra)
    before, after = frame.model_dump_json().split(_ROWS)  # exactly once: the rows' place
    yield before.encode() + b'"weights":['
    yield from _pieces(len(w), lambda i: _FLOATS.dump_json(w[i].tolist()))
    yield b'],"shares":['
    yield from _pieces(len(w), lambda i: _TEXTS.dump_json(share_texts(w[i : i + 1], t.allowed[i : i + 1])[0]))
    yield b"]" + after.encode()


def _pieces(n: int, row) -> Iterator[bytes]:
    """Rows ``row(0)`` .. ``row(n - 1)`` (JSON), comma-separated, ``ROWS_PER_PIECE`` to a piece."""
    for start in range(0, n, ROWS_PER_PIECE):
        rows = b",".join(row(i) for i in range(start, min(n, start + ROWS_PER_PIECE)))
        yield b"," + rows if start else rows


@router.get("/jobs/{job_id}/rows/{layer}/{head}/{index}", response_model=RowOut, responses=ERRORS)
def job_row(job_id: JobId, layer: Index, head: Index, index: Index) -> RowOut:
    """Token ``index``'s query in ``layer``/``head``, computed as the explorer computes one query."""
    job = line.done(job_id)
    t = job.trace
    line.in_path("layer", lambda: t.check(layer=layer))
    line.in_path("head", lambda: t.check(head=head))
    row = line.in_path("index", lambda: query_row(t, layer, head, index))  # layer and head are fine by now
    return RowOut(job=job.id, layer=layer, head=head, kv_head=t.kv_head(head), index=index,
                  **row_view(row, index, t.tokens))  # fmt: skip


def _generation_out(job: GenerationJob) -> GenerationOut:
    pieces = list(job.pieces)  # one copy: the worker's reader may append meanwhile
    place = line.JOBS.place(job)
    message = job_message(job.loc, job.message)
    words = generation_words(
        status=job.status, title=registry.title(job.model), place=place, tokens=len(pieces),
        max_new_tokens=job.max_new_tokens, finish=job.finish, chat=job.chat, said_text="".join(pieces),
        message=message,
    )  # fmt: skip
    return GenerationOut(
        id=job.id,
        status=job.status,
        place=place,
        place_display=words["place_display"],
        tokens=len(pieces),
        max_new_tokens=job.max_new_tokens,
        pieces=pieces,
        text="".join(pieces),
        chat=job.chat,
        mode=words["mode"],
        hint=words["hint"],
        status_line=words["status_line"],
        steps=[StepOut(**step_display(step)) for step in list(job.steps)],
        finish=job.finish if job.status == "done" else None,
        message=message,
        field=field_text(job.loc) if job.loc else None,
    )


@router.post("/generate", response_model=GenerationOut, status_code=202, responses=STARTING)
def start_generation(body: GenerateIn, request: Request) -> GenerationOut:
    """Start SmolLM2 continuing ``prompt`` (greedy unless ``temperature`` > 0); poll for the pieces.

    A repeatable request (greedy, or with a ``seed``) identical to a kept one gets that job.
    """

    def start() -> GenerationJob:
        # pydantic has checked each option's range; Sampling checks them again
        sampling = Sampling(temperature=body.temperature, top_k=body.top_k, top_p=body.top_p, seed=body.seed)
        if body.chat:  # a model without a chat template has no chat choice (read from its files' headers)
            writer = registry.spec(body.model or registry.decoders()[0])
            if writer.generates and not _has_chat(writer):
                raise Refusal(("chat",), "no_chat_template", writer.title)
        return line.line_of(request).generate(
            body.prompt,
            max_new_tokens=body.max_new_tokens,
            sampling=sampling,
            chat=body.chat,
            model=body.model,
        )

    return _generation_out(line.started(start))


def _has_chat(spec) -> bool:
    try:
        return spec.chat
    except (ModelNotInstalled, ValueError):
        return True  # files that cannot be read: the worker's load says why, as for any generation


@router.get("/generate/{job_id}", response_model=GenerationOut, responses=ERRORS)
def generation_status(job_id: JobId) -> GenerationOut:
    """A generation's text so far (one piece per token), its place in line, and why it stopped once done."""
    job = line.JOBS.generation(job_id)
    if job is None:
        raise line.not_found("generation")
    return _generation_out(job)
