"""The notebook's JSON API: the held sequence, stepper, playback, practice, history, export.

Everything under ``/api/notebook``. The browser holds the visit's state (the
held example and the study) and sends it with each request; the server
validates it, applies the rules in ``attnlab.lab`` and returns what the page
draws. Nothing is stored on the server, so reloading the page clears the
visit. Errors are 422 with the field (``edit.q[0]``, ``study.before[0].kind``):
the lab raises ``FieldError`` located in the request body, and
``web.errors.field_error_handler`` answers it (``held`` errors get ``held``
in front here). A mask change that would leave a row with nothing allowed is
a 422 of type ``mask_refused`` and changes nothing.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from attnlab.engine.errors import FieldError
from attnlab.lab import content as content_data
from attnlab.lab import history as hist
from attnlab.lab.notebook import export, practice, stepper
from attnlab.lab.notebook import playback as playback_data
from attnlab.lab.notebook.sequence import (
    MAX_MAGNITUDE,
    N_TOKENS,
    STARTING,
    WIDTH,
    Held,
    apply_edit,
    held_from_dict,
    sequence_view,
)
from attnlab.web.explorer.schema import ErrorResponse

router = APIRouter(prefix="/api/notebook", tags=["notebook"])

ERRORS = {
    413: {"model": ErrorResponse, "description": "The request body is too large"},
    422: {"model": ErrorResponse, "description": "A field the learner has to fix"},
}

Number = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)
]
Pair = Annotated[list[Number], Field(min_length=WIDTH, max_length=WIDTH)]
Rows = Annotated[list[Pair], Field(min_length=N_TOKENS, max_length=N_TOKENS)]
MaskRow = Annotated[list[StrictBool], Field(min_length=N_TOKENS, max_length=N_TOKENS)]
Index = Annotated[StrictInt, Field(ge=0, le=N_TOKENS - 1)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HeldIn(Strict):
    """The held example: 3 tokens of 2 coordinates; ``mask[r][i]`` true = row r may attend to i.

    ``row`` is the explorer's row; ``masked`` false means its unmasked projection.
    """

    id: Annotated[str, Field(min_length=1, max_length=64)] = STARTING.id
    labels: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=32)]],
        Field(min_length=N_TOKENS, max_length=N_TOKENS),
    ]
    queries: Rows
    keys: Rows
    values: Rows
    mask: Annotated[list[MaskRow], Field(min_length=N_TOKENS, max_length=N_TOKENS)]
    row: Index = 0
    masked: StrictBool = False


class EditIn(Strict):
    """One edit: ``query`` (q), ``value`` (source, coord, x), ``values`` (values),
    ``mask`` (row, source, allowed), ``select`` (row, masked) or ``reset``."""

    kind: Literal["query", "value", "values", "mask", "select", "reset"]
    q: Pair | None = None
    source: Index | None = None
    coord: Annotated[StrictInt, Field(ge=0, le=WIDTH - 1)] | None = None
    x: Number | None = None
    values: Rows | None = None
    row: Index | None = None
    allowed: StrictBool | None = None
    masked: StrictBool | None = None


class HeldRequest(Strict):
    held: HeldIn


class EditRequest(Strict):
    held: HeldIn
    edit: EditIn


class StateRequest(Strict):
    """``POST /api/state``: the held example and the edits to apply first, in order (0 to 4)."""

    held: HeldIn
    edits: Annotated[list[EditIn], Field(max_length=4)] = []


HelpKind = Literal[tuple(hist.HELP_KINDS)]
ChallengeId = Literal[tuple(c["id"] for c in practice.challenges())]
Response_ = (
    Annotated[list[Number], Field(min_length=2, max_length=3)]
    | Annotated[str, Field(max_length=32)]
    | None
)


class HelpIn(Strict):
    kind: HelpKind
    detail: Annotated[StrictInt, Field(ge=1, le=4)] | None = None


class FeedbackIn(Strict):
    met: StrictBool
    words: Annotated[str, Field(max_length=hist.MAX_WORDS)]
    load: StrictBool = False


class CheckIn(Strict):
    response: Response_ = None
    met: StrictBool


class AttemptIn(Strict):
    response: Response_ = None
    feedback: FeedbackIn | None = None
    help: Annotated[list[HelpIn], Field(max_length=hist.MAX_HELP)] = []
    checks: Annotated[list[CheckIn], Field(max_length=hist.MAX_CHECKS)] = []
    answer: Annotated[str, Field(max_length=hist.MAX_WORDS)] | None = None


class EntryIn(Strict):
    current: Annotated[StrictInt, Field(ge=0)]
    attempts: Annotated[list[AttemptIn], Field(min_length=1, max_length=hist.MAX_ATTEMPTS)]


class ActiveIn(Strict):
    challenge: ChallengeId
    attempt: Annotated[StrictInt, Field(ge=0)]


class StudyIn(Strict):
    """The visit's attempts and help (see ``attnlab.lab.history``)."""

    version: Literal[1] = 1
    active: ActiveIn | None = None
    before: Annotated[list[HelpIn], Field(max_length=hist.MAX_HELP)] = []
    challenges: dict[ChallengeId, EntryIn] = {}


class ActionIn(Strict):
    """``open``/``clear``/``retry`` (challenge), ``submit`` (challenge, response),
    ``goto`` (challenge, attempt), ``help`` (help, detail; a hint names its challenge)."""

    kind: Literal["open", "submit", "clear", "retry", "goto", "help"]
    challenge: ChallengeId | None = None
    response: Response_ = None
    attempt: Annotated[StrictInt, Field(ge=0)] | None = None
    help: HelpKind | None = None
    detail: Annotated[StrictInt, Field(ge=1, le=4)] | None = None


