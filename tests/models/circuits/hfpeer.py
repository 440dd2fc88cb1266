"""The circuits peer: Hugging Face transformers with forward hooks, doing what attnlab's circuits do.

The oracle tests compare attnlab's runs, ablations, patches, lens and attribution with
this peer on the same weights; ``benchmarks/bench_circuits.py`` times it as the same-run
peer (one full forward pass per patch, the way hook-based tools patch).

``HFDecoder(model)`` wraps a ``LlamaForCausalLM`` (SmolLM2 from the same GGUF),
``HFEncoder(bert)`` the ``BertModel`` inside sentence-transformers' all-MiniLM-L6-v2.
``run(ids, edits=...)`` takes attnlab's own interventions (``SetHead``, ``SetMLP``,
``SetResid``; their fields only) and returns numpy float64 arrays under attnlab's names:
``resid`` (L+1, T, d), ``mid`` (L, T, d), ``z`` (L, T, H, d_head), ``attn_out``,
``mlp_out`` (L, T, d); decoder ``final_rms`` (T,) and ``logits`` (T, V); encoder
``pooled`` (d,). The hooks:

- z: a pre-hook on W_O (``o_proj``, ``attention.output.dense``): its input is the heads
  side by side (query head h in columns h*d_head .. (h+1)*d_head - 1);
- the residual stream: a pre-hook on each layer (entering it) and a hook on its output
  (leaving it); "mid" is the input of Llama's ``post_attention_layernorm`` (kept, not
  edited: Llama adds the residual before that norm) and BERT's attention output;
- the feed-forward output: a hook on Llama's ``mlp`` and on BERT's ``output.dense``.
"""

from __future__ import annotations

import numpy as np
import torch


class _Hooks:
    """Hooks of one run: each edits the tensor it sees (a copy), then keeps it."""

    def __init__(self, n_layer: int, keep: bool) -> None:
        self.handles: list = []
        self.kept: dict[str, dict[int, np.ndarray]] = {}
        self.keep = keep

    def store(self, name: str, layer: int, t: torch.Tensor) -> None:
        if self.keep:
            self.kept.setdefault(name, {})[layer] = t[0].detach().to(torch.float64).numpy()

    def close(self) -> None:
        for h in self.handles:
            h.remove()


def _writes(edits, kind, layer, site=None):
    out = []
    for e in edits:
        if type(e).__name__ != kind or e.layer != layer:
            continue
        if site is not None and e.site != site:
            continue
        out.append(e)
    return out


def _apply(t: torch.Tensor, writes, cols=None) -> torch.Tensor:
    """t (1, T, width) with each write's value at its positions (in ``cols`` of the width)."""
    if not writes:
        return t
    t = t.clone()
    n = t.shape[1]
    for w in writes:
        value = torch.as_tensor(np.broadcast_to(np.asarray(w.value), (n, np.shape(w.value)[-1])).copy(),
                                dtype=t.dtype)  # fmt: skip
        rows = list(range(n)) if w.positions is None else list(w.positions)
        c = cols(w) if cols is not None else slice(None)
        t[0, rows, c] = value[rows]
    return t


class _Peer:
    def _hook_all(self, hooks: _Hooks, edits) -> None:
        d_head = self.d_head
        for i, layer in enumerate(self.layer_modules):

            def pre(module, args, kwargs, i=i):
                x = args[0] if args else kwargs["hidden_states"]
                x = _apply(x, _writes(edits, "SetResid", i, "pre"))
                hooks.store("resid", i, x)
                return ((x, *args[1:]), kwargs) if args else (args, {**kwargs, "hidden_states": x})

            def post(module, args, kwargs, output, i=i):
                x = output[0] if isinstance(output, tuple) else output
                x = _apply(x, _writes(edits, "SetResid", i, "post"))
                if i == len(self.layer_modules) - 1:
                    hooks.store("resid", i + 1, x)
                return (x, *output[1:]) if isinstance(output, tuple) else x

            def z(module, args, i=i):
                x = _apply(args[0], _writes(edits, "SetHead", i), cols=lambda w: slice(w.head * d_head,
                                                                                       (w.head + 1) * d_head))
                hooks.store("z", i, x)
                return (x, *args[1:])

            def attn_out(module, args, output, i=i):
                hooks.store("attn_out", i, output)

            def mlp(module, args, output, i=i):
                x = _apply(output, _writes(edits, "SetMLP", i))
                hooks.store("mlp_out", i, x)
                return x

            hooks.handles += [
                layer.register_forward_pre_hook(pre, with_kwargs=True),
                layer.register_forward_hook(post, with_kwargs=True),
                self.w_o(layer).register_forward_pre_hook(z),
                self.w_o(layer).register_forward_hook(attn_out),
                self.mlp_module(layer).register_forward_hook(mlp),
            ]
            hooks.handles += self.hook_mid(layer, i, hooks, edits)

    def _collect(self, hooks: _Hooks) -> dict[str, np.ndarray]:
        out = {}
        for name, per in hooks.kept.items():
            out[name] = np.stack([per[i] for i in sorted(per)])
        if "z" in out:
            out["z"] = out["z"].reshape(*out["z"].shape[:2], self.n_head, self.d_head)
        return out


