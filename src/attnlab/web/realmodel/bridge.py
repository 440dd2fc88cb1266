"""The bridge to real models: ``GET /api/models/jobs/{id}/bridge/{layer}/{head}/{query}``.

One real query row in the explorer's terms (:func:`attnlab.lab.realmodel.bridge.bridge_view`):
that head's q and keys at full precision, the explorer's Match / Share / Mix
numbers and words, and the plane of q and its top key, labelled as a projection.
Answers from the trace kept in this process (no model work); bad layer, head or
query is a 422 at its path field.
"""

from __future__ import annotations

import json

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel

from attnlab.lab.realmodel.bridge import bridge_view
from attnlab.web.realmodel import line
from attnlab.web.realmodel.line import ERRORS, Index, JobId
from attnlab.web.realmodel.schema import RowPlace, Said

router = APIRouter(prefix="/api/models", tags=["models"])


class BridgeTrace(BaseModel):
    q: list[float]
    keys: list[list[float]]
    labels: list[str]
    allowed: list[bool]
    scale: float
    d_k: int
    d_v: int
    dots: list[float]
    scores: list[float]
    m: float
    exps: list[float]
    z: float
    weights: list[float]
    output: list[float]
    blocked: list[int]
    underflowed: list[int]


class BridgeView(RowPlace):
    """The shape of the bridge's answer (documentation; the route sends plain JSON)."""

    d_k: int
    d_v: int
    n_keys: int
    title: str
    lede: Said
    text: dict[str, str]  # the disclosures' summaries and the figure's labels
    trace: BridgeTrace
    display: dict
    words: dict[str, Said]
    geometry: dict
    plane: dict


@router.get(
    "/jobs/{job_id}/bridge/{layer}/{head}/{query}",
    response_model=None,
    responses={200: {"model": BridgeView}, **ERRORS},
)
def job_bridge(job_id: JobId, layer: Index, head: Index, query: Index) -> Response:
    """Query ``query``'s row in ``layer``/``head`` as the explorer computes and shows it."""
    job = line.done(job_id)
    body = {"job": job.id, **line.checked(lambda: bridge_view(job.trace, layer, head, query))}
    return Response(json.dumps(body, allow_nan=False, separators=(",", ":")), media_type="application/json")
