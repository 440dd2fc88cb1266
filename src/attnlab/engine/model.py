"""A transformer as data: its architecture (:class:`Architecture`) and its weights (:class:`Weights`).

An architecture is a frozen description, like nanoGPT's ``GPTConfig`` or gpt-fast's
``ModelArgs``: shapes, the norm's kind and placement, positions, the attention's options,
the MLP's kind, the embedding's scale, a tied output. A family (Llama, BERT, ...) is a
function from a checkpoint's config to one of these; :func:`attnlab.engine.forward.forward`
runs any of them. Nothing here computes.

Weights are held as stored, pre-transposed for the engine (``y = x @ W``): NumPy arrays
(float32 or float64), or on the fast path matrices of quantised blocks
(:class:`attnlab.engine.fast.quant.QuantMatrix`) that only the fast products read. A block
whose family adds norms (per-head q/k norms, sandwich norms) holds them in
:class:`AttentionWeights` and :class:`BlockWeights`, the engine's parameter classes with
those fields added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from attnlab.engine.block import BlockParams
from attnlab.engine.errors import FieldError
from attnlab.engine.layers import ACTIVATIONS, LayerNormParams, MLPParams, RMSNormParams, SwiGLUParams
from attnlab.engine.multihead import AttentionParams

NormParams = LayerNormParams | RMSNormParams
ROPE_SCALINGS = ("linear", "llama3", "factors")


@dataclass(frozen=True, kw_only=True)
class RopeScaling:
    """How a model stretches RoPE's frequencies past the context it was trained on.

    - ``"linear"`` (Gemma 3's global layers): every inverse frequency divided by ``factor``
      (positions read as p / factor);
    - ``"llama3"`` (Llama 3.1, 3.2): wavelengths 2π / f longer than ``original_context /
      low_freq_factor`` are divided by ``factor``, those shorter than ``original_context /
      high_freq_factor`` kept, and those between blended: (1 - s) · f / factor + s · f with
      s = (original_context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor);
    - ``"factors"`` (a Llama 3 GGUF's ``rope_freqs.weight``: llama3's scaling, worked out by the
      converter): inverse frequency i divided by ``factors[i]`` (one per pair of coordinates).
    """

    kind: Literal["linear", "llama3", "factors"]
    factor: float = 1.0
    low_freq_factor: float = 1.0
    high_freq_factor: float = 4.0
    original_context: int = 8192
    factors: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ROPE_SCALINGS:
            raise FieldError(("rope_scaling",), f"is {self.kind!r}; use one of {ROPE_SCALINGS}")
        if not (isinstance(self.factor, int | float) and math.isfinite(self.factor) and self.factor > 0):
            raise FieldError(("rope_scaling", "factor"), f"is {self.factor!r}; it must be a positive number")
        if self.kind == "llama3" and not self.high_freq_factor > self.low_freq_factor > 0:
            raise FieldError(("rope_scaling", "high_freq_factor"),
                             f"is {self.high_freq_factor!r}; it must exceed low_freq_factor "
                             f"({self.low_freq_factor!r}), itself above 0")  # fmt: skip
        context = self.original_context
        if self.kind == "llama3" and not (isinstance(context, int) and context > 0):
            raise FieldError(("rope_scaling", "original_context"),
                             f"is {self.original_context!r}; it must be a whole number above 0")  # fmt: skip
        positive = all(math.isfinite(f) and f > 0 for f in self.factors)
        if self.kind == "factors" and not (self.factors and positive):
            raise FieldError(("rope_scaling", "factors"), "must be finite numbers above 0, one per pair")


@dataclass(frozen=True, eq=False)
class AttentionWeights(AttentionParams):
    """Attention's projections with a norm on each query and key head (Qwen 3, Gemma 3):
    ``q_norm`` and ``k_norm`` (RMSNorm over d_head), applied to q and k before RoPE."""

    q_norm: NormParams | None = None
    k_norm: NormParams | None = None


@dataclass(frozen=True, eq=False)
class BlockWeights(BlockParams):
    """A block with sandwich norms (Gemma 2, 3): ``norm_1_post`` on the attention's output and
    ``norm_2_post`` on the MLP's, each before its residual add."""

    norm_1_post: NormParams | None = None
    norm_2_post: NormParams | None = None


@dataclass(frozen=True, kw_only=True)
class Architecture:
    """What a model computes, without its numbers.

    - ``causal``: a decoder (query i sees keys 0..i, bottom-right aligned with a KV cache) or
      an encoder (every token sees every real token);
    - shapes: ``n_layer`` blocks of ``n_head`` query heads and ``n_kv_head`` key/value heads
      (GQA when fewer, MQA when 1; query head h reads KV head h // (n_head / n_kv_head)) of
      ``d_head``; residual width ``d_model``; MLP width ``d_ff``; ``d_vocab`` tokens;
      ``n_ctx`` positions;
    - ``norm`` "rms" (x / sqrt(mean(x²) + eps) · γ) or "layer" (biased variance, eps inside
      the square root, as torch.nn.LayerNorm); ``norm_placement`` "pre" (x + f(norm(x)):
      GPT-2, Llama) or "post" (norm(x + f(x)): BERT); ``final_norm`` after the last block
      (pre-norm models); ``embed_norm`` right after the embeddings (BERT);
    - ``positions`` "rope" (rotary, on q and k: ``rope_base``, ``rope_pairs`` "half" (i with
      i + d/2, Hugging Face's layout) or "interleaved" (2i with 2i + 1, llama.cpp's),
      ``rope_scaling`` a :class:`RopeScaling` or None), "learned" (a table added to the token
      embeddings: position p reads row p + ``position_offset``; RoBERTa's offset is
      padding_idx + 1) or "none";
    - ``token_types``: BERT adds row 0 of a token-type table; ``embed_scale`` multiplies
      the token embeddings (Gemma: √d_model, rounded to the dtype the model computes in, as
      Hugging Face rounds it to its hidden states' dtype);
    - local attention: ``sliding_window`` W lets the query at position p see keys p - W + 1 .. p
      (W keys, itself included) in the layers ``local_layers`` lists (None: every layer;
      Mistral), the others being global (Gemma 2, 3); ``rope_base_local``: the local layers'
      RoPE base (Gemma 3; None: the global layers' RoPE, scaling included);
    - ``qk_norm``: an RMSNorm on each query and key head before RoPE (Qwen 3, Gemma 3);
      ``post_norms``: sandwich norms, a norm on the attention's and the MLP's outputs before
      each residual add (Gemma 2, 3);
    - soft caps (Gemma 2): ``attn_softcap`` c turns each score s into c · tanh(s / c) before
      the softmax (blocked keys stay blocked), ``final_softcap`` the same on the logits;
    - ``mlp`` "gated" (act(x W_gate) ⊙ (x W_up) W_down: SwiGLU with silu) or "plain"
      (act(x W_1 + b_1) W_2 + b_2); ``activation`` one of ``ACTIVATIONS``;
    - ``attn_scale``: the factor on q·k (default 1/√d_head);
    - ``tied_output``: the output layer is the token embeddings' transpose;
    - ``head``: what the model gives at the end: "logits" (T, d_vocab) or "pooled" (a
      sentence embedding: the mean of the real tokens' rows, scaled to unit length).
    """

    family: str
    causal: bool
    n_layer: int
    d_model: int
    n_head: int
    n_kv_head: int
    d_head: int
    d_ff: int
    d_vocab: int
    n_ctx: int
    norm: Literal["rms", "layer"] = "rms"
    norm_eps: float = 1e-5
    norm_placement: Literal["pre", "post"] = "pre"
    final_norm: bool = True
    embed_norm: bool = False
    positions: Literal["rope", "learned", "none"] = "rope"
    rope_base: float = 10000.0
    rope_pairs: Literal["half", "interleaved"] = "half"
    token_types: bool = False
    embed_scale: float = 1.0
    mlp: Literal["gated", "plain"] = "gated"
    activation: str = "silu"
    attn_scale: float | None = None
    tied_output: bool = True
    head: Literal["logits", "pooled"] = "logits"
    rope_scaling: RopeScaling | None = None
    position_offset: int = 0
    sliding_window: int | None = None
    local_layers: tuple[int, ...] | None = None
    rope_base_local: float | None = None
    qk_norm: bool = False
    post_norms: bool = False
    attn_softcap: float | None = None
    final_softcap: float | None = None

    def __post_init__(self) -> None:
        for name in ("n_layer", "d_model", "n_head", "n_kv_head", "d_head", "d_ff", "d_vocab", "n_ctx"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise FieldError((name,), f"is {value!r}; it must be a whole number of at least 1")
        if self.n_head % self.n_kv_head:
            raise FieldError(("n_head",), f"is {self.n_head}: {self.n_head} query heads do not share "
                                          f"{self.n_kv_head} KV heads evenly")  # fmt: skip
        choices: dict[str, tuple[Any, ...]] = {
            "norm": ("rms", "layer"),
            "norm_placement": ("pre", "post"),
            "positions": ("rope", "learned", "none"),
            "rope_pairs": ("half", "interleaved"),
            "mlp": ("gated", "plain"),
            "activation": ACTIVATIONS,
            "head": ("logits", "pooled"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise FieldError((name,), f"is {getattr(self, name)!r}; use one of {allowed}")
        if self.positions == "rope" and self.d_head % 2:
            raise FieldError(("d_head",), f"is odd; rotary positions need an even head size, "
                                          f"not {self.d_head}")  # fmt: skip
        for name in ("rope_base", "norm_eps", "embed_scale"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                    or value < 0 or (value == 0 and name != "norm_eps"):  # fmt: skip
                raise FieldError((name,), f"is {value!r}; it must be a finite number above 0")
        for name in ("attn_scale", "rope_base_local", "attn_softcap", "final_softcap"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not math.isfinite(value) or value <= 0):  # fmt: skip
                raise FieldError((name,), f"is {value!r}; it must be None or a finite number above 0")
        if isinstance(self.position_offset, bool) or not isinstance(self.position_offset, int) \
                or self.position_offset < 0:  # fmt: skip
            raise FieldError(("position_offset",), f"is {self.position_offset!r}; it must be a whole number "
                                                   "of at least 0")  # fmt: skip
        w = self.sliding_window
        if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 1):
            need = "it must be None or a whole number of at least 1"
            raise FieldError(("sliding_window",), f"is {w!r}; {need}")
        if w is not None and not self.causal:
            raise FieldError(("sliding_window",), "is set on an encoder; a sliding window is a decoder's")
        if self.local_layers is not None:
            if w is None:
                raise FieldError(("local_layers",), "are given without a sliding_window to attend within")
            bad = [i for i in self.local_layers if isinstance(i, bool) or not isinstance(i, int)
                   or not 0 <= i < self.n_layer]  # fmt: skip
            if bad or len(set(self.local_layers)) != len(self.local_layers):
                raise FieldError(("local_layers",), f"are {self.local_layers!r}; give each layer 0.."
                                                    f"{self.n_layer - 1} at most once")  # fmt: skip
        if self.positions != "rope" and (self.rope_scaling is not None or self.rope_base_local is not None):
            raise FieldError(("positions",), f"are {self.positions!r}; RoPE's settings need rotary positions")
        if self.rope_scaling is not None and not isinstance(self.rope_scaling, RopeScaling):
            raise FieldError(("rope_scaling",), "must be a RopeScaling or None")
        if self.rope_scaling is not None and self.rope_scaling.kind == "factors" \
                and len(self.rope_scaling.factors) != self.d_head // 2:  # fmt: skip
            n = len(self.rope_scaling.factors)
            raise FieldError(("rope_scaling", "factors"), f"are {n}; a head of {self.d_head} turns "
                                                          f"{self.d_head // 2} pairs")  # fmt: skip
        if self.rope_base_local is not None and w is None:
            raise FieldError(("rope_base_local",), "is set without local layers (no sliding_window)")
        if self.post_norms and self.norm_placement != "pre":
            raise FieldError(("post_norms",), "are sandwich norms: they need norm_placement 'pre'")

    @property
    def group(self) -> int:
        """Query heads per KV head."""
        return self.n_head // self.n_kv_head

    @property
    def scale(self) -> float:
        """The factor on q·k."""
        return self.attn_scale if self.attn_scale is not None else 1.0 / math.sqrt(self.d_head)

    def is_local(self, layer: int) -> bool:
        """Whether block ``layer`` attends within the sliding window."""
        if self.sliding_window is None:
            return False
        return self.local_layers is None or layer in self.local_layers

    def window(self, layer: int) -> int | None:
        """Block ``layer``'s sliding window (None: it sees every earlier key)."""
        return self.sliding_window if self.is_local(layer) else None

    def replace(self, **changes) -> Architecture:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Architecture(**values)


@dataclass(frozen=True, eq=False, kw_only=True)
class Weights:
    """A model's numbers, laid out for the engine (every matrix (in, out): ``y = x @ W``).

    - ``embed`` W_E: (d_vocab, d_model), a token's row; or, on the fast path, the blocks of
      its transpose (a QuantMatrix (d_model, d_vocab) whose stored rows are W_E's rows);
    - ``pos_embed`` W_pos (n_ctx + position_offset, d_model) where positions are learned; ``type_embed``
      (token types, d_model) where the model adds token type 0; ``embed_norm`` (BERT);
    - ``blocks``: one :class:`attnlab.engine.block.BlockParams` per layer (``norm_1`` is the
      attention's norm, ``norm_2`` the MLP's, before or after as the architecture places
      them); a :class:`BlockWeights` with :class:`AttentionWeights` where the architecture
      has q/k norms or sandwich norms;
    - ``final_norm``; ``unembed`` W_U (d_model, d_vocab), None when the output is tied
      (then W_U = W_Eᵀ).
    """

    embed: Any
    blocks: tuple[BlockParams, ...]
    pos_embed: Any = None
    type_embed: Any = None
    embed_norm: NormParams | None = None
    final_norm: NormParams | None = None
    unembed: Any = None


def check_weights(arch: Architecture, w: Weights) -> None:
    """Refuse weights that do not fit ``arch`` (``FieldError`` at the weight, with both shapes)."""

    def shape(name: str, a, expect: tuple[int, ...]) -> None:
        got = tuple(getattr(a, "shape", ()))
        if got != expect:
            raise FieldError((name,), f"has shape {got}; the architecture needs {expect}")

    d, dh = arch.d_model, arch.d_head
    if len(w.blocks) != arch.n_layer:
        raise FieldError(("blocks",), f"{len(w.blocks)} blocks for an architecture of {arch.n_layer} layers")
    e = w.embed  # an array (d_vocab, d_model), or the fast path's blocks of its transpose (d_model, d_vocab)
    shape("embed", e, (arch.d_vocab, d) if isinstance(e, np.ndarray) else (d, arch.d_vocab))
    if arch.positions == "learned":
        rows = arch.n_ctx + arch.position_offset
        if w.pos_embed is None or w.pos_embed.shape[1:] != (d,) or w.pos_embed.shape[0] < rows:
            raise FieldError(("pos_embed",), f"learned positions need a table of ({rows}, {d})")
    if not arch.tied_output and arch.head == "logits":
        shape("unembed", w.unembed, (d, arch.d_vocab))
    for i, b in enumerate(w.blocks):
        a = b.attn
        shape(f"blocks.{i}.attn.w_q", a.w_q, (d, arch.n_head * dh))
        shape(f"blocks.{i}.attn.w_k", a.w_k, (d, arch.n_kv_head * dh))
        shape(f"blocks.{i}.attn.w_v", a.w_v, (d, arch.n_kv_head * dh))
        shape(f"blocks.{i}.attn.w_o", a.w_o, (arch.n_head * dh, d))
        n_q, n_kv = arch.n_head * dh, arch.n_kv_head * dh
        for name, n_out in (("b_q", n_q), ("b_k", n_kv), ("b_v", n_kv), ("b_o", d)):
            if getattr(a, name) is not None:
                shape(f"blocks.{i}.attn.{name}", getattr(a, name), (n_out,))
        if arch.qk_norm:
            for name in ("q_norm", "k_norm"):
                norm = getattr(a, name, None)
                if norm is None:
                    raise FieldError((f"blocks.{i}.attn.{name}",), "is missing: the model has q/k norms")
                if norm.weight is not None:
                    shape(f"blocks.{i}.attn.{name}.weight", norm.weight, (dh,))
        if arch.post_norms:
            for name in ("norm_1_post", "norm_2_post"):
                if getattr(b, name, None) is None:
                    raise FieldError((f"blocks.{i}.{name}",), "is missing: the model has sandwich norms")
        f = b.mlp
        if arch.mlp == "gated":
            if not isinstance(f, SwiGLUParams):
                raise FieldError((f"blocks.{i}.mlp",), "a gated MLP needs w_gate, w_up and w_down")
            shape(f"blocks.{i}.mlp.w_gate", f.w_gate, (d, arch.d_ff))
            shape(f"blocks.{i}.mlp.w_up", f.w_up, (d, arch.d_ff))
            shape(f"blocks.{i}.mlp.w_down", f.w_down, (arch.d_ff, d))
        else:
            if not isinstance(f, MLPParams):
                raise FieldError((f"blocks.{i}.mlp",), "a plain MLP needs w_1 and w_2")
            shape(f"blocks.{i}.mlp.w_1", f.w_1, (d, arch.d_ff))
            shape(f"blocks.{i}.mlp.w_2", f.w_2, (arch.d_ff, d))
