"""transformers as each family's oracle: its eager model, and its activations under attnlab's names.

:func:`hf_model` loads a tiny model's folder (or a GGUF, ``gguf_file=``) with eager attention in
float32. :func:`activations` runs it once with PyTorch forward hooks on its modules and returns
attnlab's hook points (a field of :class:`attnlab.engine.hooks.BlockNames` and the layer) as
float64 arrays, shaped as attnlab's hooks shape them (no batch axis; q, k, v and z (pos, head,
d_head)). Where Hugging Face computes a step inside a module (the residual adds), the step is
read where a module sees it: the residual stream as a layer's input and output, the MLP's
activation as the input of its last projection, z as the input of W_O.

Gemma 2 and 3 name their sandwich norms as Llama names its MLP norm: their
``post_attention_layernorm`` gives attnlab's ``attn_out`` (the normalised output that is added,
TransformerLens's place for it), ``pre_feedforward_layernorm`` its ``ln2``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np


def hf_model(path: Path, *, gguf_file: str | None = None, causal: bool = True, **config):
    """The transformers model at ``path`` (a folder; with ``gguf_file``, a GGUF in it), eager, float32."""
    import torch
    from transformers import AutoModel, AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    extra = {"gguf_file": gguf_file} if gguf_file else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        maker = AutoModelForCausalLM if causal else AutoModel
        return maker.from_pretrained(str(path), dtype=torch.float32, attn_implementation="eager", **extra,
                                     **config).eval()  # fmt: skip


def _llama(model, layer: int, family: str) -> dict:
    block = model.model.layers[layer]
    a, m = block.self_attn, block.mlp
    sandwich = family in ("gemma2", "gemma3")
    table = {
        "resid_pre": (block, "in"),
        "resid_post": (block, "out"),
        "ln1": (block.input_layernorm, "out"),
        "ln2": (block.pre_feedforward_layernorm if sandwich else block.post_attention_layernorm, "out"),
        "attn_out": (block.post_attention_layernorm if sandwich else a, "out"),
        "mlp_out": (block.post_feedforward_layernorm if sandwich else m, "out"),
        "mlp_post": (m.down_proj, "in"),
        "z": (a.o_proj, "in"),
    }
    if hasattr(a, "qkv_proj"):  # Phi-3: q, k, v read off the fused projection
        table["qkv"] = (a.qkv_proj, "out")
    else:
        table.update(q=(a.q_proj, "out"), k=(a.k_proj, "out"), v=(a.v_proj, "out"))
    if hasattr(a, "q_norm"):  # Gemma 3 norms its heads after putting them first: (head, pos, d_head)
        where = "out_heads_first" if family == "gemma3" else "out"
        table.update(q_normed=(a.q_norm, where), k_normed=(a.k_norm, where))
    return table


def _gpt2(model, layer: int, family: str) -> dict:
    block = model.transformer.h[layer]
    return {
        "resid_pre": (block, "in"),
        "resid_post": (block, "out"),
        "ln1": (block.ln_1, "out"),
        "ln2": (block.ln_2, "out"),
        "attn_out": (block.attn, "out"),
        "mlp_out": (block.mlp, "out"),
        "mlp_post": (block.mlp.c_proj, "in"),
        "qkv": (block.attn.c_attn, "out"),
        "z": (block.attn.c_proj, "in"),
    }


def _bert(model, layer: int, family: str) -> dict:
    if family == "distilbert":
        block = model.transformer.layer[layer]
        a = block.attention
        return {
            "resid_pre": (block, "in"),
            "ln2": (block, "out"),
            "ln1": (block.sa_layer_norm, "out"),
            "attn_out": (a.out_lin, "out"),
            "mlp_post": (block.ffn.lin2, "in"),
            "mlp_out": (block.ffn.lin2, "out"),
            "q": (a.q_lin, "out"),
            "k": (a.k_lin, "out"),
            "v": (a.v_lin, "out"),
            "z": (a.out_lin, "in"),
        }
    block = model.encoder.layer[layer]
    a = block.attention
    return {
        "resid_pre": (block, "in"),
        "ln2": (block, "out"),
        "ln1": (a.output.LayerNorm, "out"),
        "attn_out": (a.output.dense, "out"),
        "mlp_post": (block.intermediate, "out"),
        "mlp_out": (block.output.dense, "out"),
        "q": (a.self.query, "out"),
        "k": (a.self.key, "out"),
        "v": (a.self.value, "out"),
        "z": (a.output.dense, "in"),
    }


TABLES = {"gpt2": _gpt2, "bert": _bert, "roberta": _bert, "distilbert": _bert}


def activations(model, ids, *, family: str, arch, attention_mask=None) -> tuple[dict, object]:
    """Run ``model`` on ``ids`` (one sequence) with forward hooks: ``({(field, layer): array}, output)``,
    the output with ``output_attentions``. ``arch``: attnlab's Architecture of the same model (its
    head counts shape q, k, v and z)."""
    import torch

    kept: dict = {}
    handles = []

    def first(x):
        return x[0] if isinstance(x, tuple | list) else x

    for layer in range(arch.n_layer):
        for field, (module, where) in TABLES.get(family, _llama)(model, layer, family).items():
            if where == "in":

                def pre(module, args, kwargs, field=field, layer=layer):
                    x = args[0] if args else kwargs["hidden_states"]
                    kept[field, layer] = x[0].detach().to(torch.float64).numpy().copy()

                handles.append(module.register_forward_pre_hook(pre, with_kwargs=True))
            else:

                def post(module, args, output, field=field, layer=layer, swap=where == "out_heads_first"):
                    a = first(output)[0].detach().to(torch.float64).numpy()
                    kept[field, layer] = (a.swapaxes(0, 1) if swap else a).copy()

                handles.append(module.register_forward_hook(post))
    try:
        with torch.no_grad():
            mask = None if attention_mask is None else torch.as_tensor(attention_mask)[None]
            out = model(torch.as_tensor([list(ids)]), attention_mask=mask, output_attentions=True)
    finally:
        for h in handles:
            h.remove()
    return _shaped(kept, arch), out


def _shaped(kept: dict, arch) -> dict:
    """q, k, v, z and the q/k norms as (pos, head, d_head); a fused q|k|v split into its three."""
    n_q, n_kv, dh = arch.n_head * arch.d_head, arch.n_kv_head * arch.d_head, arch.d_head
    out = {}
    for (field, layer), a in kept.items():
        if field == "qkv":
            parts = (("q", slice(0, n_q), arch.n_head), ("k", slice(n_q, n_q + n_kv), arch.n_kv_head),
                     ("v", slice(n_q + n_kv, None), arch.n_kv_head))  # fmt: skip
            for name, cols, heads in parts:
                out[name, layer] = a[:, cols].reshape(a.shape[0], heads, dh)
            continue
        if field in ("q", "z"):
            a = a.reshape(a.shape[0], arch.n_head, dh)
        elif field in ("k", "v"):
            a = a.reshape(a.shape[0], arch.n_kv_head, dh)
        out[field, layer] = a
    return out


def close(got, want, *, rel: float = 1e-5, what: str = "") -> float:
    """Assert ``got`` is ``want`` to ``rel`` of the largest magnitude in ``want``; return that gap."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{what}: shapes {got.shape} and {want.shape}"
    scale = max(float(np.abs(want).max()), 1e-30)
    gap = float(np.abs(got - want).max()) / scale
    assert gap <= rel, f"{what}: the largest gap is {gap:.3g} of the largest magnitude"
    return gap
