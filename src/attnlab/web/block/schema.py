"""The JSON shapes of the block API (``/api/block``), as pydantic models.

Requests take only finite JSON numbers of magnitude at most
``block_data.MAX_MAGNITUDE`` and exact shapes (3 tokens, d_model = 4, 2 heads
of d_k = d_v = 2, d_ff = 8); anything else is a 422 naming the field
(``weights.heads[1].w_q[2][0]``). ``x`` or ``weights`` null means the given
example's. Responses carry every number at full precision (Python floats) and,
beside it, the strings the page shows (``attnlab.lab.numbers``): the browser
never rounds. See docs/block-api.md for the whole contract.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from attnlab.lab.block.data import D_FF, D_HEAD, D_MODEL, MAX_MAGNITUDE, N_HEAD, N_TOKENS
from attnlab.lab.block.history import MAX_DETAIL
from attnlab.web.schema import Strict

Number = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_MAGNITUDE, le=MAX_MAGNITUDE)]


def _vec(n: int):
    return Annotated[list[Number], Field(min_length=n, max_length=n)]


def _mat(rows: int, cols: int):
    return Annotated[list[_vec(cols)], Field(min_length=rows, max_length=rows)]


class HeadWeights(Strict):
    """One head's projections, pre-transposed (``q = LN(H) @ w_q``): each (d_model, d_k) = (4, 2)."""

    w_q: _mat(D_MODEL, D_HEAD)
    w_k: _mat(D_MODEL, D_HEAD)
    w_v: _mat(D_MODEL, D_HEAD)


class NormWeights(Strict):
    """LayerNorm's scale ``gamma`` and shift ``beta``, (d_model,) each."""

    gamma: _vec(D_MODEL)
    beta: _vec(D_MODEL)


class BlockWeights(Strict):
    """Every weight of the block: 2 heads, ``w_o`` (4, 4), two norms, the MLP (d_ff = 8)."""

    heads: Annotated[list[HeadWeights], Field(min_length=N_HEAD, max_length=N_HEAD)]
    w_o: _mat(N_HEAD * D_HEAD, D_MODEL)
    norm_1: NormWeights
    norm_2: NormWeights
    w_1: _mat(D_MODEL, D_FF)
    b_1: _vec(D_FF)
    w_2: _mat(D_FF, D_MODEL)
    b_2: _vec(D_MODEL)


