"""The JSON shapes of the lab's API, as pydantic models (they make the OpenAPI schema).

Requests are capped at the engine's limits (``MAX_SOURCES`` sources,
``MAX_DIM`` coordinates, ``MAX_LABEL_LENGTH`` characters) and take only
finite JSON numbers and real booleans. Cross-field rules (equal widths,
distinct labels, one allowed source at least) are the engine's, which raises
a ``FieldError`` located at the field and index; the API answers 422 there.

Numbers in responses are Python floats at full precision; every number the
page shows also comes pre-formatted in ``display`` (``attnlab.lab.numbers``),
so the browser never rounds.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from attnlab.engine.single import MAX_DIM, MAX_LABEL_LENGTH, MAX_SOURCES
from attnlab.lab.notebook.sequence import MAX_MAGNITUDE

# strict: a JSON number (int or float), never a string or a boolean; finite and
# within the lab's one drawing limit (lab.sequence.MAX_MAGNITUDE, ±1,000,000),
# the same limit the held example applies, so the explorer never accepts a
# number the held example refuses and the planes can always draw what is typed.
Number = Annotated[
    float, Field(strict=True, allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)
]
Coords = Annotated[list[Number], Field(min_length=1, max_length=MAX_DIM)]
Matrix = Annotated[list[Coords], Field(min_length=1, max_length=MAX_SOURCES)]
Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_LENGTH)]


class LabState(BaseModel):
    """The explorer's inputs: one query over N labelled sources.

    ``q`` has d_k coordinates; ``keys`` is N x d_k; ``values`` is N x d_v.
    ``allowed[i]`` true means q may attend to source i (default: all).
    ``scale`` multiplies the dot products (default: divide by sqrt(d_k)).
    """

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "q": [2, 1],
                    "keys": [[-1, 2], [1, 0], [0, 1]],
                    "values": [[2, 0], [0, 2], [-1, -1]],
                    "labels": ["A", "B", "C"],
                }
            ]
        },
    )

    q: Coords
    keys: Matrix
    values: Matrix
    labels: Annotated[list[Label], Field(min_length=1, max_length=MAX_SOURCES)] | None = None
    allowed: Annotated[list[StrictBool], Field(min_length=1, max_length=MAX_SOURCES)] | None = None
    scale: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0)] | None = None

    def engine_args(self) -> dict:
        """Return keyword arguments for ``trace_query`` (ints become floats there)."""
        return {
            "q": self.q,
            "keys": self.keys,
            "values": self.values,
            "labels": self.labels,
            "allowed": self.allowed,
            "scale": self.scale,
        }


# --- responses --------------------------------------------------------------

Floats = list[float]


class TraceOut(BaseModel):
    """``QueryTrace.to_dict()``: every number at full precision, in source order."""

    q: Floats
    keys: list[Floats]
    values: list[Floats]
    labels: list[str]
    allowed: list[bool]
    scale: float | None
    d_k: int
    d_v: int
    dots: Floats
    scores: Floats
    m: float
    exps: Floats
    z: float
    weights: Floats
    carries: list[Floats]
    output: Floats
    blocked: list[int]
    underflowed: list[int]


class WordsOut(BaseModel):
    """The summary sentence and the Match / Share / Mix paragraphs."""

    summary: str
    match: str
    share: str
    mix: str


class ChangedOut(BaseModel):
    """True where a number differs from the reference's by more than 1e-12."""

    dots: list[bool]
    scores: list[bool]
    m: bool
    z: bool
    weights: list[bool]
    carries: list[list[bool]]
    output: list[bool]


class ReferenceDisplay(BaseModel):
    """The reference's numbers, rounded as the page shows them."""

    q: str
    scores: list[str]
    weights: list[str]
    output: str


class CompareOut(BaseModel):
    """The comparison with q = [2, 1] over the same keys and values.

    ``available`` is false (with ``message``) when the reference itself
    cannot be computed, e.g. its scores overflow. ``active`` is true when any
    number differs, which is when the page marks changes.
    """

    available: bool
    message: str
    active: bool
    summary: str | None
    reference: TraceOut | None
    changed: ChangedOut | None
    display: ReferenceDisplay | None


class ArrowOut(BaseModel):
    index: int
    start: Floats
    end: Floats


class SliceOut(BaseModel):
    index: int
    start: float
    end: float


class ViewOut(BaseModel):
    xmin: float
    xmax: float
    ymin: float
    ymax: float
    step: float


class OffPlotOut(BaseModel):
    """A point its plane cannot hold: drawn as a marker at ``edge`` (see geometry.off_plot)."""

    kind: str
    index: int | None
    edge: Floats | None


class GeometryOut(BaseModel):
    """What the planes, the pie and the strips draw (see ``attnlab.lab.explorer.geometry``)."""

    projections: list[Floats | None]
    arrows: list[ArrowOut]
    hull: list[Floats] | None
    pie: list[SliceOut]
    reference_pie: list[SliceOut] | None
    key_view: ViewOut | None
    value_view: ViewOut | None
    key_off: list[OffPlotOut] = []
    value_off: list[OffPlotOut] = []
    score_axis: Floats


class ChallengeOut(BaseModel):
    goal: str
    target: str
    available: bool
    share: float | None
    met: bool
    status: str


class SourceDisplay(BaseModel):
    """One source's numbers as the page writes them."""

    label: str
    index: int
    allowed: bool
    key: str
    value: str
    dot: str
    score: str
    share: str
    percent: str
    carry: str
    precise: str


class DisplayOut(BaseModel):
    """Every number the page shows, already rounded (3 decimals) or at full precision."""

    q: str
    q_coords: list[str]
    q_precise: str
    keys_coords: list[list[str]]
    values_coords: list[list[str]]
    scale: str
    m: str
    z: str
    output: str
    output_precise: str
    m_z_precise: str
    sources: list[SourceDisplay]


class TraceResponse(BaseModel):
    """Everything the explorer draws for one state."""

    trace: TraceOut
    display: DisplayOut
    words: WordsOut
    compare: CompareOut
    python: str
    geometry: GeometryOut
    challenge: ChallengeOut


class ResetOut(BaseModel):
    """What "Reset example" restores: the query and the first value's x only."""

    q: Floats
    first_value_x: float


class ExampleOut(BaseModel):
    """The worked example: the starting state, its answer (so the page draws without
    a second round trip) and what "Reset example" restores; with the starting held
    example's view (``sequence``, as ``POST /api/state`` answers it) and its stepper."""

    state: LabState
    reset: ResetOut
    result: TraceResponse
    sequence: dict
    stepper: dict


class ErrorItem(BaseModel):
    """One problem with a request: where (``loc``, ``field``) and what (``msg``)."""

    loc: list[str | int]
    field: str
    msg: str
    type: str


class ErrorResponse(BaseModel):
    detail: list[ErrorItem]
