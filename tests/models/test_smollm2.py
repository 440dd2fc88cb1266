"""SmolLM2-135M-Instruct on attnlab's engine against Hugging Face transformers (same GGUF)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.models.chat import user_turn
from attnlab.models.sampling import Sampling

pytestmark = pytest.mark.models

PROMPTS = [
    "Once upon a time",
    "The capital of France is",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "Café, naïve 🙂 and 12345 numbers!",
    user_turn("What is attention in a transformer?"),
]


@pytest.fixture(scope="module")
def smollm2_exact(smollm2):
    """The same weights computed in float64 (the engine's exact default)."""
    return smollm2.with_dtype(np.float64)


@pytest.fixture(scope="module")
def smollm2_float32(smollm2):
    """The float32 path: gguf's dequantized values, from the (test session's) weight cache."""
    return smollm2.with_dtype(np.float32)


def test_the_shared_model_computes_on_the_files_blocks(smollm2, smollm2_float32):
    from attnlab.engine.fast.quant import QuantMatrix

    assert smollm2.path == "q4_1" and smollm2_float32.path == "float32"
    a = smollm2.weights.blocks[0].attn
    assert isinstance(a.w_q, QuantMatrix) and a.w_q.fmt == "Q4_1" and a.w_q.shape == (576, 576)
    assert isinstance(smollm2.weights.embed, QuantMatrix) and smollm2.weights.embed.fmt == "Q8_0"
    assert smollm2.weights.embed.shape == (576, 49152)  # E^T: the tied output layer
    assert not a.w_q.parts[0].flags.writeable and a.w_q.parts[0].base is not None  # the file's map


def test_both_paths_give_every_weight_the_same_value(smollm2, smollm2_float32):
    """Every block of the file: the kernels' values are gguf's, and the products agree."""
    rng = np.random.default_rng(0)
    names = ("w_q", "w_k", "w_v", "w_o")
    for ours, ref in zip(smollm2.weights.blocks, smollm2_float32.weights.blocks, strict=True):
        pairs = [(getattr(ours.attn, n), getattr(ref.attn, n)) for n in names]
        pairs += [(getattr(ours.mlp, n), getattr(ref.mlp, n)) for n in ("w_gate", "w_up", "w_down")]
        for blocks, values in pairs:
            np.testing.assert_array_equal(blocks.values(), values)
            x = rng.standard_normal((3, values.shape[0])).astype(np.float32)
            exact = x.astype(np.float64) @ values.astype(np.float64)
            bound = 2e-6 * (np.abs(x) @ np.abs(values)) + 1e-7
            for rows in (x[:1], x):
                assert np.all(np.abs(rows @ blocks - exact[: len(rows)]) <= bound[: len(rows)])
        np.testing.assert_array_equal(ours.norm_1.weight, ref.norm_1.weight)
    np.testing.assert_array_equal(smollm2.weights.embed.values().T, smollm2_float32.weights.embed)


@pytest.mark.oracle
@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_token_ids_equal_transformers(smollm2, hf_smollm2, prompt):
    _, tokenizer = hf_smollm2
    assert smollm2.encode(prompt) == tokenizer(prompt)["input_ids"]
    # control tokens stay whole
    assert smollm2.encode("<|im_start|>user")[0] == smollm2.tokenizer.token_to_id("<|im_start|>")


@pytest.mark.oracle
def test_chat_template_equals_transformers(hf_smollm2):
    _, tokenizer = hf_smollm2
    messages = [{"role": "user", "content": "Hi there"}]
    assert user_turn("Hi there") == tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True
    )


@pytest.mark.oracle
@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_logits_equal_transformers_at_every_position(smollm2_exact, hf_smollm2, prompt):
    import torch

    model, tokenizer = hf_smollm2
    ids = tokenizer(prompt)["input_ids"]
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0].numpy()
    ours = smollm2_exact.logits(ids)
    assert ours.shape == theirs.shape == (len(ids), 49152)
    assert np.abs(ours - theirs).max() <= 1e-4


