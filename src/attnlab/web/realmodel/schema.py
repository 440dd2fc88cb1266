"""The JSON shapes of the Real model view's API (``jobs.py`` and ``views.py``), as pydantic models.

Numbers are full-precision floats; everything the page shows also comes
pre-formatted (``*_display``, ``shares``) by ``attnlab.lab.numbers``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt

from attnlab.lab import limits
from attnlab.models import registry
from attnlab.models.jobs.texts import MAX_CHARS
from attnlab.web.schema import Strict


def _known(name: str) -> str:
    return registry.check_name(name)  # a ValueError becomes a 422 naming the field


def _enum(schema: dict[str, Any]) -> None:
    schema["enum"] = list(registry.names())  # read when a schema is generated: later models are listed


# A model's name: any name in the registry (models/registry.py), checked when a request arrives.
ModelName = Annotated[str, AfterValidator(_known), Field(json_schema_extra=_enum)]
MAX_NEW_TOKENS = limits.MAX_NEW_TOKENS
# cancelled: the server stopped before the job ended
Status = Literal["queued", "loading", "running", "done", "error", "cancelled"]


class ModelInfo(BaseModel):
    """A model on offer, as the picker lists it: what the registry knows without opening its files."""

    name: str
    title: str
    family: str
    architecture: Literal["encoder", "decoder"]
    generates: bool
    instruct: bool
    chat_default: bool
    # where it comes from: shipped with attnlab, or found (the Hugging Face cache, the models folder)
    origin: Literal["shipped", "hf-cache", "models-dir", "path", "registered"]
    group: Literal["shipped", "found"]  # the picker's group (``ModelsOut.groups`` names them)
    option: str  # the picker's text for it (lab.realmodel.sources.option)
    line: dict  # {"text", "claims"}: the model as ``attnlab models`` lists it
    parameters: int | None = None  # a found model's, read by discovery; None: not read yet
    dtype: str | None = None  # "bfloat16", a GGUF's "Q4_K_M"...; None: not read yet
    chat: bool | None = None  # whether its files carry a chat template; None: not read yet
    max_chars: int
    loaded: bool
    # what the products run on, once the worker has loaded the model: "q4_1" (SmolLM2's file's
    # blocks, compiled kernels), "stored" (a file's own numbers) or "float32"/"float64" (float weights)
    path: str | None = None


class ModelAbout(BaseModel):
    """One model as its own files describe it (``GET /api/models/about?model=``): its shapes, limits, chat."""

    name: str
    title: str
    family: str
    architecture: Literal["encoder", "decoder"]
    generates: bool
    chat: bool  # whether its files carry a chat template (no template: no chat choice)
    max_tokens: int  # the lab's cap or the model's context, the smaller
    max_chars: int
    context: int  # the most tokens the model reads (its config's)
    n_layer: int
    n_head: int
    n_kv_head: int
    d_head: int
    kv_groups: list[list[int]]
    parameters: int | None
    dtype: str | None
    loaded: bool
    path: str | None = None
    note: str  # the shapes and what the products run on, in the page's words
    # the model that "Continue the text" runs: this one if it writes, else the first that does
    writer: str
    writer_title: str
    writer_chat: bool
    writer_note: dict  # {"text", "claims"}: which model writes, in words
    chat_note: dict | None  # {"text", "claims"} where the writer has no chat template; else null


class ModelsOut(BaseModel):
    models: list[ModelInfo]
    skipped: list[dict]  # files that look like a model and are not offered: {"text", "claims"} each
    skipped_title: str  # "2 files that look like a model skipped"
    searched: dict  # {"text", "claims"}: where discovery looked
    groups: dict[str, str]  # the picker's groups' labels: "shipped", "found"
    max_chars: int
    max_tokens: int  # the lab's token cap (a model's own may be smaller: ModelAbout.max_tokens)
    max_waiting: int  # jobs that may wait besides the running one; more get 429
    trace_bytes_cap: int  # bytes of finished traces kept; least recently used go first
    trace_bytes_kept: int
    worker: Literal["process", "thread", ""]  # where model work runs ("": not started yet)
    worker_why: dict  # {"text", "claims"}: where and why, in words (lab.realmodel.worker)
    # the view's fixed sentences and templates ("{seconds}"...: lab.realmodel.page.SLOTS)
    words: dict[str, str]


class TraceIn(Strict):
    """A text to trace (at most ``MAX_CHARS`` characters and ``MAX_TOKENS`` tokens)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"model": "minilm", "text": "The cat sat on the mat."}]},
    )
    model: ModelName
    text: str


