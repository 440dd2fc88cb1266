"""The runs a program makes, as attnlab's models make them: the one forward, with hooks.

Every function takes the model's description and weights (``arch``, ``weights``) and the steps
to run the forward with (``ops``: :mod:`attnlab.models.program_steps`), and calls the forward
(engine/forward.py) as
:class:`attnlab.models.model.Model` and :mod:`attnlab.models.circuits.runs` call it:

- :func:`run_with_cache`: the forward keeping the activations at the hook points ``names``
  (``Model.run_with_cache``; a trace of the Real model view is this, on the trace's steps);
- :func:`circuit_run`: the circuits' run (``runs.run`` and ``runs.resume``): per block the residual stream
  entering it (``resid``, and at point L the one leaving the last block), the mid point, each
  query head's z, the attention and MLP outputs, and the model's head (``final_rms`` and
  ``logits``, or ``pooled``), with a plan's writes where it has some (:func:`new_plan`,
  :func:`write`, :func:`edit`: ``edits.plan``'s sorting); from ``base``'s residual stream
  entering block ``start``, the blocks below being ``base``'s;
- :func:`final_residual`: the residual stream leaving the last block, from a point on, with a
  plan (what a patch needs: ``runs.final_residual``);
- :func:`head`, :func:`answer_logits`, :func:`final_rms`: the forward's end, as ``Model.head``,
  ``Model.answer_logits`` and ``runs.final_rms`` compute it;
- :func:`attention_of`: one block's pattern, keys and values run again on a run's residual
  stream (``patching.attention_of``).

Tested in-process against the models' own runs (``tests/lab/realmodel/program/test_runs.py``).
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.forward import forward
from attnlab.engine.hooks import Hooks, block_names, hook_names
from attnlab.models.circuits.edits import Plan, _Write

KEPT = ("resid", "mid", "z", "attn_out", "mlp_out")


def run_with_cache(arch, weights, ids, *, names, ops, **options):
    """``(output, cache)``: the forward on token ids ``ids`` keeping the activation at each hook point of
    ``names`` (``cache[name]``); ``options``: the forward's (``stop_at_layer``, ``start_at_layer``, ...)."""
    cache = {}

    def keep(a, name):
        cache[name] = a

    hooks = Hooks([(name, keep) for name in names], hook_names(arch))
    return forward(arch, weights, ids, ops=ops, hooks=hooks, **options), cache


def new_plan(arch) -> Plan:
    """A plan with no writes yet, as edits.plan starts one for this model: the mid point is pre-norm
    x + attention (hook_resid_mid) or post-norm LayerNorm_1 of it (ln1.hook_normalized); the keys a
    patch writes are those the scores read (after RoPE where the model rotates them)."""
    return Plan(start=arch.n_layer, mid_hook="resid_mid" if arch.norm_placement == "pre" else "ln1",
                k_hook="rot_k" if arch.positions == "rope" else "k")  # fmt: skip


def write(value, n_tokens: int, width: int, cols=slice(None), positions=None, head=None) -> _Write:
    """One write (edits._write): ``value`` (T, width), or (width,) for every position, into columns
    ``cols`` at ``positions`` (None: every one) of the activation, in float32 (of query head ``head``'s
    rows for an attention pattern)."""
    v = np.asarray(value)
    if v.shape == (width,):
        v = np.broadcast_to(v, (n_tokens, width))
    v = v.astype(np.float32, copy=False)
    rows = slice(None) if positions is None else np.asarray(positions, dtype=np.intp)
    return _Write(cols=cols, value=v, rows=rows, head=head)


def edit(plan: Plan, place: str, layer: int, w: _Write) -> None:
    """Put write ``w`` at ``place`` of block ``layer``, as edits.plan sorts an intervention: "z", "k", "v",
    "pattern", "mid" and "mlp" act inside the block (the run restarts there), "pre" and "post" on the
    residual stream entering and leaving it (the run restarts at that point)."""
    if place in ("pre", "post"):
        point = layer if place == "pre" else layer + 1
        plan.points.setdefault(point, []).append(w)
        plan.start = min(plan.start, point)
    else:
        plan.blocks.setdefault(layer, {}).setdefault(place, []).append(w)
        plan.start = min(plan.start, layer)