class BlockRequest(Strict):
    """The block's inputs and options; null ``x``/``weights`` mean the given example's."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"x": None, "weights": None, "norm": "pre", "positions": "none"}]},
    )

    x: _mat(N_TOKENS, D_MODEL) | None = None
    weights: BlockWeights | None = None
    norm: Literal["pre", "post"] = "pre"
    positions: Literal["none", "sinusoidal", "rope"] = "none"
    heads_on: Annotated[list[StrictBool], Field(min_length=N_HEAD, max_length=N_HEAD)] = [True, True]

    def lab_args(self) -> dict:
        """Keyword arguments for ``attnlab.lab.block.walk.walk``."""
        return {
            "x": self.x,
            "weights": None if self.weights is None else self.weights.model_dump(),
            "norm": self.norm,
            "positions": self.positions,
            "heads_on": tuple(self.heads_on),
        }


ChallengeId = Annotated[str, Field(max_length=40)]
Response_ = (
    Annotated[
        list[Annotated[float, Field(strict=True, allow_inf_nan=False)]], Field(min_length=1, max_length=4)
    ]
    | Annotated[str, Field(max_length=40)]
    | None
)


class HelpIn(Strict):
    kind: Literal["hint", "answer", "stepper", "playback", "python", "explorer"]
    detail: Annotated[StrictInt, Field(ge=1, le=MAX_DETAIL)] | None = None


class FeedbackIn(Strict):
    """A check's feedback; ``words`` is ``{"text", "claims"}`` (the text alone in older studies).
    ``lab.study`` checks the sentence and remakes the verdict."""

    met: StrictBool
    verdict: dict[str, Any] | None = None
    words: Annotated[str, Field(max_length=2000)] | dict[str, Any]


class AttemptIn(Strict):
    response: Response_ = None
    feedback: FeedbackIn | None = None
    help: Annotated[list[HelpIn], Field(max_length=200)] = []


class EntryIn(Strict):
    current: Annotated[StrictInt, Field(ge=0, le=49)]  # an index of its attempts
    attempts: Annotated[list[AttemptIn], Field(min_length=1, max_length=50)]


class ActiveIn(Strict):
    challenge: ChallengeId
    attempt: Annotated[StrictInt, Field(ge=0, le=49)]


class StudyIn(Strict):
    """The block part's attempts and help, in ``attnlab.lab.notebook.history``'s shape."""

    version: Literal[1] = 1
    active: ActiveIn | None = None
    before: Annotated[list[HelpIn], Field(max_length=200)] = []
    challenges: dict[ChallengeId, EntryIn] = {}


class ActionIn(Strict):
    """``open``/``clear``/``retry`` (challenge), ``submit`` (challenge, response),
    ``goto`` (challenge, attempt), ``help`` (help, detail; hint and answer name their challenge)."""

    kind: Literal["open", "submit", "clear", "retry", "goto", "help"]
    challenge: ChallengeId | None = None
    response: Response_ = None
    attempt: Annotated[StrictInt, Field(ge=0, le=49)] | None = None
    help: Literal["hint", "answer", "stepper", "playback", "python", "explorer"] | None = None
    detail: Annotated[StrictInt, Field(ge=1, le=MAX_DETAIL)] | None = None


class StudyRequest(Strict):
    block: BlockRequest = BlockRequest()
    study: StudyIn = StudyIn()
    action: ActionIn


# --- responses (the main fields; docs/block-api.md lists every one) -----------------

Floats = list[float]
Strings = list[str]


class Said(BaseModel):
    """A shown sentence and the facts it asserts (``lab.said.said``)."""

    text: str
    claims: dict[str, Any]


class TensorOut(BaseModel):
    """One intermediate: ``values`` at full precision, ``display`` rounded, ``precise`` repr strings,
    ``formula_shown`` what follows the label, ``sums`` each cell's line under the table."""

    name: str
    label: str
    formula: str
    formula_shown: str
    rows: Strings
    cols: Strings
    values: list[Floats]
    display: list[Strings]
    precise: list[Strings]
    expansions: list[Strings] | None = None
    sums: list[Strings]


class StepOut(BaseModel):
    id: str
    title: str
    heading: str
    link: str
    side_heading: str
    caption: Said
    tensors: list[TensorOut]
    head: int | None = None


class ExplorerOut(BaseModel):
    """A ready-made explorer state (``POST /api/trace`` body) for one head's row."""

    labels: Strings
    q: Floats
    keys: list[Floats]
    values: list[Floats]
    allowed: list[bool]
    scale: float | None


class HeadOut(BaseModel):
    index: int
    name: str
    on: bool
    kind: str  # lab.realmodel.kinds' kind of its weights, whether the head is on or off
    kind_scores: dict[str, float | None]  # its previous-token, first-token, self and breadth scores
    sentence: Said
    title: str
    switch_label: str
    map_label: str
    open_labels: Strings
    q: list[Floats]
    k: list[Floats]
    v: list[Floats]
    dots: list[Floats]
    scores: list[Floats]
    weights: list[Floats]
    allowed: list[list[bool]]
    output: list[Floats]
    display: dict[str, Any]
    explorer: list[ExplorerOut]


class BlockResponse(BaseModel):
    choices: dict[str, list[Strings]]
    words: dict[str, Any]  # the section's fixed labels and hints (lab.block.words.section_words)
    inputs: dict[str, Any]
    steps: list[StepOut]
    playback: dict[str, Any]
    heads: list[HeadOut]
    output: list[Floats]
    output_display: list[Strings]
    ablation: list[dict[str, Any]]
    norm_compare: dict[str, Any]
    rope: dict[str, Any]
    summary: Said
    python: str