class TraceSummary(BaseModel):
    tokens: list[str]
    ids: list[int]
    has_logits: bool  # next-token views (models that generate)
    has_journey: bool
    labels: list[str]  # the row labels: "4 ⏎" (every token visible)
    # per token: index, label, short (cut for a picture's axis), exact (its text, for the hover title),
    # after (the next-token picker's text)
    shown: list[dict]
    n_layer: int
    n_head: int
    n_kv_head: int
    kv_groups: list[list[int]]
    causal: bool
    scale: float
    # the names the page shows (lab.realmodel.page.trace_names)
    scale_display: str
    layer_names: list[str]  # "layer 0", ...: the layer picker
    head_names: list[str]  # "head 4": the thumbnails
    head_options: list[str]  # "head 4 (KV head 1)" where heads share KV heads: the head picker
    kv_group_names: list[dict]  # per KV head: label "KV head 1", title {"text", "claims"}
    row_title: str  # template: {query}, {layer}, {head}, {kv_head} from the row's answer


class JobOut(BaseModel):
    id: str
    model: str
    status: Status
    place: int | None  # 0: the model is on it; n: n - 1 jobs wait before it; null once ended
    place_display: str  # "3rd in line", "at the model now", "" once ended
    progress: float
    progress_display: str
    # the status line, verbatim: "Loading SmolLM2-135M-Instruct (once per server)…" only while this
    # job loads the model, "Running layer 7 of 30" (never past n_layer), "Done: 30 layers", ...
    stage_display: str
    done: dict | None = None  # once done: "Done: 9 tokens through 6 layers." as {"text", "claims"}
    layers_done: int
    n_layer: int
    message: str
    field: str | None
    result: TraceSummary | None


class HeadOut(BaseModel):
    head: int
    kv_head: int
    kind: str
    previous: str
    first: str
    breadth: str
    weights: list[list[float]]
    shares: list[list[str]]
    # with ?details=true: this head's q (T, d_head), its KV head's k and v, the scaled scores
    # q . k * scale (T, T; null where the query may not see the key). RoPE models: after rotation.
    q: list[list[float]] | None = None
    k: list[list[float]] | None = None
    v: list[list[float]] | None = None
    scores: list[list[float | None]] | None = None


class LayerOut(BaseModel):
    job: str
    layer: int
    tokens: list[str]
    allowed: list[list[bool]]
    heads: list[HeadOut]


class SourceOut(BaseModel):
    index: int
    label: str
    exact: str  # the token's text (the label shows whitespace visibly)
    allowed: bool
    score: float | None
    score_display: str
    share: float
    share_display: str
    share_precise: str  # full precision ("" where blocked)
    title: str  # its cell in the row's strip: "2 cat: 40%"


class TopOut(BaseModel):
    label: str
    exact: str
    share: float
    share_display: str


class RowOut(BaseModel):
    job: str
    layer: int
    head: int
    kv_head: int
    index: int
    query: str
    query_exact: str
    scale_display: str
    sources: list[SourceOut]
    top: list[TopOut]
    # "Top 5 sources: …; 4 more below." with claims {"top", "more"} and parts: {"text"} or
    # {"token", "exact"} pieces that join to the text (the page marks each token, exact text on hover)
    top_words: dict
    more: str  # the table's disclosure: "All 9 keys: scaled scores and shares"
    table: dict  # caption, columns, region (the scroll box's label)
    strip_label: str
    summary: str
    match: str
    share: str