@pytest.mark.oracle
@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_q4_logits_stay_close_to_transformers_at_every_position(smollm2, hf_smollm2, prompt):
    """The q4_1 path (float32 products on the blocks) against HF's float32 on the same weights."""
    import torch

    model, tokenizer = hf_smollm2
    ids = tokenizer(prompt)["input_ids"]
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0].numpy()
    ours = smollm2.logits(ids)
    assert ours.shape == theirs.shape == (len(ids), 49152)
    assert np.abs(ours - theirs).max() <= 5e-4
    # one position at a time through the KV cache: one-row products, another summation order
    cache = smollm2.new_cache()
    steps = np.vstack([smollm2.forward([t], cache=cache) for t in ids])
    assert np.abs(steps - theirs).max() <= 5e-4


@pytest.mark.oracle
def test_float32_logits_stay_close_to_transformers(smollm2, hf_smollm2):
    import torch

    model, tokenizer = hf_smollm2
    ids = tokenizer(PROMPTS[1])["input_ids"]
    with torch.no_grad():
        theirs = model(torch.tensor([ids])).logits[0].numpy()
    assert np.abs(smollm2.logits(ids) - theirs).max() <= 5e-4


def _hf_twenty_greedy(hf_smollm2, text: str) -> tuple[list[int], list[int]]:
    """The prompt's ids and transformers' 20 greedy tokens after it (no early stop)."""
    import torch

    model, tokenizer = hf_smollm2
    ids = tokenizer(text)["input_ids"]
    with torch.no_grad():
        out = model.generate(
            torch.tensor([ids]),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=20,
            min_new_tokens=20,
            do_sample=False,
            pad_token_id=2,
        )
    return ids, out[0, len(ids) :].tolist()


@pytest.mark.oracle
def test_twenty_greedy_tokens_equal_transformers(smollm2_exact, hf_smollm2):
    ids, theirs = _hf_twenty_greedy(hf_smollm2, "Once upon a time")
    ours = list(smollm2_exact.generate_ids(ids, max_new_tokens=20, stop=False))
    assert len(theirs) == 20
    assert ours == theirs


@pytest.mark.oracle
def test_q4_twenty_greedy_tokens_equal_transformers(smollm2, hf_smollm2):
    ids, theirs = _hf_twenty_greedy(hf_smollm2, "Once upon a time")
    assert list(smollm2.generate_ids(ids, max_new_tokens=20, stop=False)) == theirs


def test_q4_cached_generation_equals_full_recompute(smollm2):
    ids = smollm2.encode("The capital of France is")
    cached = list(smollm2.generate_ids(ids, max_new_tokens=8, stop=False))
    seq = list(ids)
    for _ in range(8):
        seq.append(int(np.argmax(smollm2.logits(seq)[-1])))
    assert cached == seq[len(ids) :]
    cache = smollm2.new_cache()
    step = np.vstack([smollm2.forward([t], cache=cache) for t in seq])
    assert np.abs(step - smollm2.logits(seq)).max() <= 5e-4  # float32, two summation orders


def test_the_prompt_pass_gives_the_last_rows_logits_and_fills_the_cache(smollm2):
    ids = smollm2.encode("The capital of France is")
    cache, full_cache = smollm2.new_cache(), smollm2.new_cache()
    last = smollm2.prefill(ids, cache=cache)
    full = smollm2.forward(ids, cache=full_cache)
    assert last.shape == (smollm2.arch.d_vocab,)
    assert np.abs(last - full[-1]).max() <= 5e-4  # the output layer's one-row sum, in another order
    assert int(np.argmax(last)) == int(np.argmax(full[-1]))
    for ours, theirs in zip(cache, full_cache, strict=True):  # the layers ran on every token alike
        assert ours.keys.tobytes() == theirs.keys.tobytes()
        assert ours.values.tobytes() == theirs.values.tobytes()


