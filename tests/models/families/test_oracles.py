"""Every family's tiny model (tests/familykit.py) opened by attnlab against transformers on the same files.

For each family: the logits (an encoder's last hidden state and sentence embedding) and every
layer's attention weights against transformers' eager attention, ≤ 1e-5 of the largest
magnitude in float32, on both weight paths ("float32" and "stored": products on the file's
own numbers); the hook points against transformers' modules seen through forward hooks; 20
greedy tokens equal; the KV cache equal to a full recompute. Each GGUF variant against
transformers reading the same file (``gguf_file=``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hfhooks import activations, close, hf_model

import attnlab
from attnlab.engine.hooks import block_names
from familykit import GGUF_FAMILIES, GGUF_KINDS, RECIPES

pytestmark = [pytest.mark.models, pytest.mark.oracle]

DECODERS = tuple(n for n, r in RECIPES.items() if r.causal)
ENCODERS = tuple(n for n, r in RECIPES.items() if not r.causal)
# Long enough that every sliding window (4 keys) hides keys, with digits, punctuation and new lines.
TEXT = "The quick brown fox jumps over the lazy dog. Attention weights sum to one: 42 and 3.14!\nHello"
TEXTS = [TEXT, "Hello world", "the keys and the values come from the same tokens"]

_opened: dict = {}


def opened(families, name: str, weights: str = "float32", kind: str | None = None):
    """attnlab's model of ``name`` (its folder, or its GGUF of ``kind``) on ``weights``, opened once."""
    key = (name, weights, kind)
    if key not in _opened:
        path = families.folder(name) if kind is None else families.gguf(name, kind)
        _opened[key] = attnlab.load(path, weights=weights)
    return _opened[key]


def _patterns(out) -> list[np.ndarray]:
    return [a[0].numpy() for a in out.attentions]


# -- logits and attention --------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["float32", "stored"])
@pytest.mark.parametrize("name", DECODERS)
def test_a_decoders_logits_and_attention_are_transformers_eager(families, name, weights):
    model = opened(families, name, weights)
    assert model.kind == "decoder" and model.path == weights
    assert model.arch.family == RECIPES[name].model_type.split("_")[0]  # gemma3_text: gemma3
    ids = model.to_tokens(TEXT)
    assert len(ids) > 20
    logits, cache = model.run_with_cache(ids, names=lambda n: n.endswith("hook_pattern"))
    hf = hf_model(families.folder(name))
    import torch

    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_attentions=True)
    close(logits, out.logits[0].numpy(), what=f"{name} logits")
    for layer, want in enumerate(_patterns(out)):
        close(cache[block_names(layer).pattern], want, what=f"{name} layer {layer} attention")


@pytest.mark.parametrize("weights", ["float32", "stored"])
@pytest.mark.parametrize("name", ENCODERS)
def test_an_encoders_states_attention_and_sentence_embeddings_are_transformers(families, name, weights):
    import torch

    model = opened(families, name, weights)
    assert model.kind == "encoder" and model.arch.family == name
    hf = hf_model(families.folder(name), causal=False)
    batch = model.tokenize(TEXTS)
    with torch.no_grad():
        mask = torch.as_tensor(batch.mask)
        out = hf(torch.as_tensor(batch.ids), attention_mask=mask, output_attentions=True)
    last = block_names(model.arch.n_layer - 1).ln2
    for row in range(len(TEXTS)):  # each text alone: its real tokens
        n = int(batch.mask[row].sum())
        _, cache = model.run_with_cache(batch.ids[row, :n].tolist())
        close(cache[last], out.last_hidden_state[row, :n].numpy(), what=f"{name} text {row} states")
        for layer, a in enumerate(out.attentions):
            close(cache[block_names(layer).pattern], a[row, :, :n, :n].numpy(), what=f"{name} {row} {layer}")
    # the sentence embedding: the mean of the real tokens' states, unit length (padding left out)
    m = torch.as_tensor(batch.mask)[..., None].to(torch.float64)
    mean = (out.last_hidden_state.to(torch.float64) * m).sum(1) / m.sum(1)
    want = (mean / mean.norm(dim=-1, keepdim=True)).numpy()
    close(model.encode(TEXTS), want, what=f"{name} sentence embeddings")