class GenerateIn(Strict):
    """Continue ``prompt`` with SmolLM2 (``chat``: as the user's turn in the chat template)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"prompt": "Once upon a time", "max_new_tokens": 20}]},
    )
    prompt: Annotated[str, Field(max_length=MAX_CHARS * 4)]
    model: ModelName | None = None  # default: the first model that generates
    chat: StrictBool = False  # False: continue the text as it is; True: answer it as the chat's user turn
    max_new_tokens: Annotated[StrictInt, Field(ge=limits.MIN_NEW_TOKENS, le=MAX_NEW_TOKENS)] = 32
    # strict: a JSON number, never a boolean or a string ("0.7", true once shared a job with 1e0)
    temperature: Annotated[
        float, Field(strict=True, ge=limits.TEMPERATURE_MIN, le=limits.TEMPERATURE_MAX, allow_inf_nan=False)
    ] = 0.0
    top_k: Annotated[StrictInt, Field(ge=0, le=limits.TOP_K_MAX)] | None = None
    top_p: Annotated[float, Field(strict=True, gt=0, le=limits.TOP_P_MAX, allow_inf_nan=False)] = 1.0
    seed: Annotated[StrictInt, Field(ge=0, le=2**32 - 1)] | None = None


class TokenP(BaseModel):
    id: int
    token: str
    label: str  # the token shown: whitespace visible (␣, ⏎, ⇥); ``exact`` is its text
    exact: str
    logit: float
    p: float
    p_display: str
    cell: str  # p as the list shows it: "77%", "77% (drawn)"


class StepOut(TokenP):
    index: int
    drawn: str  # "drawn with p 77%"
    top: list[TokenP]


class GenerationOut(BaseModel):
    """A generation job: the text so far (``pieces``, one per token) and why it stopped."""

    id: str
    status: Status
    place: int | None
    place_display: str
    tokens: int
    max_new_tokens: int
    pieces: list[str]
    text: str
    chat: bool  # whether the prompt went in as a user's turn
    mode: str  # the choice in the page's words: "Continue the text" or "Answer as the assistant (...)"
    hint: str  # said when a raw prompt got an end of turn at once: choose the chat form
    status_line: dict  # what it is doing or why it stopped: {"text", "claims"}
    steps: list[StepOut]  # one per token drawn: its distribution (after the controls) and the token
    finish: Literal["end_of_turn", "length"] | None
    message: str
    field: str | None


# The views of a kept trace (views.py, bridge.py). They document the answers (OpenAPI) and let
# tests check them; the routes serialise plain dicts for speed (a 256-token head is 65,536 numbers).
class Said(BaseModel):
    """A shown sentence and the facts it asserts (``attnlab.lab.said``): JS places ``text``."""

    text: str
    claims: dict


class TokensOut(BaseModel):
    model: str
    count: int
    cap: int
    fits: bool
    tokens: list[str]
    shown: list[dict[str, str]]  # each token as shown: {"label": "␣cat", "exact": " cat"}
    message: str


class Mark(BaseModel):
    share: float
    text: str


class Legend(BaseModel):
    """The ink legend (``lab/realmodel/heatmap.py``): its marks, label and sentence."""

    low: float
    high: float
    low_display: str
    high_display: str
    blocked: str  # what a blocked cell is ("" without a mask)
    blocked_mark: str  # the blocked swatch's word ("" without a mask)
    marks: list[Mark]
    label: str
    words: str


class CellWords(BaseModel):
    """A cell's readout: templates with {query}, {key}, {share}, {exact}, and the text inside a cell."""

    share: str
    exact: str
    blocked: str
    text: dict[str, str]  # a printed share -> the text inside its cell ("0.12" -> ".12")


class HeadView(BaseModel):
    job: str
    layer: int
    head: int
    kv_head: int
    n_tokens: int
    kind: str
    kind_short: str
    kind_words: str  # kind_sentence's text
    kind_sentence: Said  # claims: {"kind", "score", "threshold"}
    about: list[Said]  # the kind, where the attention goes, the breadth
    about_text: str  # about's texts, in order
    caption: str  # the heatmap's label
    lines_label: str  # the lines picture's label
    previous: float
    first: float
    induction: float | None  # null: no token of the text repeats
    duplicate: float | None
    self: float
    breadth: float
    previous_display: str
    first_display: str
    induction_display: str  # "—" where induction is null
    duplicate_display: str
    self_display: str
    breadth_display: str
    breadth_words: str
    weights: list[list[float | None]] | None = None  # null: blocked (a later token, causal)
    weights_f32: str | None = None  # ?packed=true: base64 little-endian float32, row-major, NaN = blocked
    shares: list[list[str]]  # weights rounded to 2 decimals for reading; "" where blocked
    precise: list[list[str]] | None  # up to 64 tokens: every share at full precision ("" where blocked)
    cells: CellWords
    legend: Legend


