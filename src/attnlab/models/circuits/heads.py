"""What one head reads and writes: its query-key products before and after RoPE, and its OV circuit.

:func:`head_reads`: the head's q and its KV head's k, before and after RoPE, and their
dot products q_i · k_j (unscaled; the scores are these times ``scale``). They are
the forward's hook points (``attn.hook_q`` ... ``attn.hook_pattern``), from that block run
again on the cached residual stream entering it with the trace's steps (the reference's, on
the q4_1 blocks' float values), so they equal the run's own to float rounding. On a GQA model
``group`` lists the query heads that share the KV head (and its k and v).

:func:`head_writes` (decoder): at a query position, the keys the head attends to most,
and for each the tokens its value promotes: v_j through the head's rows of W_O, the final
norm (its γ, and its scale 1/rms frozen at the query position) and the tied
unembedding: (v_j W_O^h ⊙ γ) · s @ E^T, the logits the head would add if it put all its
attention on token j. ``written_*``: the same map on the head's real output there
(z W_O^h: the attention-weighted mix), which is its direct logit attribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.fast.quant import with_values
from attnlab.engine.hooks import block_names
from attnlab.engine.threads import holds_one_blas_thread, one_blas_thread
from attnlab.models.circuits import checks, metrics
from attnlab.models.circuits.runs import Cache
from attnlab.models.errors import Refusal


@dataclass(frozen=True, eq=False, kw_only=True)
class HeadReads:
    """Query head ``head`` of ``layer``: ``kv_head`` and its ``group`` (the query heads sharing it).

    ``q``, ``k`` (T, d_head) before RoPE; ``q_rotated``, ``k_rotated`` after (an encoder
    has no RoPE: the same arrays); ``v`` (T, d_head) the KV head's values; ``dots_before``,
    ``dots_after`` (T, T) float64: q_i · k_j; ``scale``: the factor on the dots;
    ``allowed`` (T, T) bool (True = may attend); ``weights`` (T, T) the attention weights.
    """

    layer: int
    head: int
    kv_head: int
    group: tuple[int, ...]
    q: np.ndarray
    k: np.ndarray
    q_rotated: np.ndarray
    k_rotated: np.ndarray
    v: np.ndarray
    dots_before: np.ndarray
    dots_after: np.ndarray
    scale: float
    allowed: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True, eq=False, kw_only=True)
class HeadWrites:
    """At query ``position``: ``sources`` (n,) key positions by weight (largest first; ties:
    earlier), ``weights`` (n,); ``promoted_ids`` (n, top) and ``promoted_logits`` (n, top):
    the tokens each source's value promotes most (see the module); ``written_ids`` (top,),
    ``written_logits`` (top,): the head's real output there through the same map."""

    layer: int
    head: int
    position: int
    sources: np.ndarray
    weights: np.ndarray
    promoted_ids: np.ndarray
    promoted_logits: np.ndarray
    written_ids: np.ndarray
    written_logits: np.ndarray


@holds_one_blas_thread  # its products (the dots too) sum alike whatever the BLAS thread count
def head_reads(model, cache: Cache, layer: int, head: int) -> HeadReads:
    """The q, k and QK products of query head ``head`` in ``layer`` on ``cache``'s text."""
    layer = checks.index(layer, model.arch.n_layer, loc=("layer",), model=model.name, what="layer")
    head = checks.index(head, model.arch.n_head, loc=("head",), model=model.name, what="head")
    group = model.arch.n_head // model.arch.n_kv_head
    kv = head // group
    t = _attention_trace(model, cache, layer)
    rotated = "q_rotated" in t
    q, k = t["q"][head], t["k"][kv]
    qr, kr = (t["q_rotated"][head], t["k_rotated"][kv]) if rotated else (q, k)
    n = cache.n_tokens
    allowed = np.tril(np.ones((n, n), dtype=bool)) if model.kind == "decoder" else np.ones((n, n), dtype=bool)
    f64 = np.float64
    return HeadReads(
        layer=layer,
        head=head,
        kv_head=kv,
        group=tuple(range(kv * group, (kv + 1) * group)),
        q=q,
        k=k,
        q_rotated=qr,
        k_rotated=kr,
        v=t["v"][kv],
        dots_before=q.astype(f64) @ k.astype(f64).T,
        dots_after=qr.astype(f64) @ kr.astype(f64).T,
        scale=1.0 / float(np.sqrt(model.arch.d_head)),
        allowed=allowed,
        weights=t["weights"][head],
    )


@holds_one_blas_thread
def head_writes(
    model, cache: Cache, layer: int, head: int, position: int = -1, *, sources: int = 5, top: int = 5
) -> HeadWrites:
    """What query head ``head`` of ``layer`` writes at ``position`` (decoder), through the unembedding."""
    if model.kind != "decoder" or cache.final_rms is None:
        raise Refusal(("model",), "circuits.no_unembedding", model.name)
    reads = head_reads(model, cache, layer, head)
    p = checks.position(position, cache.n_tokens, loc=("position",))
    row = reads.weights[p].astype(np.float64)
    order = np.lexsort((np.arange(row.size), -row))[: min(sources, p + 1)]
    dh = model.arch.d_head
    w_o = with_values(model.weights.blocks[layer].attn).w_o[head * dh : (head + 1) * dh]  # (d_head, d)
    gamma = model.weights.final_norm.weight
    scale = model.dtype.type(1.0 / np.float64(cache.final_rms[p]))
    vectors = np.vstack([reads.v[order], cache.z[layer, p, head][None]]) @ w_o  # (n + 1, d)
    if gamma is not None:
        vectors = vectors * gamma
    with one_blas_thread():
        logits = model.unembed(vectors * scale)  # (n + 1, V)
    ids = metrics.ranked(logits, top)
    chosen = np.take_along_axis(logits, ids, axis=-1).astype(np.float64)
    return HeadWrites(
        layer=reads.layer,
        head=reads.head,
        position=p,
        sources=order,
        weights=row[order],
        promoted_ids=ids[:-1],
        promoted_logits=chosen[:-1],
        written_ids=ids[-1],
        written_logits=chosen[-1],
    )


def _attention_trace(model, cache: Cache, layer: int) -> dict[str, np.ndarray]:
    """Block ``layer`` of the forward run again on the cached residual entering it, keeping its
    attention's hook points: q, k, v (T, heads, d_head), q and k rotated where the model rotates
    them, and the pattern (H, T, T), on the trace's steps (the reference's, on the weights' float
    values: what the Real model view's traces and the programs behind these numbers compute)."""
    names = block_names(layer)
    rope = model.arch.positions == "rope"
    wanted = {"q": names.q, "k": names.k, "v": names.v, "weights": names.pattern}
    if rope:
        wanted.update(q_rotated=names.rot_q, k_rotated=names.rot_k)
    _, kept = model.run_with_cache(None, names=set(wanted.values()), ops=model.trace_ops,
                                   start_at_layer=layer, resid=np.array(cache.resid[layer]),
                                   stop_at_layer=layer + 1)  # fmt: skip
    out = {key: kept[name] for key, name in wanted.items()}
    for key in ("q", "k", "v", "q_rotated", "k_rotated"):  # (T, heads, d) -> (heads, T, d)
        if key in out:
            out[key] = out[key].transpose(1, 0, 2)
    return out
