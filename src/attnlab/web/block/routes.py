"""The block section's JSON API: the walk, practice, study history and export.

Everything under ``/api/block`` (contract: ``docs/block-api.md``). Routes are
thin: validate (``web.block.schema``), call one lab function, return. The
lab's ``FieldError``s are answered 422 at their field by the app's handler.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from attnlab.lab.block import data as block_data
from attnlab.lab.block import export as block_export
from attnlab.lab.block import history as block_history
from attnlab.lab.block import practice as block_practice
from attnlab.lab.block.page import block_page
from attnlab.web.block.schema import BlockRequest, BlockResponse, StudyRequest
from attnlab.web.schema import errors

router = APIRouter(prefix="/api/block", tags=["block"])

ERRORS = errors(413, 422)


def _attachment(body: str, media_type: str, filename: str) -> Response:
    return Response(
        body, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{filename}"'}
    )


@router.get("/example")
def get_block_example() -> dict:
    """Return the given example: what "Reset" restores."""
    return block_data.example()


@router.post("", response_model=BlockResponse, responses=ERRORS)
def post_block(body: BlockRequest) -> dict:
    """Return the walk through the block, every step's numbers, words and Python."""
    return block_page(**body.lab_args())


@router.get("/practice")
def get_block_practice() -> dict:
    """Return the block's challenges (title, prompt, response form, tiered hints) and the panel's words."""
    return block_practice.page_data()


@router.post("/study", responses=ERRORS)
def post_block_study(body: StudyRequest) -> dict:
    """Apply one practice or help action to the block part's study; return it with its history.

    A ``submit`` checks its challenge on ``block`` (the learner's block as the page shows it).
    """
    study = block_history.study_from_dict(body.study.model_dump())
    new, answer = block_history.apply(study, body.action.model_dump(exclude_none=True), body.block.lab_args())
    return {"study": new, "history": block_history.history(new), "answer": answer}


@router.post(
    "/export/ipynb",
    response_class=Response,
    responses={200: {"content": {"application/x-ipynb+json": {}}}, **ERRORS},
)
def post_block_export_ipynb(body: BlockRequest) -> Response:
    """Return the block walk as a Jupyter notebook that prints the page's numbers."""
    text = block_export.notebook_text(**body.lab_args())
    return _attachment(text, "application/x-ipynb+json", "attnlab-block.ipynb")


@router.post(
    "/export/markdown", response_class=Response, responses={200: {"content": {"text/markdown": {}}}, **ERRORS}
)
def post_block_export_markdown(body: BlockRequest) -> Response:
    """Return the block walk as Markdown."""
    text = block_export.to_markdown(**body.lab_args())
    return _attachment(text, "text/markdown", "attnlab-block.md")
