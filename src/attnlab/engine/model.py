"""A transformer as data: its architecture (:class:`Architecture`) and its weights (:class:`Weights`).

An architecture is a frozen description, like nanoGPT's ``GPTConfig`` or gpt-fast's
``ModelArgs``: shapes, the norm's kind and placement, positions, the attention's options,
the MLP's kind, the embedding's scale, a tied output. A family (Llama, BERT, ...) is a
function from a checkpoint's config to one of these; :func:`attnlab.engine.forward.forward`
runs any of them. Nothing here computes.

Weights are held as stored, pre-transposed for the engine (``y = x @ W``): NumPy arrays
(float32 or float64), or on the fast path matrices of quantised blocks
(:class:`attnlab.engine.fast.quant.QuantMatrix`) that only the fast products read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from attnlab.engine.block import BlockParams
from attnlab.engine.errors import FieldError
from attnlab.engine.layers import ACTIVATIONS, LayerNormParams, MLPParams, RMSNormParams, SwiGLUParams

NormParams = LayerNormParams | RMSNormParams


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
      i + d/2, Hugging Face's layout) or "interleaved" (2i with 2i + 1, llama.cpp's)),
      "learned" (a table added to the token embeddings) or "none";
    - ``token_types``: BERT adds row 0 of a token-type table; ``embed_scale`` multiplies
      the token embeddings (Gemma: √d_model);
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

    @property
    def group(self) -> int:
        """Query heads per KV head."""
        return self.n_head // self.n_kv_head

    @property
    def scale(self) -> float:
        """The factor on q·k."""
        return self.attn_scale if self.attn_scale is not None else 1.0 / math.sqrt(self.d_head)

    def replace(self, **changes) -> Architecture:
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Architecture(**values)


@dataclass(frozen=True, eq=False, kw_only=True)
class Weights:
    """A model's numbers, laid out for the engine (every matrix (in, out): ``y = x @ W``).

    - ``embed`` W_E: (d_vocab, d_model), a token's row; or, on the fast path, the blocks of
      its transpose (a QuantMatrix (d_model, d_vocab) whose stored rows are W_E's rows);
    - ``pos_embed`` W_pos (n_ctx, d_model) where positions are learned; ``type_embed``
      (token types, d_model) where the model adds token type 0; ``embed_norm`` (BERT);
    - ``blocks``: one :class:`attnlab.engine.block.BlockParams` per layer (``norm_1`` is the
      attention's norm, ``norm_2`` the MLP's, before or after as the architecture places
      them);
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
        if w.pos_embed is None or w.pos_embed.shape[1:] != (d,) or w.pos_embed.shape[0] < arch.n_ctx:
            raise FieldError(("pos_embed",), f"learned positions need a table of ({arch.n_ctx}, {d})")
    if not arch.tied_output and arch.head == "logits":
        shape("unembed", w.unembed, (d, arch.d_vocab))
    for i, b in enumerate(w.blocks):
        a = b.attn
        shape(f"blocks.{i}.attn.w_q", a.w_q, (d, arch.n_head * dh))
        shape(f"blocks.{i}.attn.w_k", a.w_k, (d, arch.n_kv_head * dh))
        shape(f"blocks.{i}.attn.w_v", a.w_v, (d, arch.n_kv_head * dh))
        shape(f"blocks.{i}.attn.w_o", a.w_o, (arch.n_head * dh, d))
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