class StudyRequest(Strict):
    held: HeldIn
    study: StudyIn
    action: ActionIn


class ExportRequest(Strict):
    held: HeldIn
    study: StudyIn = StudyIn()


class ImportRequest(Strict):
    text: Annotated[str, Field(max_length=export.MAX_IMPORT_BYTES)]


# --- helpers --------------------------------------------------------------------

# The lab's FieldErrors are located in the request body (``("edit", "q", 0)``,
# ``("study", "before", 0, "kind")``, ``("action", "response")``) and escape to the
# app's field_error_handler; only the held example's are re-located, under "held".


class ImportRefused(FieldError):
    """An import that cannot be read, at ``text`` (the message says why)."""

    type = "import_refused"


def held_in(model: HeldIn) -> Held:
    """Validate a request's held example (its FieldErrors located under ``held``)."""
    return _held(model)


def _held(model: HeldIn) -> Held:
    try:
        return held_from_dict(model.model_dump())
    except FieldError as err:  # its message names the held field; the 422 adds "held." in front
        raise type(err)(("held", *err.loc), str(err)) from None


def _study(model: StudyIn) -> dict:
    return hist.study_from_dict(model.model_dump())


def _attachment(body: str, media_type: str, filename: str) -> Response:
    return Response(
        body,
        media_type=media_type,
        headers={"content-disposition": f'attachment; filename="{filename}"'},
    )


def _media(media_type: str, schema: dict | None = None) -> dict:
    """Document a 200 answer of ``media_type`` (text unless ``schema`` says otherwise)."""
    return {200: {"content": {media_type: {"schema": schema or {"type": "string"}}}}, **ERRORS}


# a Jupyter notebook (nbformat 4) is a JSON object; "+json" media types are read as JSON
_NOTEBOOK_SCHEMA = {
    "type": "object",
    "required": ["cells", "metadata", "nbformat", "nbformat_minor"],
    "properties": {"cells": {"type": "array"}, "nbformat": {"const": 4}},
}


# --- routes ----------------------------------------------------------------------


@router.get("/example")
def get_example() -> dict:
    """Return the starting held example and its sequence view."""
    return sequence_view(STARTING)


@router.post("/sequence", responses=ERRORS)
def post_sequence(body: HeldRequest) -> dict:
    """Return the 3x3 scores and weights, each row's output and the explorer's row."""
    return sequence_view(_held(body.held))


@router.post("/edit", responses=ERRORS)
def post_edit(body: EditRequest) -> dict:
    """Apply one edit by the page's rules and return the new sequence view.

    A mask change that empties a row is refused (422, ``mask_refused``).
    """
    return sequence_view(apply_edit(_held(body.held), body.edit.model_dump(exclude_none=True)))


@router.post("/stepper", responses=ERRORS)
def post_stepper(body: HeldRequest) -> dict:
    """Return the four steps for the explorer's row of the held example."""
    return stepper.stepper(_held(body.held).explorer_trace())


@router.get("/playback")
def get_playback() -> dict:
    """Return the guided playback: captions and the engine's frames (starting example)."""
    return playback_data.playback()


@router.get("/practice")
def get_practice() -> dict:
    """Return the challenges: title, prompt, response form and tiered hints."""
    return practice.page_data()


@router.post("/study", responses=ERRORS)
def post_study(body: StudyRequest) -> dict:
    """Apply one practice or help action to the visit's study and return it with its history."""
    held = _held(body.held)
    new = hist.apply(_study(body.study), body.action.model_dump(exclude_none=True), held)
    return {"study": new, "history": hist.history(new)}


@router.get("/content")
def get_content() -> dict:
    """Return why it matters, questions, the core math as MathML, papers and connections."""
    return content_data.content()


@router.post("/export/json", responses=ERRORS)
def post_export_json(body: ExportRequest) -> dict:
    """Return the export document: the held example, its numbers and the study history."""
    return export.to_json(_held(body.held), _study(body.study))


@router.post("/export/markdown", response_class=Response, responses=_media("text/markdown"))
def post_export_markdown(body: ExportRequest) -> Response:
    """Return the readable Markdown report."""
    text = export.to_markdown(_held(body.held), _study(body.study))
    return _attachment(text, "text/markdown", "attnlab-study.md")


@router.post(
    "/export/ipynb", response_class=Response, responses=_media("application/x-ipynb+json", _NOTEBOOK_SCHEMA)
)
def post_export_ipynb(body: HeldRequest) -> Response:
    """Return the worked example as a Jupyter notebook that reproduces the page's numbers."""
    text = export.notebook_text(_held(body.held))
    return _attachment(text, "application/x-ipynb+json", "attnlab-worked-example.ipynb")


@router.post("/import", responses=ERRORS)
def post_import(body: ImportRequest) -> dict:
    """Read an exported JSON file's text back, or 422 and why.

    Returns its sequence view and, when the file carries one, its ``study`` and
    ``history`` (the attempts, checks and help), which the page then restores.
    """
    try:
        held, study = export.read(body.text)
    except FieldError as err:  # wherever in the file, for the request it is the text that is refused
        raise ImportRefused("text", f"Import refused: {err}") from None
    view = sequence_view(held)
    if study is not None:
        view = {**view, "study": study, "history": hist.history(study)}
    return view
