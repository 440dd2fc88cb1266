"""A cached run: every activation consistent with the next, interventions that change nothing change
no bit, a head patch touches only that query head, and resuming equals running from the start."""

from __future__ import annotations

import numpy as np
import pytest
from circuitkit import CLEAN, SENTENCE, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.models.circuits.edits import SetHead, SetMLP, SetResid
from attnlab.models.circuits.runs import resume, run

pytestmark = pytest.mark.models


def test_a_run_keeps_each_activation_as_the_block_added_it(decoder):
    ids = decoder.encode(CLEAN)
    c = run(decoder, ids)
    L, T = 30, len(ids)
    assert (c.model, c.kind, c.path, c.start, c.edits) == ("smollm2", "decoder", decoder.path, 0, ())
    assert c.ids == tuple(ids)
    expected = {"resid": (L + 1, T, 576), "mid": (L, T, 576), "z": (L, T, 9, 64), "attn_out": (L, T, 576),
                "mlp_out": (L, T, 576), "final_rms": (T,), "logits": (T, 49152)}  # fmt: skip
    assert {name: getattr(c, name).shape for name in expected} == expected
    assert c.resid_pre.shape == c.resid_post.shape == (L, T, 576)
    # pre-norm: mid = x + attention, out = mid + feed-forward, as the block added them
    assert (c.resid[:-1] + c.attn_out).tobytes() == c.mid.tobytes()
    assert (c.mid + c.mlp_out).tobytes() == c.resid[1:].tobytes()
    # the attention output is the heads' z through W_O (the model's product: rounding apart)
    w_o = c_values(decoder.weights.blocks[4].attn.w_o)
    np.testing.assert_allclose(c.z[4].reshape(T, -1) @ w_o, c.attn_out[4], rtol=0, atol=2e-4)
    np.testing.assert_allclose(c.final_scale, 1.0 / c.final_rms.astype(np.float64), rtol=0, atol=0)
    names = ("resid", "mid", "z", "attn_out", "mlp_out", "logits")
    assert all(not getattr(c, n).flags.writeable for n in names)


def c_values(w):
    return w.values() if isinstance(w, QuantMatrix) else np.asarray(w)


def test_interventions_that_change_nothing_give_the_forwards_logits_bit_for_bit(decoder):
    ids = decoder.encode(CLEAN)
    forward = decoder.forward(ids)
    c = run(decoder, ids)
    assert c.logits.tobytes() == forward.tobytes()
    own = [SetHead(layer, h, c.z[layer, :, h]) for layer in (0, 17) for h in range(9)]
    own += [SetMLP(5, c.mlp_out[5]), SetResid(8, "mid", c.mid[8]), SetResid(3, "pre", c.resid[3], (2,)),
            SetResid(29, "post", c.resid[30])]  # fmt: skip
    again = run(decoder, ids, edits=own)
    assert again.logits.tobytes() == forward.tobytes()
    assert resume(decoder, c, 0, edits=own).logits.tobytes() == forward.tobytes()
    assert resume(decoder, c, 12).logits.tobytes() == forward.tobytes()


def test_a_head_patch_changes_only_what_that_query_head_writes(decoder):
    """GQA: query heads 3, 4, 5 share KV head 1; replacing head 4's z leaves heads 3 and 5 as they were."""
    ids = decoder.encode(CLEAN)
    c = run(decoder, ids)
    value = np.random.default_rng(0).standard_normal((len(ids), 64)).astype(np.float32)
    p = resume(decoder, c, 10, edits=[SetHead(10, 4, value)])
    assert p.start == 10 and len(p.edits) == 1
    assert p.resid[:11].tobytes() == c.resid[:11].tobytes()  # below and into layer 10: untouched
    assert p.z[10, :, 4].tobytes() == value.tobytes()
    others = [h for h in range(9) if h != 4]
    assert p.z[10][:, others].tobytes() == c.z[10][:, others].tobytes()  # its KV group's other heads too
    # what changed in the attention output is head 4's change through its rows of W_O
    w_o = c_values(decoder.weights.blocks[10].attn.w_o)[4 * 64 : 5 * 64]
    delta = (value.astype(np.float64) - c.z[10, :, 4]) @ w_o.astype(np.float64)
    np.testing.assert_allclose(p.attn_out[10] - c.attn_out[10], delta, rtol=0, atol=5e-4)
    assert not np.array_equal(p.logits, c.logits)


def test_resuming_from_a_layer_equals_running_with_the_same_edits(decoder):
    ids = decoder.encode(CLEAN)
    c = run(decoder, ids)
    edits = [SetHead(14, 2, np.zeros(64)), SetMLP(20, np.zeros(576), (3,))]
    full = run(decoder, ids, edits=edits)
    for name in ("resid", "mid", "z", "attn_out", "mlp_out", "final_rms", "logits"):
        assert getattr(resume(decoder, c, 14, edits=edits), name).tobytes() == getattr(full, name).tobytes()
    with pytest.raises(FieldError) as error:
        resume(decoder, c, 15, edits=edits)
    assert error.value.loc == ("layer",)


def test_an_encoder_run_keeps_its_post_norm_activations(minilm):
    ids = sentence_ids(minilm)
    c = run(minilm, ids)
    assert (c.kind, c.z.shape, c.logits, c.final_rms) == ("encoder", (6, len(ids), 12, 32), None, None)
    assert c.pooled.tobytes() == minilm.encode([SENTENCE])[0].tobytes()
    own = [SetHead(2, h, c.z[2, :, h]) for h in range(12)]
    own += [SetResid(4, "mid", c.mid[4]), SetMLP(5, c.mlp_out[5])]
    assert run(minilm, ids, edits=own).pooled.tobytes() == c.pooled.tobytes()
    changed = run(minilm, ids, edits=[SetHead(2, 7, np.zeros(32))])
    assert changed.resid[:3].tobytes() == c.resid[:3].tobytes()
    assert not np.array_equal(changed.pooled, c.pooled)
