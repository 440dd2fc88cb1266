"""Hook points: every activation of the forward pass, named as TransformerLens names them.

A hook point is a place in :func:`attnlab.engine.forward.forward` where an activation
passes by name. Shapes are TransformerLens's without the batch axis (a batch, where the
forward gets one, leads):

- ``hook_embed`` (pos, d_model): the token embeddings (scaled, where the model scales
  them); ``hook_pos_embed`` (pos, d_model) where positions are learned;
  ``hook_token_type_embed`` (d_model,) where token types are added (BERT);
  ``embed.ln.hook_normalized`` (pos, d_model) where the embeddings are normalised (BERT);
- per block ``l``, in computation order (``blocks.{l}.`` before each name):
  ``hook_resid_pre`` (pos, d_model); ``ln1.hook_normalized`` (pre-norm: the attention's
  input; post-norm: LayerNorm_1(resid_mid), the MLP's input); ``attn.hook_q`` (pos, head,
  d_head), ``attn.hook_k`` and ``attn.hook_v`` (pos, kv_head, d_head), the projections
  (biases added), before any norm or RoPE; ``attn.q_norm.hook_normalized`` (pos, head,
  d_head) and ``attn.k_norm.hook_normalized`` (pos, kv_head, d_head): q and k after their
  per-head RMSNorm, weight applied (models with q/k norms: Qwen 3, Gemma 3; TransformerLens's
  q_norm and k_norm modules); ``attn.hook_rot_q`` / ``attn.hook_rot_k`` after RoPE (models
  with rotary positions); ``attn.hook_attn_scores`` (head, query_pos, key_pos): q·k times
  the scale (soft-capped, where the model caps scores), blocked keys ``-inf``;
  ``attn.hook_pattern`` (head, query_pos, key_pos): the softmax;
  ``attn.hook_z`` (pos, head, d_head): each query head's mix of values, before W_O;
  ``ln1_post.hook_normalized`` (pos, d_model): the sandwich norm on the attention's output
  (Gemma 2, 3); ``hook_attn_out`` (pos, d_model): what the attention adds to the residual
  stream: after W_O and its bias (and ``ln1_post``, as TransformerLens places it);
  ``hook_resid_mid`` (resid_pre + attn_out); ``ln2.hook_normalized`` (pre-norm: the MLP's
  input; post-norm: LayerNorm_2(resid_post), the block's output); ``mlp.hook_pre`` (pos,
  d_ff): the first projection (a gated MLP's gate), ``mlp.hook_pre_linear`` (a gated MLP's
  up projection), ``mlp.hook_post`` (pos, d_ff): the activation (times up, gated);
  ``ln2_post.hook_normalized`` (the sandwich norm on the MLP's output); ``hook_mlp_out``
  (pos, d_model): what the MLP adds (after ``ln2_post``); ``hook_resid_post`` (pre-norm:
  resid_mid + mlp_out; post-norm: ln1's output + mlp_out, before LayerNorm_2, as
  TransformerLens's BERT);
- ``ln_final.hook_normalized`` (pos, d_model) where the model has a final norm.

With a KV cache, ``hook_k`` and ``hook_v`` hold the new tokens' keys and values; the
scores and pattern have a key axis over everything cached.

A hook is ``fn(activation, name)``. It may read the activation, or return a new value of
the same shape (a replacement, the activation plus something, scaled, with one head's or
one position's slice zeroed ...): the forward goes on with what it returned (None: the
activation as it is). The forward never writes into an array after passing it to a hook,
so a hook may keep what it is given; a hook must not write into it either, but return a
new array. Hooks are arguments of one call (:class:`Hooks`), never left on a model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from attnlab.engine.errors import FieldError

Hook = Callable[[np.ndarray, str], "np.ndarray | None"]


@dataclass(frozen=True)
class BlockNames:
    """The hook points of block ``l``, spelled once."""

    resid_pre: str
    ln1: str
    q: str
    k: str
    v: str
    q_normed: str
    k_normed: str
    rot_q: str
    rot_k: str
    scores: str
    pattern: str
    z: str
    ln1_post: str
    attn_out: str
    resid_mid: str
    ln2: str
    mlp_pre: str
    mlp_pre_linear: str
    mlp_post: str
    ln2_post: str
    mlp_out: str
    resid_post: str


@lru_cache(maxsize=512)
def block_names(layer: int) -> BlockNames:
    p = f"blocks.{layer}."
    return BlockNames(
        resid_pre=p + "hook_resid_pre",
        ln1=p + "ln1.hook_normalized",
        q=p + "attn.hook_q",
        k=p + "attn.hook_k",
        v=p + "attn.hook_v",
        q_normed=p + "attn.q_norm.hook_normalized",
        k_normed=p + "attn.k_norm.hook_normalized",
        rot_q=p + "attn.hook_rot_q",
        rot_k=p + "attn.hook_rot_k",
        scores=p + "attn.hook_attn_scores",
        pattern=p + "attn.hook_pattern",
        z=p + "attn.hook_z",
        ln1_post=p + "ln1_post.hook_normalized",
        attn_out=p + "hook_attn_out",
        resid_mid=p + "hook_resid_mid",
        ln2=p + "ln2.hook_normalized",
        mlp_pre=p + "mlp.hook_pre",
        mlp_pre_linear=p + "mlp.hook_pre_linear",
        mlp_post=p + "mlp.hook_post",
        ln2_post=p + "ln2_post.hook_normalized",
        mlp_out=p + "hook_mlp_out",
        resid_post=p + "hook_resid_post",
    )


def hook_names(arch) -> tuple[str, ...]:
    """Every hook point of ``arch`` (an :class:`attnlab.engine.model.Architecture`), in computation order."""
    out = ["hook_embed"]
    if arch.positions == "learned":
        out.append("hook_pos_embed")
    if arch.token_types:
        out.append("hook_token_type_embed")
    if arch.embed_norm:
        out.append("embed.ln.hook_normalized")
    for layer in range(arch.n_layer):
        n = block_names(layer)
        rot = [n.rot_q, n.rot_k] if arch.positions == "rope" else []
        normed = [n.q_normed, n.k_normed] if arch.qk_norm else []
        pre = [n.ln1] if arch.norm_placement == "pre" else []
        post = [] if arch.norm_placement == "pre" else [n.ln1]
        gated = [n.mlp_pre_linear] if arch.mlp == "gated" else []
        sandwich = ([n.ln1_post], [n.ln2_post]) if arch.post_norms else ([], [])
        out += [n.resid_pre, *pre, n.q, n.k, n.v, *normed, *rot, n.scores, n.pattern, n.z, *sandwich[0]]
        out += [n.attn_out, n.resid_mid]
        out += [*post, n.ln2] if arch.norm_placement == "pre" else [*post]
        out += [n.mlp_pre, *gated, n.mlp_post, *sandwich[1], n.mlp_out, n.resid_post]
        if arch.norm_placement == "post":
            out.append(n.ln2)
    if arch.final_norm:
        out.append("ln_final.hook_normalized")
    return tuple(out)


class Hooks:
    """Hooks for one forward pass: ``fwd_hooks`` pairs ``(name, fn)``, where ``name`` is a hook
    point's name or a filter ``name -> bool`` (TransformerLens's ``fwd_hooks`` shape).

    ``names`` are the architecture's hook points: a name that is not one of them is refused
    (a typo would otherwise hook nothing). Several hooks on one point run in the order given.
    """

    def __init__(self, fwd_hooks: Iterable[tuple[str | Callable[[str], bool], Hook]], names: Iterable[str]):
        known = tuple(names)
        table: dict[str, list[Hook]] = {}
        for i, pair in enumerate(fwd_hooks):
            if not isinstance(pair, tuple | list) or len(pair) != 2 or not callable(pair[1]):
                raise FieldError(("fwd_hooks", i), "each hook is a pair (name or filter, function)")
            where, fn = pair
            if callable(where):
                chosen = [n for n in known if where(n)]
            elif isinstance(where, str):
                if where not in known:
                    raise FieldError(("fwd_hooks", i), unknown_name(where, known))
                chosen = [where]
            else:
                raise FieldError(("fwd_hooks", i), "a hook's place is a hook point's name or a filter")
            for n in chosen:
                table.setdefault(n, []).append(fn)
        self.table = table

    def __bool__(self) -> bool:
        return bool(self.table)

    def __contains__(self, name: str) -> bool:
        return name in self.table

    def __call__(self, name: str, x):
        """Pass activation ``x`` through the hooks at ``name``; return what the forward goes on with."""
        fns = self.table.get(name)
        if not fns:
            return x
        for fn in fns:
            out = fn(x, name)
            if out is not None and out is not x:
                x = _same_shape(out, x, name)
        return x


def no_hooks(name: str, x):
    """The forward's hook call when nothing is hooked: the activation as it is."""
    return x


def _same_shape(out, x, name: str):
    """A hook's return value as the forward's next array: x's shape and dtype, C-contiguous, finite."""
    a = np.ascontiguousarray(out, dtype=getattr(x, "dtype", None))
    if a.shape != x.shape:
        shapes = f"returned shape {a.shape}; it must keep {x.shape}"
        raise FieldError(("fwd_hooks",), f"the hook at {name} {shapes}")
    # -inf blocks a key in the scores; anywhere else, and NaN or +inf anywhere, poisons what follows
    bad = np.isnan(a) | (a == np.inf) if name.endswith("hook_attn_scores") else ~np.isfinite(a)
    if bad.any():
        raise FieldError(("fwd_hooks",), f"the hook at {name} returned NaN or infinity")
    return a


def unknown_name(name: str, known: tuple[str, ...]) -> str:
    """Why a hook point's name is refused, with the nearest names this model has."""
    import difflib

    near = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return f"{name!r} is not a hook point of this model{hint}"