def test_cached_generation_equals_full_recompute(smollm2_exact):
    ids = smollm2_exact.encode("The capital of France is")
    cached = list(smollm2_exact.generate_ids(ids, max_new_tokens=8, stop=False))
    # full recompute: run the whole sequence again for every new token
    seq = list(ids)
    for _ in range(8):
        seq.append(int(np.argmax(smollm2_exact.logits(seq)[-1])))
    assert cached == seq[len(ids) :]
    # and the cached logits themselves match the recomputed ones
    cache = smollm2_exact.new_cache()
    step = np.vstack([smollm2_exact.forward([t], cache=cache) for t in seq])
    full = smollm2_exact.logits(seq)
    assert np.abs(step - full).max() <= 1e-9


def test_sampling_is_seeded_and_respects_top_k(smollm2):
    ids = smollm2.encode("Once upon a time")
    sampling = Sampling(temperature=0.9, top_k=5, top_p=0.95, seed=7)
    first = list(smollm2.generate_ids(ids, max_new_tokens=6, sampling=sampling, stop=False))
    again = list(smollm2.generate_ids(ids, max_new_tokens=6, sampling=sampling, stop=False))
    assert first == again
    # with top_k=1 sampling has a single candidate: it is the greedy path
    one = Sampling(temperature=1.3, top_k=1, seed=3)
    greedy = list(smollm2.generate_ids(ids, max_new_tokens=6, stop=False))
    assert list(smollm2.generate_ids(ids, max_new_tokens=6, sampling=one, stop=False)) == greedy


def test_chat_generation_streams_and_stops_at_end_of_turn(smollm2):
    pieces = list(smollm2.generate(user_turn("Say hi."), max_new_tokens=60))
    assert pieces, "nothing was generated"
    assert all(isinstance(p.text, str) for p in pieces)
    assert pieces[-1].finish in ("end_of_turn", "length")
    assert "<|im_end|>" not in "".join(p.text for p in pieces)
    if pieces[-1].finish == "end_of_turn":
        assert len(pieces) < 60


def test_trace_shows_causal_gqa_heads(smollm2):
    trace = smollm2.trace("The cat sat on the mat.", details=True)
    n = len(trace.tokens)
    weights = trace.all_weights()  # recomputed from the kept q, k, v
    assert weights.shape == (30, 9, n, n)
    assert np.all(np.triu(weights, k=1) == 0.0)  # causal: nothing from the future
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    assert trace.kv_groups == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert trace.k.shape == (30, 3, n, 64) and trace.q.shape == (30, 9, n, 64)


def test_bad_generation_settings_are_refused(smollm2):
    with pytest.raises(ValueError, match="temperature"):
        Sampling(temperature=float("nan"))
    with pytest.raises(ValueError, match="top_p"):
        Sampling(temperature=1.0, top_p=0.0)
    with pytest.raises(ValueError, match="max_new_tokens"):
        list(smollm2.generate("hi", max_new_tokens=0))
    with pytest.raises(ValueError, match="prompt"):
        list(smollm2.generate("", max_new_tokens=3))


def test_projections_are_laid_out_for_one_product_each(smollm2, smollm2_exact):
    """w_q|w_k|w_v and w_gate|w_up sit side by side, so a decoding step reads each group at once."""
    from attnlab.engine.fast.ops import joined

    for model in (smollm2, smollm2_exact):
        for params in model.weights.blocks:
            a, f = params.attn, params.mlp
            qkv, gate_up = joined(a.w_q, a.w_k, a.w_v), joined(f.w_gate, f.w_up)
            assert qkv is not None and gate_up is not None
            assert qkv.shape == (576, 576 + 2 * 192) and gate_up.shape == (576, 2 * 1536)
            assert qkv.dtype == gate_up.dtype == params.attn.w_o.dtype
