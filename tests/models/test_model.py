"""A loaded model runs the one forward: its head, its hooks, and the residual stream in between."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "circuits"))

from circuitkit import CLEAN, SENTENCE, sentence_ids  # noqa: E402

from attnlab.engine.errors import FieldError  # noqa: E402
from attnlab.engine.hooks import block_names  # noqa: E402
from attnlab.engine.threads import one_blas_thread  # noqa: E402
from attnlab.models.circuits.runs import check_ids, final_rms  # noqa: E402

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def smollm2_f32(smollm2):
    return smollm2.with_dtype(np.float32)


@pytest.fixture(params=["q4_1", "float32"])
def decoder(request):
    return request.getfixturevalue("smollm2" if request.param == "q4_1" else "smollm2_f32")


def test_the_residual_stream_and_the_head_give_the_forwards_logits_bit_for_bit(decoder):
    assert decoder.kind == "decoder"
    ids = decoder.encode(CLEAN)
    logits = decoder.forward(ids)
    x = decoder.forward(ids, stop_at_layer=decoder.arch.n_layer)
    _, cache = decoder.run_with_cache(ids, names=[block_names(decoder.arch.n_layer - 1).resid_post])
    assert x.tobytes() == cache[block_names(decoder.arch.n_layer - 1).resid_post].tobytes()
    assert decoder.head(x).tobytes() == logits.tobytes()
    # from any layer on: the residual entering it, and the rest of the forward
    mid = decoder.forward(ids, stop_at_layer=11)
    assert decoder.forward(None, start_at_layer=11, resid=mid).tobytes() == logits.tobytes()


def test_answer_logits_are_the_forwards(decoder):
    """On the q4_1 path the same bits (one row or several); on float weights, float32 rounding."""
    ids = decoder.encode(CLEAN)
    logits = decoder.forward(ids)
    x = decoder.forward(ids, stop_at_layer=decoder.arch.n_layer)
    tokens = (7042, 7268)
    several, one = decoder.answer_logits(x, tokens), decoder.answer_logits(x[-1:], tokens)
    if decoder.path == "q4_1":
        assert several.tobytes() == logits[:, tokens].tobytes()
        assert one.tobytes() == logits[-1:, tokens].tobytes()
    else:
        np.testing.assert_allclose(several, logits[:, tokens], rtol=0, atol=2e-5)
        np.testing.assert_allclose(one, logits[-1:, tokens], rtol=0, atol=2e-5)


def test_the_final_rms_is_the_divisor_the_norm_used(decoder):
    from attnlab.engine.layers import rms_norm

    x = decoder.forward(decoder.encode(CLEAN), stop_at_layer=decoder.arch.n_layer)
    rms = final_rms(decoder, x)
    norm = decoder.weights.final_norm
    assert rms.shape == (x.shape[0],) and rms.dtype == np.float32
    assert ((x / rms[:, None]) * norm.weight).tobytes() == rms_norm(x, norm).tobytes()


def test_minilms_hidden_states_and_embedding_bit_for_bit(minilm):
    assert (minilm.kind, minilm.path, minilm.arch.n_head, minilm.arch.d_head) == (
        "encoder",
        "float32",
        12,
        32,
    )
    ids = sentence_ids(minilm)
    x = minilm.forward(ids, stop_at_layer=minilm.arch.n_layer)
    batch = minilm.tokenize([SENTENCE])
    _, cache = minilm.run_with_cache(ids, names=[block_names(5).ln2])
    assert x.tobytes() == cache[block_names(5).ln2].tobytes()  # post-norm: the block's output is LN_2's
    assert minilm.head(x).tobytes() == minilm.encode([SENTENCE])[0].tobytes()
    assert minilm.embed_batch(batch)[0].tobytes() == minilm.encode([SENTENCE])[0].tobytes()


def test_bad_ids_are_refused_at_their_field(smollm2, minilm):
    for model in (smollm2, minilm):
        bad = (([], ("ids",)), ([1, -1], ("ids", 1)), ([1, 10**6], ("ids", 1)), ([1, 2.0], ("ids", 1)))
        for ids, loc in bad:
            with pytest.raises(FieldError) as error:
                check_ids(model, ids)
            assert error.value.loc == loc


# -- hooks ----------------------------------------------------------------------------------------


def test_every_hook_point_has_transformerlens_shape_and_reading_changes_no_bit(decoder):
    a = decoder.arch
    ids = decoder.encode(CLEAN)
    t = len(ids)
    logits, cache = decoder.run_with_cache(ids)
    assert logits.tobytes() == decoder.forward(ids).tobytes()
    assert set(cache) == set(decoder.hook_names)
    n = block_names(7)
    shapes = {
        "hook_embed": (t, a.d_model),
        n.resid_pre: (t, a.d_model),
        n.ln1: (t, a.d_model),
        n.q: (t, a.n_head, a.d_head),
        n.k: (t, a.n_kv_head, a.d_head),
        n.v: (t, a.n_kv_head, a.d_head),
        n.rot_q: (t, a.n_head, a.d_head),
        n.rot_k: (t, a.n_kv_head, a.d_head),
        n.scores: (a.n_head, t, t),
        n.pattern: (a.n_head, t, t),
        n.z: (t, a.n_head, a.d_head),
        n.attn_out: (t, a.d_model),
        n.resid_mid: (t, a.d_model),
        n.ln2: (t, a.d_model),
        n.mlp_pre: (t, a.d_ff),
        n.mlp_pre_linear: (t, a.d_ff),
        n.mlp_post: (t, a.d_ff),
        n.mlp_out: (t, a.d_model),
        n.resid_post: (t, a.d_model),
        "ln_final.hook_normalized": (t, a.d_model),
    }
    for name, shape in shapes.items():
        assert cache[name].shape == shape, name
        assert not cache[name].flags.writeable
    # the short form, TransformerLens's
    assert cache["pattern", 7] is cache[n.pattern] and cache["resid_pre", 7] is cache[n.resid_pre]
    # causal: blocked keys are -inf in the scores and 0 in the pattern; each row sums to 1
    scores, pattern = cache[n.scores], cache[n.pattern]
    upper = np.triu(np.ones((t, t), dtype=bool), k=1)
    assert np.all(scores[:, upper] == -np.inf) and np.all(pattern[:, upper] == 0)
    np.testing.assert_allclose(pattern.sum(-1), 1.0, rtol=1e-5)
    # the residual stream adds up: resid_mid = resid_pre + attn_out, resid_post = resid_mid + mlp_out
    assert (cache[n.resid_pre] + cache[n.attn_out]).tobytes() == cache[n.resid_mid].tobytes()
    assert (cache[n.resid_mid] + cache[n.mlp_out]).tobytes() == cache[n.resid_post].tobytes()
    assert cache[n.resid_post].tobytes() == cache[block_names(8).resid_pre].tobytes()


def test_a_hook_that_returns_its_argument_changes_no_bit_on_attention_too(decoder):
    """Hooks on the scores and the pattern take the attention apart around them: the same bits."""
    for text in (CLEAN, " ".join(["word"] * 70)):  # the compiled steps, and a long prompt's NumPy ones
        ids = decoder.encode(text)
        want = decoder.forward(ids)
        same = decoder.run_with_hooks(
            ids, fwd_hooks=[(lambda name: "attn" in name, lambda a, name: a.copy())]
        )
        assert same.tobytes() == want.tobytes()


def test_a_changed_activation_flows_on_through_the_forward(decoder):
    ids = decoder.encode(CLEAN)
    layer, head = 18, 6
    n = block_names(layer)

    def zero_head(z, name):
        z = z.copy()
        z[:, head] = 0.0
        return z

    kept_out = {}
    logits, cache = decoder.run_with_cache(
        ids, fwd_hooks=[(n.z, zero_head)], names=[n.z, n.attn_out, block_names(layer + 1).resid_pre]
    )
    kept_out.update(cache)
    assert np.all(cache[n.z][:, head] == 0)
    clean_logits = decoder.forward(ids)
    assert not np.array_equal(logits, clean_logits)
    # the layers below are untouched, the ones above see the change
    _, below = decoder.run_with_cache(ids, fwd_hooks=[(n.z, zero_head)], names=[n.resid_pre])
    _, clean = decoder.run_with_cache(ids, names=[n.resid_pre, block_names(layer + 1).resid_pre])
    assert below[n.resid_pre].tobytes() == clean[n.resid_pre].tobytes()
    assert not np.array_equal(
        cache[block_names(layer + 1).resid_pre], clean[block_names(layer + 1).resid_pre]
    )


def test_hooks_by_filter_scale_and_add_and_refuse_a_typo_or_a_wrong_shape(smollm2):
    ids = smollm2.encode(CLEAN)
    seen = []
    smollm2.run_with_hooks(
        ids, fwd_hooks=[(lambda name: name.endswith("hook_pattern"), lambda a, n: seen.append(n))]
    )
    assert seen == [block_names(i).pattern for i in range(smollm2.arch.n_layer)]
    doubled = smollm2.run_with_hooks(ids, fwd_hooks=[("ln_final.hook_normalized", lambda a, n: a * 2)])
    assert not np.array_equal(doubled, smollm2.forward(ids))
    with pytest.raises(FieldError, match="did you mean"):
        smollm2.run_with_hooks(ids, fwd_hooks=[("blocks.3.attn.hook_patern", lambda a, n: None)])
    with pytest.raises(FieldError, match="must keep"):
        smollm2.run_with_hooks(ids, fwd_hooks=[("blocks.3.hook_resid_pre", lambda a, n: a[:-1])])
    with pytest.raises(FieldError, match="NaN"):
        smollm2.run_with_hooks(ids, fwd_hooks=[("blocks.3.hook_resid_pre", lambda a, n: a * np.nan)])


def test_minilms_hook_points_are_the_post_norm_encoders(minilm):
    ids = sentence_ids(minilm)
    t = len(ids)
    out, cache = minilm.run_with_cache(ids)
    assert set(cache) == set(minilm.hook_names)
    assert (
        "hook_pos_embed" in cache and "hook_token_type_embed" in cache and "embed.ln.hook_normalized" in cache
    )
    assert not any("rot_q" in name for name in cache) and "ln_final.hook_normalized" not in cache
    n = block_names(2)
    assert cache[n.q].shape == (t, 12, 32) and cache[n.pattern].shape == (12, t, t)
    # post-norm: ln1 normalises resid_mid, the block's output is ln2 of resid_post = ln1 + mlp_out
    assert (cache[n.resid_pre] + cache[n.attn_out]).tobytes() == cache[n.resid_mid].tobytes()
    assert (cache[n.ln1] + cache[n.mlp_out]).tobytes() == cache[n.resid_post].tobytes()
    assert cache[n.ln2].tobytes() == cache[block_names(3).resid_pre].tobytes()
    assert out.tobytes() == minilm.encode([SENTENCE])[0].tobytes()


def test_tokens_as_transformerlens_names_them(smollm2, minilm):
    assert smollm2.to_tokens("Hello there") == smollm2.encode("Hello there")
    assert "".join(smollm2.to_str_tokens("Hello there")) == "Hello there"
    assert minilm.to_str_tokens("Hello there") == ["[CLS]", "hello", "there", "[SEP]"]
    with one_blas_thread():
        assert list(smollm2.generate_ids(smollm2.to_tokens("Hi"), max_new_tokens=2))[:1]