class HFDecoder(_Peer):
    """SmolLM2 as ``transformers`` runs it (``LlamaForCausalLM``), with hooks."""

    def __init__(self, model) -> None:
        self.model = model
        c = model.config
        self.n_head, self.d_head = c.num_attention_heads, c.hidden_size // c.num_attention_heads
        self.layer_modules = list(model.model.layers)
        self.eps = c.rms_norm_eps

    @staticmethod
    def w_o(layer):
        return layer.self_attn.o_proj

    @staticmethod
    def mlp_module(layer):
        return layer.mlp

    def hook_mid(self, layer, i, hooks, edits) -> list:
        if _writes(edits, "SetResid", i, "mid"):
            raise NotImplementedError("Llama adds the residual before post_attention_layernorm: no mid hook")

        def mid(module, args, i=i):
            hooks.store("mid", i, args[0])

        return [layer.post_attention_layernorm.register_forward_pre_hook(mid)]

    def run(self, ids, *, edits=(), keep: bool = True, logits_to_keep: int = 0) -> dict[str, np.ndarray]:
        hooks = _Hooks(len(self.layer_modules), keep)
        self._hook_all(hooks, edits)
        try:
            with torch.no_grad():
                out = self.model(torch.tensor([list(ids)]), logits_to_keep=logits_to_keep)
        finally:
            hooks.close()
        result = self._collect(hooks)
        result["logits"] = out.logits[0].to(torch.float64).numpy()
        if keep:
            x = torch.as_tensor(result["resid"][-1], dtype=torch.float32)
            result["final_rms"] = torch.sqrt(x.pow(2).mean(-1) + self.eps).to(torch.float64).numpy()
        return result

    def patched_logits(self, ids, edit) -> np.ndarray:
        """The last token's logits (V,) with one intervention, through one hook (as hook tools patch)."""
        layer = self.layer_modules[edit.layer]
        kind = type(edit).__name__
        if kind == "SetHead":
            d = self.d_head
            cols = slice(edit.head * d, (edit.head + 1) * d)
            handle = layer.self_attn.o_proj.register_forward_pre_hook(
                lambda m, args: (_apply(args[0], [edit], cols=lambda w: cols), *args[1:]))
        elif kind == "SetMLP":
            handle = layer.mlp.register_forward_hook(lambda m, args, out: _apply(out, [edit]))
        elif kind == "SetResid" and edit.site == "pre":
            handle = layer.register_forward_pre_hook(lambda m, args: (_apply(args[0], [edit]), *args[1:]))
        elif kind == "SetResid" and edit.site == "post":
            handle = layer.register_forward_hook(lambda m, args, out: _apply(out, [edit]))
        else:
            raise NotImplementedError(f"{kind} at {getattr(edit, 'site', '')}")
        try:
            with torch.no_grad():
                out = self.model(torch.tensor([list(ids)]), logits_to_keep=1)
        finally:
            handle.remove()
        return out.logits[0, -1].to(torch.float64).numpy()

    def weights(self) -> dict[str, np.ndarray]:
        """The final norm's gain (d,), the tied embedding (V, d), each W_O (L, d, H * d_head): float64."""
        m = self.model
        return {
            "gamma": m.model.norm.weight.detach().to(torch.float64).numpy(),
            "embedding": m.lm_head.weight.detach().to(torch.float64).numpy(),
            "w_o": np.stack([layer.self_attn.o_proj.weight.detach().to(torch.float64).numpy()
                             for layer in self.layer_modules]),  # fmt: skip
        }


class HFEncoder(_Peer):
    """all-MiniLM-L6-v2's BERT as ``transformers`` runs it, with hooks; pooled as sentence-transformers."""

    def __init__(self, bert) -> None:
        self.model = bert
        c = bert.config
        self.n_head, self.d_head = c.num_attention_heads, c.hidden_size // c.num_attention_heads
        self.layer_modules = list(bert.encoder.layer)

    @staticmethod
    def w_o(layer):
        return layer.attention.output.dense

    @staticmethod
    def mlp_module(layer):
        return layer.output.dense

    def hook_mid(self, layer, i, hooks, edits) -> list:
        def mid(module, args, output, i=i):
            x = _apply(output[0], _writes(edits, "SetResid", i, "mid"))
            hooks.store("mid", i, x)
            return (x, *output[1:])

        return [layer.attention.register_forward_hook(mid)]

    def run(self, ids, *, edits=(), keep: bool = True) -> dict[str, np.ndarray]:
        hooks = _Hooks(len(self.layer_modules), keep)
        self._hook_all(hooks, edits)
        ids_t = torch.tensor([list(ids)])
        try:
            with torch.no_grad():
                out = self.model(input_ids=ids_t, attention_mask=torch.ones_like(ids_t))
        finally:
            hooks.close()
        result = self._collect(hooks)
        pooled = out.last_hidden_state[0].mean(dim=0)
        result["pooled"] = torch.nn.functional.normalize(pooled, dim=0).to(torch.float64).numpy()
        return result
