"""The hook points against Hugging Face transformers' own forward hooks, and hook interventions.

SmolLM2 on the float32 path (gguf's dequantized values, the weights transformers loads from the
same GGUF) and MiniLM (the sentence-transformers folder's BertModel): every hook kind at three
layers within 1e-5 of the largest magnitude compared. transformers reads the GGUF's W_Q and
W_K back into Hugging Face's half-split RoPE layout; ours keep the file's interleaved pairs, so
q and k coordinates are matched through that permutation. The scores and the rotated q, k have
no module in transformers: they come from its own ``apply_rotary_pos_emb`` on its projections.

Interventions: a zero-ablation and a residual patch made with ``run_with_hooks`` are the circuits
views' numbers bit for bit; attention-pattern and value patching match transformers with the
same change made in its attention (an attention function registered for the test) or its
``v_proj`` output.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "circuits"))

from circuitkit import ANSWERS, CLEAN, CORRUPT, SENTENCE, sentence_ids  # noqa: E402

from attnlab.engine.hooks import block_names  # noqa: E402

pytestmark = [pytest.mark.models, pytest.mark.oracle]

LAYERS = (0, 14, 29)
TOL = 1e-5  # of the largest magnitude compared


def close(ours, theirs, what: str) -> None:
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, (what, ours.shape, theirs.shape)
    finite = np.isfinite(theirs)
    assert np.array_equal(finite, np.isfinite(ours)), what
    scale = max(float(np.abs(theirs[finite]).max()), 1e-30)
    gap = float(np.abs(ours[finite] - theirs[finite]).max()) / scale
    assert gap <= TOL, f"{what}: {gap:.2e} of the largest magnitude"


def interleaved(d: int) -> np.ndarray:
    """Our coordinate j of a head (the GGUF's interleaved pairs) is transformers' coordinate order[j]."""
    half = d // 2
    order = np.empty(d, dtype=np.intp)
    order[0::2] = np.arange(half)
    order[1::2] = np.arange(half) + half
    return order


@pytest.fixture(scope="module")
def f32(smollm2):
    return smollm2.with_dtype(np.float32)


@pytest.fixture(scope="module")
def hf_run(hf_smollm2, f32):
    """transformers' SmolLM2 on CLEAN with hooks keeping each module's input or output (float64)."""
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    model, _ = hf_smollm2
    ids = f32.encode(CLEAN)
    kept: dict[str, np.ndarray] = {}
    handles = []

    def keep(name, at="output"):
        def hook(module, args, output):
            t = args[0] if at == "input" else (output[0] if isinstance(output, tuple) else output)
            kept[name] = t[0].detach().to(torch.float64).numpy()

        return hook

    m = model.model
    handles.append(m.embed_tokens.register_forward_hook(keep("hook_embed")))
    handles.append(m.norm.register_forward_hook(keep("ln_final.hook_normalized")))
    for i in LAYERS:
        layer, n = m.layers[i], block_names(i)
        a = layer.self_attn
        handles += [
            layer.register_forward_hook(keep(n.resid_pre, "input")),
            layer.register_forward_hook(keep(n.resid_post)),
            layer.input_layernorm.register_forward_hook(keep(n.ln1)),
            a.q_proj.register_forward_hook(keep(n.q)),
            a.k_proj.register_forward_hook(keep(n.k)),
            a.v_proj.register_forward_hook(keep(n.v)),
            a.o_proj.register_forward_hook(keep(n.z, "input")),
            a.o_proj.register_forward_hook(keep(n.attn_out)),
            layer.post_attention_layernorm.register_forward_hook(keep(n.resid_mid, "input")),
            layer.post_attention_layernorm.register_forward_hook(keep(n.ln2)),
            layer.mlp.gate_proj.register_forward_hook(keep(n.mlp_pre)),
            layer.mlp.up_proj.register_forward_hook(keep(n.mlp_pre_linear)),
            layer.mlp.down_proj.register_forward_hook(keep(n.mlp_post, "input")),
            layer.mlp.register_forward_hook(keep(n.mlp_out)),
        ]
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")  # only the eager path returns attention weights
    try:
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True)
    finally:
        model.set_attn_implementation(before)
        for h in handles:
            h.remove()
    c = model.config
    n_head, n_kv, d = c.num_attention_heads, c.num_key_value_heads, c.hidden_size // c.num_attention_heads
    t = len(ids)
    position = torch.arange(t)[None]
    for i in LAYERS:
        n = block_names(i)
        kept[n.pattern] = out.attentions[i][0].to(torch.float64).numpy()
        q = torch.tensor(kept[n.q]).reshape(1, t, n_head, d).transpose(1, 2)
        k = torch.tensor(kept[n.k]).reshape(1, t, n_kv, d).transpose(1, 2)
        cos, sin = m.rotary_emb(q, position)
        rq, rk = apply_rotary_pos_emb(q, k, cos, sin)
        kept[n.rot_q], kept[n.rot_k] = rq[0].transpose(0, 1).numpy(), rk[0].transpose(0, 1).numpy()
        group = n_head // n_kv
        scores = (rq[0] @ rk[0].repeat_interleave(group, dim=0).transpose(-1, -2)) / np.sqrt(d)
        kept[n.scores] = np.where(np.tril(np.ones((t, t), bool)), scores.numpy(), -np.inf)
        for name, heads in ((n.q, n_head), (n.k, n_kv), (n.v, n_kv), (n.z, n_head)):
            kept[name] = kept[name].reshape(t, heads, d)
    kept["logits"] = out.logits[0].to(torch.float64).numpy()
    return ids, kept


def test_every_hook_kind_at_three_layers_equals_transformers(f32, hf_run):
    ids, theirs = hf_run
    logits, cache = f32.run_with_cache(ids)
    d = f32.arch.d_head
    order = interleaved(d)
    for name, want in theirs.items():
        if name == "logits":
            close(logits, want, "logits")
            continue
        ours = cache[name]
        if name.endswith(("attn.hook_q", "attn.hook_k", "attn.hook_rot_q", "attn.hook_rot_k")):
            want = want[..., order]  # transformers' half-split coordinates in our interleaved order
        close(ours, want, name)
    assert len(theirs) == 3 + len(LAYERS) * 18


@pytest.fixture(scope="module")
def bert_run(st_oracle, minilm):
    import torch

    bert = st_oracle[0].auto_model
    ids = sentence_ids(minilm)
    kept: dict[str, np.ndarray] = {}
    handles = []

    def keep(name, at="output"):
        def hook(module, args, output):
            t = args[0] if at == "input" else (output[0] if isinstance(output, tuple) else output)
            kept[name] = t[0].detach().to(torch.float64).numpy()

        return hook

    e = bert.embeddings
    handles += [
        e.word_embeddings.register_forward_hook(keep("hook_embed")),
        e.position_embeddings.register_forward_hook(keep("hook_pos_embed")),
        e.LayerNorm.register_forward_hook(keep("embed.ln.hook_normalized")),
    ]
    for i in (0, 2, 5):
        layer, n = bert.encoder.layer[i], block_names(i)
        s = layer.attention.self
        handles += [
            layer.register_forward_hook(keep(n.resid_pre, "input")),
            s.query.register_forward_hook(keep(n.q)),
            s.key.register_forward_hook(keep(n.k)),
            s.value.register_forward_hook(keep(n.v)),
            layer.attention.output.dense.register_forward_hook(keep(n.z, "input")),
            layer.attention.output.dense.register_forward_hook(keep(n.attn_out)),
            layer.attention.output.LayerNorm.register_forward_hook(keep(n.resid_mid, "input")),
            layer.attention.output.LayerNorm.register_forward_hook(keep(n.ln1)),
            layer.intermediate.dense.register_forward_hook(keep(n.mlp_pre)),
            layer.intermediate.register_forward_hook(keep(n.mlp_post)),
            layer.output.dense.register_forward_hook(keep(n.mlp_out)),
            layer.output.LayerNorm.register_forward_hook(keep(n.resid_post, "input")),
            layer.output.LayerNorm.register_forward_hook(keep(n.ln2)),
        ]
    ids_t = torch.tensor([ids])
    before = bert.config._attn_implementation
    bert.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = bert(input_ids=ids_t, attention_mask=torch.ones_like(ids_t), output_attentions=True)
    finally:
        bert.set_attn_implementation(before)
        for h in handles:
            h.remove()
    t, h = len(ids), bert.config.num_attention_heads
    for i in (0, 2, 5):
        n = block_names(i)
        kept[n.pattern] = out.attentions[i][0].to(torch.float64).numpy()
        for name in (n.q, n.k, n.v, n.z):
            kept[name] = kept[name].reshape(t, h, -1)
    return ids, kept


def test_minilms_hook_points_equal_transformers(minilm, bert_run):
    ids, theirs = bert_run
    _, cache = minilm.run_with_cache(ids)
    for name, want in theirs.items():
        close(cache[name], want, name)
    assert len(theirs) == 3 + 3 * 14


# -- interventions --------------------------------------------------------------------------------


@pytest.fixture(params=["q4_1", "float32"])
def decoder(request, smollm2):
    return smollm2 if request.param == "q4_1" else request.getfixturevalue("f32")


def test_a_zero_ablation_with_hooks_is_the_ablation_views_numbers_bit_for_bit(decoder):
    from attnlab.models.circuits.ablation import ablate

    ids = decoder.encode(CLEAN)
    heads = [(18, 6), (17, 4)]
    a = ablate(decoder, ids, heads, how="zero")

    def zero(layer_heads):
        def hook(z, name):
            z = z.copy()
            for head in layer_heads:
                z[:, head] = 0
            return z

        return hook

    hooks = [(block_names(layer).z, zero([h for lay, h in heads if lay == layer])) for layer in (17, 18)]
    assert decoder.run_with_hooks(ids, fwd_hooks=hooks).tobytes() == a.after.logits.tobytes()


def test_a_residual_patch_with_hooks_is_the_patching_views_numbers_bit_for_bit(decoder):
    from attnlab.models.circuits.patching import pair, patched_run, residual_patch

    right, other = (decoder.encode(a)[0] for a in ANSWERS)
    clean, corrupt = decoder.encode(CLEAN), decoder.encode(CORRUPT)
    p = pair(decoder, clean, corrupt, answers=(right, other))
    layer, position = 9, 3
    patched = patched_run(decoder, p, [residual_patch(p, layer, position)])
    _, kept = decoder.run_with_cache(clean, names=[block_names(layer).resid_pre])
    clean_resid = kept[block_names(layer).resid_pre]

    def patch(x, name):
        x = x.copy()
        x[position] = clean_resid[position]
        return x

    logits = decoder.run_with_hooks(corrupt, fwd_hooks=[(block_names(layer).resid_pre, patch)])
    assert logits.tobytes() == patched.logits.tobytes()


@pytest.fixture(scope="module")
def hf_patched(hf_smollm2):
    """transformers' last-token logits with one head's pattern, or one KV head's values, replaced."""
    import torch
    from transformers import AttentionInterface
    from transformers.models.llama.modeling_llama import eager_attention_forward, repeat_kv

    model, _ = hf_smollm2
    patch: dict = {}

    def attention(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
        """transformers' eager attention (modeling_llama.eager_attention_forward), with one head's
        weights replaced after the softmax in the patched layer."""
        if attention_mask is None:  # a registered attention gets no mask made for it: causal, as eager's
            t, s = query.shape[-2], key.shape[-2]
            attention_mask = torch.full((t, s), float("-inf")).triu(s - t + 1)[None, None]
        if patch.get("layer") != module.layer_idx:
            return eager_attention_forward(module, query, key, value, attention_mask, scaling=scaling,
                                           dropout=dropout, **kwargs)  # fmt: skip
        keys = repeat_kv(key, module.num_key_value_groups)
        values = repeat_kv(value, module.num_key_value_groups)
        w = torch.matmul(query, keys.transpose(2, 3)) * scaling
        if attention_mask is not None:
            w = w + attention_mask[:, :, :, : keys.shape[-2]]
        w = torch.nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)
        w[0, patch["head"]] = torch.as_tensor(np.array(patch["pattern"]), dtype=w.dtype)
        out = torch.matmul(w, values).transpose(1, 2).contiguous()
        return out, w

    AttentionInterface.register("attnlab_patched", attention)

    def run(ids, *, layer, head=None, pattern=None, kv_head=None, values=None):
        handle = None
        if pattern is not None:
            patch.update(layer=layer, head=head, pattern=pattern)
        if values is not None:
            d = model.config.hidden_size // model.config.num_attention_heads

            def v_hook(module, args, output):
                out = output.clone()
                value = torch.as_tensor(np.array(values), dtype=out.dtype)
                out[0, :, kv_head * d : (kv_head + 1) * d] = value
                return out

            handle = model.model.layers[layer].self_attn.v_proj.register_forward_hook(v_hook)
        before = model.config._attn_implementation
        model.set_attn_implementation("attnlab_patched")
        try:
            with torch.no_grad():
                out = model(torch.tensor([ids]), logits_to_keep=1)
        finally:
            model.set_attn_implementation(before)
            patch.clear()
            if handle is not None:
                handle.remove()
        return out.logits[0, -1].to(torch.float64).numpy()

    return run


def test_pattern_and_value_patching_match_transformers(f32, hf_patched):
    clean, corrupt = f32.encode(CLEAN), f32.encode(CORRUPT)
    layer, head, kv_head = 15, 4, 1
    n = block_names(layer)
    _, kept = f32.run_with_cache(clean, names=[n.pattern, n.v])
    pattern, values = kept[n.pattern][head], kept[n.v][:, kv_head]

    def set_pattern(w, name):
        w = w.copy()
        w[head] = pattern
        return w

    def set_values(v, name):
        v = v.copy()
        v[:, kv_head] = values
        return v

    ours = f32.run_with_hooks(corrupt, fwd_hooks=[(n.pattern, set_pattern)])[-1]
    close(ours, hf_patched(corrupt, layer=layer, head=head, pattern=pattern), "pattern patch")
    ours = f32.run_with_hooks(corrupt, fwd_hooks=[(n.v, set_values)])[-1]
    close(ours, hf_patched(corrupt, layer=layer, kv_head=kv_head, values=values), "value patch")
    # and each patch changed something: a no-op patch would pass trivially
    assert not np.allclose(ours, f32.forward(corrupt)[-1])


def test_minilms_sentence_with_a_head_zeroed_matches_the_ablation_view(minilm):
    from attnlab.models.circuits.ablation import ablate

    ids = sentence_ids(minilm, SENTENCE)
    a = ablate(minilm, ids, [(2, 3)], how="zero")

    def zero(z, name):
        z = z.copy()
        z[:, 3] = 0
        return z

    out = minilm.run_with_hooks(ids, fwd_hooks=[(block_names(2).z, zero)])
    assert out.tobytes() == a.after.pooled.tobytes()