# -- hook points ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", DECODERS + ENCODERS)
def test_the_hook_points_are_transformers_modules_seen_through_forward_hooks(families, name):
    model = opened(families, name)
    ids = model.to_tokens(TEXT) if model.kind == "decoder" else model.tokenize([TEXT]).ids[0].tolist()
    hf = hf_model(families.folder(name), causal=model.kind == "decoder")
    want, _ = activations(hf, ids, family=model.arch.family, arch=model.arch)
    _, cache = model.run_with_cache(ids)
    fields = {field for field, _ in want}
    assert {"resid_pre", "ln1", "ln2", "attn_out", "mlp_out", "mlp_post", "q", "k", "v", "z"} <= fields
    if model.arch.qk_norm:
        assert {"q_normed", "k_normed"} <= fields
    for (field, layer), value in sorted(want.items()):
        close(cache[getattr(block_names(layer), field)], value, what=f"{name} {field} {layer}")


# -- generation and the KV cache --------------------------------------------------------------------


def _greedy(hf, ids: list[int], n: int) -> list[int]:
    """transformers' greedy continuation: each step a full forward of everything so far (no cache)."""
    import torch

    out = list(ids)
    with torch.no_grad():
        for _ in range(n):
            logits = hf(torch.tensor([out]), use_cache=False).logits[0, -1]
            out.append(int(torch.argmax(logits)))
    return out[len(ids) :]


@pytest.mark.parametrize("name", DECODERS)
def test_twenty_greedy_tokens_are_transformers(families, name):
    model = opened(families, name, "stored")
    ids = model.to_tokens("Hello, world! The fox")
    ours = list(model.generate_ids(ids, max_new_tokens=20, stop=False))
    assert ours == _greedy(hf_model(families.folder(name)), ids, 20)


@pytest.mark.parametrize("weights", ["float32", "stored"])
@pytest.mark.parametrize("name", DECODERS)
def test_the_kv_cache_gives_a_full_recompute(families, name, weights):
    model = opened(families, name, weights)
    ids = model.to_tokens(TEXT)
    cache = model.new_cache()
    steps = [model.prefill(ids[:9], cache=cache)]  # then one token a step, past every sliding window
    steps += [model.forward([t], cache=cache)[-1] for t in ids[9:]]
    full, seen = model.run_with_cache(ids)
    close(np.stack(steps), full[8:], what=f"{name} cached logits")
    rotated = "rot_k" if model.arch.positions == "rope" else "k"
    for layer in range(model.arch.n_layer):
        keys = seen[getattr(block_names(layer), rotated)].swapaxes(0, 1)  # (H_kv, T, d)
        close(cache[layer].keys, keys, what=f"{name} layer {layer} cached keys")


# -- GGUF files -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", GGUF_KINDS)
@pytest.mark.parametrize("name", GGUF_FAMILIES)
def test_a_gguf_is_transformers_reading_the_same_file(families, name, kind):
    import torch

    model = opened(families, name, "stored", kind)
    path = families.gguf(name, kind)
    hf = hf_model(path.parent, gguf_file=path.name)
    ids = model.to_tokens(TEXT)
    logits, cache = model.run_with_cache(ids, names=lambda n: n.endswith("hook_pattern"))
    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_attentions=True)
    close(logits, out.logits[0].numpy(), what=f"{name} {kind} logits")
    for layer, want in enumerate(_patterns(out)):
        close(cache[block_names(layer).pattern], want, what=f"{name} {kind} layer {layer} attention")
    if kind in ("F32", "Q4_0", "K"):
        start = model.to_tokens("Hello, world! The fox")
        assert list(model.generate_ids(start, max_new_tokens=20, stop=False)) == _greedy(hf, start, 20)


@pytest.mark.parametrize("kind", ["Q4_1", "K"])
@pytest.mark.parametrize("name", GGUF_FAMILIES)
def test_a_ggufs_float32_path_is_its_stored_path_to_rounding(families, name, kind):
    stored, widened = opened(families, name, "stored", kind), opened(families, name, "float32", kind)
    assert (stored.path, widened.path) == ("stored", "float32")
    ids = stored.to_tokens(TEXT)
    close(widened.forward(ids), stored.forward(ids), rel=2e-6, what=f"{name} {kind}")
