"""The JSON shapes of the Real model view's views (``api_views.py``; docs/real-model-api.md).

These document the answers (OpenAPI) and let tests check them; the routes
serialise plain dicts for speed (a 256-token head is 65,536 numbers).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


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


class Legend(BaseModel):
    low: float
    high: float
    low_display: str
    high_display: str
    blocked: str


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
    caption: str
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
    text: dict  # title, bar names; the sum, softmax and blocked sentences (Said; blocked: null if allowed)
    words: Words
    plane: Plane


class NextEntry(BaseModel):
    rank: int
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


class Unit(BaseModel):
    unit: int
    value: float
    value_display: str


class Block(BaseModel):
    layer: int
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