def circuit_run(arch, weights, ids, *, ops, plan=None, base=None, start=0, logits=True) -> dict:
    """The circuits' run on token ids ``ids`` (see the module docstring): a dict of ``resid`` (L + 1, T, d),
    ``mid``, ``attn_out``, ``mlp_out`` (L, T, d), ``z`` (L, T, H, d_head), and ``final_rms`` (T,) with
    ``logits`` (T, vocab) (None unless ``logits``) for a decoder, or ``pooled`` (d,) for an encoder."""
    L, T, d = arch.n_layer, len(ids), arch.d_model
    kept = {name: np.empty((L + (name == "resid"), T, d), np.float32) for name in KEPT}
    kept["z"] = np.empty((L, T, arch.n_head, arch.d_head), np.float32)
    if base is not None and start > 0:  # the blocks below are base's
        for name in KEPT:
            kept[name][:start] = base[name][:start]

    def keeper(name):
        def keep(layer, value):
            kept[name][layer] = value

        return keep

    plan = plan or new_plan(arch)
    hooks = Hooks(plan.hooks(start, L, {name: keeper(name) for name in KEPT}), hook_names(arch))
    if base is None:
        x = forward(arch, weights, ids, ops=ops, hooks=hooks, stop_at_layer=L)
    else:
        x = forward(arch, weights, None, ops=ops, hooks=hooks, start_at_layer=start,
                    resid=np.array(base["resid"][start]), stop_at_layer=L)  # fmt: skip
    x = plan.at_point(L, x)
    kept["resid"][L] = x
    if arch.head == "logits":
        kept["final_rms"] = final_rms(weights, x)
        kept["logits"] = head(arch, weights, x, ops=ops) if logits else None
    else:
        kept["pooled"] = head(arch, weights, x, ops=ops)
    return kept


def final_residual(arch, weights, x, start: int, plan: Plan, *, ops):
    """The residual stream leaving the last block (T, d), from x (T, d) entering block ``start``, with
    ``plan``'s writes (nothing kept on the way)."""
    n = arch.n_layer
    pairs = plan.hooks(start, n)
    out = forward(arch, weights, None, ops=ops, hooks=Hooks(pairs, hook_names(arch)) if pairs else None,
                  start_at_layer=start, resid=np.array(x), stop_at_layer=n)  # fmt: skip
    return plan.at_point(n, out)


def head(arch, weights, x, *, ops):
    """The model's head on the residual stream leaving the last block x (T, d): the final norm and the
    logits (T, vocab), or an encoder's sentence embedding (d,)."""
    return forward(arch, weights, None, ops=ops, start_at_layer=arch.n_layer, resid=x)


def answer_logits(arch, weights, x, tokens, *, ops):
    """The logits of ``tokens`` alone for rows x (n, d) leaving the last block: the final norm, then those
    tokens' columns of the output layer (n, len(tokens)), soft-capped where the model caps its logits."""
    h = ops.final_norm(x, weights.final_norm)
    logits = ops.unembed_columns(h, weights, tuple(tokens))
    return logits if arch.final_softcap is None else ops.softcap(logits, arch.final_softcap)


def final_rms(weights, x):
    """The final RMSNorm's divisor per row of x (n, d): sqrt(mean(x²) + eps), as the model computes it."""
    return np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + weights.final_norm.eps)[..., 0]


def attention_of(arch, weights, kept: dict, layer: int, *, ops) -> dict:
    """Block ``layer``'s attention run again on a run's residual stream entering it: ``pattern`` (H, T, T),
    the keys ``k`` the scores read (T, H_kv, d_head) and the values ``v`` (T, H_kv, d_head)."""
    n = block_names(layer)
    k = n.rot_k if arch.positions == "rope" else n.k
    _, cache = run_with_cache(arch, weights, None, names=[n.pattern, k, n.v], ops=ops, start_at_layer=layer,
                              resid=np.array(kept["resid"][layer]), stop_at_layer=layer + 1)  # fmt: skip
    return {"pattern": cache[n.pattern], "k": cache[k], "v": cache[n.v]}
