"""The notebook's JSON API: playback, practice, history, content, export and import.

Everything under ``/api/notebook``. The browser holds the visit's state (the
held example and the study) and sends it with each request; the server
validates it, applies the rules in ``attnlab.lab`` and returns what the page
draws. Nothing is stored on the server, so reloading the page clears the
visit. The held example itself, its edits and its stepper are the page's one
state, ``POST /api/state`` (``web.explorer.routes``). Errors are 422 with the
field (``study.before[0].kind``, ``held.values[2][0]``):
the lab raises ``FieldError`` located in the request body, and
``web.errors.field_error_handler`` answers it (``held`` errors get ``held``
in front here).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import Field, StrictBool, StrictInt

from attnlab.lab import content as content_data
from attnlab.lab.explorer.sequence import Held
from attnlab.lab.limits import MAX_MAGNITUDE
from attnlab.lab.notebook import export, practice
from attnlab.lab.notebook import history as hist
from attnlab.lab.notebook import playback as playback_data
from attnlab.web.explorer.schema import HeldIn
from attnlab.web.schema import Strict, errors

router = APIRouter(prefix="/api/notebook", tags=["notebook"])

ERRORS = errors(413, 422)

Number = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)
]


class HeldRequest(Strict):
    held: HeldIn


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
    """A check's feedback; ``words`` is ``{"text", "claims"}`` (the text alone in older studies).
    ``lab.study`` checks the sentence and remakes the verdict."""

    met: StrictBool
    verdict: dict[str, Any] | None = None
    words: Annotated[str, Field(max_length=hist.MAX_WORDS)] | dict[str, Any]
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
    current: Annotated[StrictInt, Field(ge=0, le=hist.MAX_ATTEMPTS - 1)]  # an index of its attempts
    attempts: Annotated[list[AttemptIn], Field(min_length=1, max_length=hist.MAX_ATTEMPTS)]


class ActiveIn(Strict):
    challenge: ChallengeId
    attempt: Annotated[StrictInt, Field(ge=0, le=hist.MAX_ATTEMPTS - 1)]


class StudyIn(Strict):
    """The visit's attempts and help (see ``attnlab.lab.notebook.history``)."""

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
    attempt: Annotated[StrictInt, Field(ge=0, le=hist.MAX_ATTEMPTS - 1)] | None = None
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
    name: Annotated[str, Field(max_length=255)] | None = None  # the file's name, for the page's words


# --- helpers --------------------------------------------------------------------

# The lab's FieldErrors are located in the request body (``("edit", "q", 0)``,
# ``("study", "before", 0, "kind")``, ``("action", "response")``) and escape to the
# app's field_error_handler; only the held example's are re-located, under "held".


def _held(model: HeldIn) -> Held:
    return model.to_held("held")


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
    ``history`` (the attempts, checks and help), which the page then restores,
    with the page's ``message`` (``lab.notebook.export.import_answer``).
    """
    return export.import_answer(body.text, body.name)
