"""One head: its QK products before and after RoPE with its GQA group, and what its values write."""

from __future__ import annotations

import numpy as np
import pytest
from circuitkit import CLEAN, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.heads import head_reads, head_writes
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


def _softmax_rows(scores, allowed):
    s = np.where(allowed, scores, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_heads_reads_name_its_group_and_give_its_weights(decoder):
    c = run(decoder, decoder.encode(CLEAN))
    r = head_reads(decoder, c, 18, 6)
    assert (r.kv_head, r.group) == (2, (6, 7, 8))  # query heads 6, 7, 8 share KV head 2
    assert r.q.shape == r.k.shape == r.v.shape == r.q_rotated.shape == (9, 64)
    assert r.dots_before.shape == r.dots_after.shape == (9, 9)
    assert r.scale == 0.125 and np.array_equal(r.allowed, np.tril(np.ones((9, 9), bool)))
    np.testing.assert_allclose(_softmax_rows(r.dots_after * r.scale, r.allowed), r.weights, rtol=0, atol=1e-6)
    # RoPE rotates q_i and k_i by the same angle: on the diagonal the products are unchanged
    np.testing.assert_allclose(np.diag(r.dots_after), np.diag(r.dots_before), rtol=1e-5, atol=1e-4)
    assert not np.allclose(r.dots_after, r.dots_before, rtol=1e-3)
    np.testing.assert_array_equal(head_reads(decoder, c, 18, 7).k, r.k)  # the group shares k
    # the head's own output at each position is its weights on the group's values
    np.testing.assert_allclose(r.weights.astype(np.float64) @ r.v, c.z[18, :, 6], rtol=0, atol=1e-4)


def test_an_encoder_head_has_no_rope_and_no_group(minilm):
    c = run(minilm, sentence_ids(minilm))
    r = head_reads(minilm, c, 2, 5)
    assert (r.kv_head, r.group) == (5, (5,)) and r.q_rotated is r.q and r.allowed.all()
    np.testing.assert_array_equal(r.dots_after, r.dots_before)
    np.testing.assert_allclose(_softmax_rows(r.dots_after * r.scale, r.allowed), r.weights, rtol=0, atol=1e-6)
    with pytest.raises(FieldError) as error:
        head_writes(minilm, c, 2, 5)
    assert error.value.loc == ("model",)


def test_what_a_head_writes_is_its_direct_logit_attribution(decoder):
    c = run(decoder, decoder.encode(CLEAN))
    w = head_writes(decoder, c, 18, 6, sources=4, top=5)
    assert w.position == 8 and w.sources.shape == (4,) and w.promoted_ids.shape == (4, 5)
    assert np.all(np.diff(w.weights) <= 0) and w.weights.sum() <= 1.0 + 1e-6
    np.testing.assert_array_equal(w.weights, head_reads(decoder, c, 18, 6).weights[8, w.sources])
    assert np.all(np.diff(w.promoted_logits, axis=-1) <= 0)
    for token, value in zip(w.written_ids[:3], w.written_logits[:3], strict=True):
        assert abs(logit_attribution(decoder, c, 8, int(token)).heads[18, 6] - value) <= 1e-4
    with pytest.raises(FieldError) as error:
        head_writes(decoder, c, 18, 9)
    assert error.value.loc == ("head",)


@pytest.mark.oracle
def test_qk_products_before_and_after_rope_equal_transformers(decoder, hf_decoder):
    """GGUF pairs q and k coordinates differently from transformers (interleaved vs halves), so the
    vectors differ by a permutation inside each head; their dot products do not."""
    import torch
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

    ids = decoder.encode(CLEAN)
    c = run(decoder, ids)
    x = torch.as_tensor(hf_decoder.run(ids)["resid"][18], dtype=torch.float32)[None]  # (1, T, d)
    layer = hf_decoder.model.model.layers[18]
    with torch.no_grad():
        h = layer.input_layernorm(x)
        q = layer.self_attn.q_proj(h).view(1, 9, 9, 64).transpose(1, 2)  # (1, H, T, d)
        k = layer.self_attn.k_proj(h).view(1, 9, 3, 64).transpose(1, 2)
        cos, sin = hf_decoder.model.model.rotary_emb(x, torch.arange(9)[None])
        qr, kr = apply_rotary_pos_emb(q, k, cos, sin)
    for head in (0, 4, 6):
        r = head_reads(decoder, c, 18, head)
        before = (q[0, head] @ k[0, r.kv_head].T).double().numpy()
        after = (qr[0, head] @ kr[0, r.kv_head].T).double().numpy()
        for ours, theirs in ((r.dots_before, before), (r.dots_after, after)):
            assert np.abs(ours - theirs).max() <= 1e-5 * np.abs(theirs).max()


def test_the_same_bits_on_one_blas_thread_or_two(smollm2, monkeypatch):
    """The dots (float64, after the attention trace) and what the head writes are computed inside one
    BLAS thread, so their sums never depend on the thread count the process was given."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.threads import blas_threads
    from attnlab.models.circuits import heads

    c = run(smollm2, smollm2.encode(CLEAN))
    seen = []
    real = heads._attention_trace

    def watched(*args):
        out = real(*args)
        seen.append(blas_threads())  # the dots come next: the hold must still be on
        return out

    monkeypatch.setattr(heads, "_attention_trace", watched)
    got = {}
    for n in (1, 2):
        with threadpool_limits(limits=n, user_api="blas"):
            r, w = head_reads(smollm2, c, 18, 6), head_writes(smollm2, c, 18, 6)
            assert blas_threads() == {n}  # restored afterwards
        got[n] = [r.dots_before, r.dots_after, w.promoted_logits, w.written_logits]
    assert seen and all(s == {1} for s in seen)
    for one, two in zip(got[1], got[2], strict=True):
        assert one.dtype == two.dtype and one.tobytes() == two.tobytes()

