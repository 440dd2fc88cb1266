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

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from attnlab.engine.errors import FieldError
from attnlab.engine.single import MAX_DIM, MAX_LABEL_LENGTH, MAX_SOURCES
from attnlab.lab import limits
from attnlab.lab.explorer import sequence as seq
from attnlab.lab.explorer.examples import WORKED
from attnlab.lab.limits import MAX_MAGNITUDE
from attnlab.web.schema import Strict

# strict: a JSON number (int or float), never a string or a boolean; finite and
# within the lab's one drawing limit (lab.limits.MAX_MAGNITUDE, ±1,000,000),
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
        json_schema_extra={"examples": [WORKED.to_dict()]},  # the worked example, declared once
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


# --- the page's one state: the held example and its edits ----------------------
# Shapes only (at most limits.MAX_SOURCES sources of seq.WIDTH coordinates); the
# cross-field rules (one query or one per source, the mask's rows) are the lab's
# (``lab.explorer.sequence.held_from_dict``), located at the field.

Pair = Annotated[list[Number], Field(min_length=seq.WIDTH, max_length=seq.WIDTH)]
Rows = Annotated[list[Pair], Field(min_length=1, max_length=limits.MAX_SOURCES)]
MaskRow = Annotated[list[StrictBool], Field(min_length=1, max_length=limits.MAX_SOURCES)]
Index = Annotated[StrictInt, Field(ge=0, le=limits.MAX_SOURCES - 1)]


class HeldIn(Strict):
    """The page's one example: S sources (1 to 8) of 2 coordinates, with one query or one per source.

    ``mask[r][i]`` true = row r may attend to source i; ``row`` is the explorer's
    row; ``masked`` false means its unmasked projection (a sequence only);
    ``scale`` multiplies q·k (absent or null: divide by sqrt(2)).
    """

    id: Annotated[str, Field(min_length=1, max_length=64)] = seq.STARTING.id
    labels: Annotated[list[Label], Field(min_length=1, max_length=limits.MAX_SOURCES)]
    queries: Rows
    keys: Rows
    values: Rows
    mask: Annotated[list[MaskRow], Field(min_length=1, max_length=limits.MAX_SOURCES)]
    row: Index = 0
    masked: StrictBool = False
    scale: Annotated[float, Field(strict=True, allow_inf_nan=False, gt=0, le=MAX_MAGNITUDE)] | None = None

    def to_held(self, *where: str | int) -> seq.Held:
        """Validate into the lab's ``Held``; its FieldErrors are located under ``where``."""
        try:
            return seq.held_from_dict(self.model_dump())
        except FieldError as err:
            raise err.within(*where) from None


class EditIn(Strict):
    """One edit of the state: ``query`` (q), ``value`` (source, coord, x), ``values`` (values),
    ``mask`` (row, source, allowed), ``select`` (row, masked) or ``reset``."""

    kind: Literal[seq.EDITS]
    q: Pair | None = None
    source: Index | None = None
    coord: Annotated[StrictInt, Field(ge=0, le=seq.WIDTH - 1)] | None = None
    x: Number | None = None
    values: Rows | None = None
    row: Index | None = None
    allowed: StrictBool | None = None
    masked: StrictBool | None = None


class StateRequest(Strict):
    """``POST /api/state`` and each message on ``/api/state/ws``: the held example
    and the edits to apply to it, in order (0 to 4)."""

    held: HeldIn
    edits: Annotated[list[EditIn], Field(max_length=4)] = []

    def args(self) -> tuple[seq.Held, list[dict]]:
        """The lab's held example and the edits as plain data (errors located under ``held``)."""
        edits = [e.model_dump(exclude_none=True) for e in self.edits]
        return self.held.to_held("held"), edits


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
    """The summary sentence and the Match / Share / Mix paragraphs, with the facts each asserts."""

    summary: str
    match: str
    share: str
    mix: str
    claims: dict[str, dict] = {}


class SaidOut(BaseModel):
    """A label or sentence with the facts it asserts (``lab.explorer.display.labels``)."""

    text: str
    claims: dict


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

    title: SaidOut
    available: bool
    message: str
    active: bool
    summary: SaidOut | None
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


class TickOut(BaseModel):
    at: float
    text: str


class TicksOut(BaseModel):
    x: list[TickOut]
    y: list[TickOut]


class ViewOut(BaseModel):
    xmin: float
    xmax: float
    ymin: float
    ymax: float
    step: float
    ticks: TicksOut


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
    score_ticks: list[str]


class ChallengeOut(BaseModel):
    goal: str
    target: str
    available: bool
    share: float | None
    met: bool
    status: str
    claims: dict = {}
    id: str = ""


class SourceDisplay(BaseModel):
    """One source's numbers as the page writes them."""

    label: str
    index: int
    allowed: bool
    key_mark: str
    value_mark: str
    share_mark: str
    score_mark: str
    card_title: str
    card_index: str
    carry_term: list[list[str]]
    value_legend: str
    value_fields: list[str]
    key: str
    value: str
    dot: str
    score: str
    share: str
    percent: str
    carry: str
    precise: str


class OffMarks(BaseModel):
    """One plane's off-plot markers' labels (in ``geometry``'s order) and its note ("" when none)."""

    marks: list[str]
    note: str


class DisplayOut(BaseModel):
    """Every number the page shows, already rounded (3 decimals) or at full precision, and the
    pictures' labels (``q_mark``, each source's marks, ``off``) and fixed words (``words``)."""

    q: str
    q_mark: str
    output_mark: str
    precise_q: str
    precise_output: str
    query_steps: dict[str, float]
    words: dict[str, str]
    off: dict[str, OffMarks]
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
    labels: dict[str, SaidOut] = {}


class StripOut(BaseModel):
    """The phone strip: "A 14%" per source (as the Share table) and "o = [..]"."""

    shares: list[str]
    output: str
    pie: str
    mix: str


class TraceResponse(BaseModel):
    """Everything the explorer draws for one state."""

    trace: TraceOut
    display: DisplayOut
    strip: StripOut
    words: WordsOut
    compare: CompareOut
    python: str
    geometry: GeometryOut
    challenge: ChallengeOut


class StateAnswer(BaseModel):
    """Everything the page draws for one state (``POST /api/state``): the held example's
    view (``sequence``, whose ``example`` is the new state), the explorer's row and the stepper."""

    sequence: dict
    explorer: TraceResponse
    stepper: dict


class ExampleOut(StateAnswer):
    """The page's first answer: the worked example's state answer (its ``sequence.example``
    is the worked A/B/C sequence, declared once in ``lab.explorer.examples``)."""