class Thumb(BaseModel):
    layer: int
    head: int
    kv_head: int
    kind: str
    previous: float
    first: float
    induction: float | None
    duplicate: float | None
    self: float
    breadth: float
    previous_display: str
    first_display: str
    induction_display: str
    duplicate_display: str
    self_display: str
    breadth_display: str
    kind_short: str  # the kind as a label: "previous token"
    label: str  # "L18 H6 · induction"
    thumb_text: str  # "H6 · induction": under the thumbnail
    title: str  # "Layer 18, head 6: induction head; induction 90%, …": hover and screen readers
    button_label: str  # "Head 6: induction head; …": the layer overview's button
    thumb: list[list[float | None]]


class KindDefinition(Said):
    kind: str
    name: str


class ModelView(BaseModel):
    job: str
    n_layer: int
    n_head: int
    n_tokens: int
    size: int
    bins: list[list[int]]
    layers: list[dict[str, str]]  # each layer's label ("Layer 3") and short name ("L3")
    legend: Legend  # binned thumbnails say so
    kinds: list[KindDefinition]  # the legend: each kind's definition and threshold
    rule: Said  # how a head gets its one name
    heads: list[Thumb]


class ProbeOut(BaseModel):
    seed: int
    n_words: int
    repeats: int
    run: list[str]
    text: str
    note: Said


class RowView(BaseModel):
    labels: list[str]
    allowed: list[bool]
    scores: list[float | None]
    m: float
    exps: list[float]
    z: float
    weights: list[float]
    weights_display: list[str]
    key_share: float
    key_share_display: str
    key_rank: int | None


class PlaneKey(BaseModel):
    index: int
    label: str
    x: float
    y: float
    kept: float
    share: float
    title: str  # the point's hover label


class Plane(BaseModel):
    heading: str
    caption: Said
    leaves_out: Said
    mean_kept: float
    top_key: int | None
    top_label: str | None
    axes: list[str]
    q: list[float]
    keys: list[PlaneKey]


class Words(BaseModel):
    summary: Said
    match: Said
    share: Said
    mix: Said


class RowPlace(BaseModel):
    """Where one query row stands: the first fields of the neuron view and of the bridge."""

    job: str
    layer: int
    head: int
    kv_head: int
    query: int
    query_label: str


class NeuronView(RowPlace):
    key: int
    key_label: str
    allowed: bool
    d_k: int
    q: list[float]
    k: list[float]
    products: list[float]
    running: list[float]
    dot: float
    dot_display: str
    scale: float
    scale_display: str
    score: float
    score_display: str
    row: RowView
    # title, bar names (bars), their labels (bar_labels) and each bar's hover title at full precision
    # (bar_titles); the sum, softmax and blocked sentences (Said; blocked: null if allowed)
    text: dict
    words: Words
    plane: Plane


class NextEntry(BaseModel):
    rank: int
    rank_display: str
    id: int
    token: str
    logit: float
    p_model: float
    p: float
    p_model_display: str
    p_display: str
    kept: bool
    token_label: str  # the token shown: whitespace visible (␣, ⏎, ⇥); token_exact is its text
    token_exact: str
    logit_display: str
    p_cell: str  # p as the table shows it: "77%" or "0% (removed)"


class Removed(BaseModel):
    control: Literal["temperature", "top_k", "top_p"]
    count: int
    mass: float
    words: Said


class Actual(BaseModel):
    id: int
    token: str
    rank: int
    p_model: float
    p: float
    p_display: str


class NextView(BaseModel):
    job: str
    position: int
    context_label: str
    temperature: float
    top_k: int
    top_p: float
    vocab: int
    entries: list[NextEntry]
    kept: int
    kept_mass_model: float
    removed: list[Removed]
    actual: Actual | None
    words: dict  # context, kept, actual (Said each), the table's columns and captions


class NormStats(BaseModel):
    mean: float
    rms: float
    max_abs: float
    display: dict[str, str]  # each statistic rounded for reading
    precise: dict[str, str]  # each at full precision (the hover title)


class Unit(BaseModel):
    unit: int
    unit_display: str
    value: float
    value_display: str
    value_precise: str


class Block(BaseModel):
    layer: int
    layer_display: str
    resid_in: float
    attn: float
    mlp: float
    resid_out: float
    norm_1: NormStats
    norm_2: NormStats
    mlp_top: list[Unit]
    display: dict[str, str]


class JourneyView(BaseModel):
    job: str
    index: int
    label: str
    norm: Literal["rms", "layer"]
    placement: Literal["pre", "post"]
    blocks: list[Block]
