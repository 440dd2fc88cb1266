"""'How is this computed?': the program behind a number of the real-model views.

The contract: docs/real-model-api.md, "Programs".

Under ``/api/models``, beside ``jobs.py``, ``views.py`` and ``bridge.py``:

- ``GET /programs/words``: the control's words and each view's numbers (no model, no trace);
- ``GET /jobs/{id}/program?kind=...&layer=...``: the program behind one number of a kept trace
  (``corrupt_job``: a second kept trace, the corrupted prompt of a patch);
- ``POST /program``: the same for token ids the caller holds (the circuits views' texts).

The path a number ran on ("q4_1" or "float32") is the kept trace's own (``ModelTrace.path``,
said where the trace was made); a POST's is the caller's (a circuits view's ``program_source``),
else what the model's worker said, "unknown" once that worker has gone.

Each validates, calls ``lab/realmodel/program``'s ``program_answer`` and returns
``{kind, title, program, file_name, path, program_path, says}``. A descriptor the text or the
model cannot answer is a 422 at its field (``query.layer``; ``body.kind`` for the POST); so is a
token id outside the model's vocabulary (``body.ids[2]``, ``body.token``): every integer read
has a bound its use can take.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import Field

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.problems import outside_vocabulary
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.lab.realmodel.program.number import Source, other_model, tokens_differ
from attnlab.lab.realmodel.program.words import control_words
from attnlab.models import registry
from attnlab.web.realmodel import line
from attnlab.web.realmodel.line import ERRORS, JobId
from attnlab.web.schema import Strict

router = APIRouter(prefix="/api/models", tags=["models"])

Count = Annotated[int | None, Field(ge=0, le=100_000)]
MAX_TOKEN_ID = 2**20 - 1  # no model here has a larger vocabulary; each model's own is checked after
TokenId = Annotated[int, Field(ge=0, le=MAX_TOKEN_ID)]
Word = Annotated[str | None, Field(max_length=24)]
Real = Annotated[float | None, Field(allow_inf_nan=False)]


class Number(Strict):
    """A number's descriptor: its kind and the fields that kind reads (lab/realmodel/program)."""

    kind: Annotated[str, Field(max_length=24)]
    layer: Count = None
    head: Count = None
    query: Count = None
    key: Count = None
    position: Count = None
    index: Count = None
    coordinate: Count = None
    rank: Count = None
    source: Count = None
    column: Count = None
    token: Count = None
    top_k: Count = None
    score: Word = None
    quantity: Word = None
    how: Word = None
    term: Word = None
    target: Word = None
    heads: Annotated[str | None, Field(max_length=600)] = None
    answers: Annotated[str | None, Field(max_length=40)] = None
    temperature: Real = None
    top_p: Real = None
    value: Real = None  # the number as the page shows it: named in the program


class NumberOfTrace(Number):
    corrupt_job: Annotated[str | None, Field(max_length=32)] = None


class NumberOfIds(Number):
    model: Annotated[str, Field(max_length=40)]
    ids: Annotated[list[TokenId], Field(min_length=1, max_length=512)]
    tokens: Annotated[list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=512)] = None
    corrupt_ids: Annotated[list[TokenId] | None, Field(min_length=1, max_length=512)] = None
    path: Literal["q4_1", "float32"] | None = None


class ProgramOut(Strict):
    kind: str
    title: str
    program: str
    file_name: str
    path: str
    program_path: str
    says: dict


UNKNOWN = "unknown"  # a path no one said (lab/realmodel/program/words.path_said words it)


def _path(model: str) -> str:
    """What the model's products run on, as its worker said ("q4_1", "float32"); "unknown" once forgotten."""
    return line.JOBS.weights_path(model) or UNKNOWN


def _of_trace(job, corrupt=None) -> Source:
    t = job.trace
    spec = registry.spec(t.model)
    return Source(
        model=t.model, title=spec.title, ids=tuple(int(i) for i in t.ids), tokens=tuple(t.tokens),
        path=t.path or UNKNOWN,  # the trace's own: a restarted worker forgets what it said
        n_layer=t.n_layer, n_head=t.n_head, d_head=spec.d_head,
        vocab=None if t.logits is None else int(t.logits.shape[-1]),
        corrupt_ids=None if corrupt is None else tuple(int(i) for i in corrupt.trace.ids),
        corrupt_tokens=None if corrupt is None else tuple(corrupt.trace.tokens),
    )  # fmt: skip


def _descriptor(number: Number) -> dict:
    return number.model_dump(
        exclude={"corrupt_job", "model", "ids", "tokens", "corrupt_ids", "path"}, exclude_none=True
    )


@router.get("/programs/words")
def program_words() -> dict:
    """The 'How is this computed?' control's words and each view's numbers."""
    return control_words()


@router.get("/jobs/{job_id}/program", response_model=ProgramOut, responses=ERRORS)
def job_program(job_id: JobId, number: Annotated[NumberOfTrace, Query()]) -> dict:
    """The NumPy program behind one number of a kept trace: it reads the model file and prints the number."""
    job = line.done(job_id)
    corrupt = None if number.corrupt_job is None else line.done(number.corrupt_job)
    if corrupt is not None and corrupt.trace.model != job.trace.model:
        raise line.error(("corrupt_job",), other_model(registry.title(corrupt.trace.model)), where="query")
    src = _of_trace(job, corrupt)
    try:
        return program_answer(src, _descriptor(number))
    except FieldError as error:
        raise line.refused(error, where="query") from None


@router.post("/program", response_model=ProgramOut, responses={422: ERRORS[422]})
def ids_program(number: NumberOfIds) -> dict:
    """The same for token ids the caller holds (a circuits view's text; a patch's corrupted one too)."""
    try:
        spec = registry.spec(number.model)
        counter = registry.counter(spec.name)
        _in_vocabulary(number.ids, "ids", counter.vocab)
        _in_vocabulary(number.corrupt_ids or [], "corrupt_ids", counter.vocab)
        tokens = number.tokens if number.tokens is not None else [counter.text(i) for i in number.ids]
        if len(tokens) != len(number.ids):
            raise FieldError(("tokens",), tokens_differ(len(tokens), len(number.ids)))
        corrupt = number.corrupt_ids
        src = Source(
            model=spec.name, title=spec.title, ids=tuple(number.ids), tokens=tuple(tokens),
            path=number.path or _path(spec.name), n_layer=spec.n_layer, n_head=spec.n_head,
            d_head=spec.d_head, vocab=counter.vocab,
            corrupt_ids=None if corrupt is None else tuple(corrupt),
            corrupt_tokens=None if corrupt is None else tuple(counter.text(i) for i in corrupt),
        )  # fmt: skip
        return program_answer(src, _descriptor(number))
    except FieldError as error:
        raise line.refused(error) from None


def _in_vocabulary(ids: list[int], field: str, vocab: int | None) -> None:
    """Refuse the first id outside the model's vocabulary, at ``field[i]`` (a tokenizer would overflow)."""
    for i, token in enumerate(ids):
        if vocab is not None and token >= vocab:
            raise FieldError((field, i), outside_vocabulary(token, vocab))
