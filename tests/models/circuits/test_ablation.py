"""Zero and mean ablation of query heads: what is replaced, what it changes, and the hooked oracle."""

from __future__ import annotations

import numpy as np
import pytest
from circuitkit import CLEAN, UNIT, close, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.models.circuits import ablation, metrics
from attnlab.models.circuits.edits import SetHead
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models

HEADS = [(18, 6), (17, 4), (3, 0)]


@pytest.fixture(scope="module")
def runs(smollm2):
    """``runs(model)``: the unablated run of CLEAN, once per path."""
    made = {}

    def make(model):
        if id(model) not in made:
            made[id(model)] = run(model, model.encode(CLEAN))
        return made[id(model)]

    return make


def test_zero_ablation_sets_the_heads_z_to_zero_and_nothing_else(decoder, runs):
    before = runs(decoder)
    a = ablation.ablate(decoder, before, HEADS)
    assert a.heads == tuple(HEADS) and a.how == "zero" and a.after.start == 3
    assert a.values.shape == (3, 64) and not a.values.any()
    for layer, head in HEADS:
        assert not a.after.z[layer, :, head].any()
    assert a.after.resid[:4].tobytes() == before.resid[:4].tobytes()
    assert a.after.z[3][:, 1:].tobytes() == before.z[3][:, 1:].tobytes()  # layer 3's other heads
    assert not np.array_equal(a.after.logits, before.logits)


def test_mean_ablation_sets_each_heads_mean_over_the_text(decoder, runs):
    before = runs(decoder)
    a = ablation.ablate(decoder, before, HEADS, how="mean")
    for i, (layer, head) in enumerate(HEADS):
        mean = before.z[layer, :, head].astype(np.float64).mean(axis=0)
        np.testing.assert_allclose(a.values[i], mean, rtol=0, atol=1e-6)
        assert np.all(a.after.z[layer, :, head] == a.values[i])  # the same vector at every position


def test_ablating_no_head_changes_nothing_and_duplicates_count_once(smollm2, runs):
    before = runs(smollm2)
    assert ablation.ablate(smollm2, before, []).after.logits.tobytes() == before.logits.tobytes()
    assert ablation.ablate(smollm2, before, [(5, 1), (5, 1)]).heads == ((5, 1),)
    for heads, loc in (([(30, 0)], ("heads", 0, 0)), ([(0, 9)], ("heads", 0, 1)), ([(1,)], ("heads", 0))):
        with pytest.raises(FieldError) as error:
            ablation.ablate(smollm2, before, heads)
        assert error.value.loc == loc
    with pytest.raises(FieldError) as error:
        ablation.ablate(smollm2, before, HEADS, how="half")
    assert error.value.loc == ("how",)


def test_the_next_token_change_reads_both_runs_logits(smollm2, runs):
    a = ablation.ablate(smollm2, runs(smollm2), HEADS)
    change = ablation.next_token_change(a, top=3)
    ids = np.asarray(a.before.ids)
    pb, pa = metrics.probabilities(a.before.logits), metrics.probabilities(a.after.logits)
    np.testing.assert_array_equal(change["next_ids"], ids[1:])
    np.testing.assert_array_equal(change["p_next_before"], pb[np.arange(8), ids[1:]])
    np.testing.assert_array_equal(change["p_next_after"], pa[np.arange(8), ids[1:]])
    np.testing.assert_allclose(change["loss_after"], -np.log(change["p_next_after"]), rtol=1e-12, atol=0)
    assert change["top_ids_before"].shape == (9, 3) and change["top_ids_before"][-1, 0] == 7042  # " Paris"
    np.testing.assert_array_equal(change["top_p_after"][:, 0], pa.max(axis=-1))
    assert np.all(change["kl"] >= 0) and change["kl"].shape == (9,)


def test_an_encoders_ablation_moves_the_later_layers_only(minilm):
    a = ablation.ablate(minilm, sentence_ids(minilm), [(2, 3)])
    for layer in (0, 1):
        same = ablation.layer_change(a, layer)
        assert not same["change"].any() and np.all(same["cosine"] == pytest.approx(1.0, abs=1e-12))
    moved = ablation.layer_change(a, 5)
    assert moved["change"].min() > 0 and moved["pooled_cosine"] < 1.0
    with pytest.raises(FieldError):
        ablation.next_token_change(a)


# -- against transformers with hooks ------------------------------------------------------------


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["zero", "mean"])
def test_ablation_equals_transformers_hooks(decoder, runs, hf_decoder, how):
    ids = decoder.encode(CLEAN)
    a = ablation.ablate(decoder, runs(decoder), HEADS, how=how)
    clean = hf_decoder.run(ids)
    if how == "zero":
        values = [np.zeros(64)] * len(HEADS)
    else:  # the peer's own means over its own run's positions
        values = [clean["z"][layer, :, head].mean(axis=0) for layer, head in HEADS]
    edits = [SetHead(layer, head, v) for (layer, head), v in zip(HEADS, values, strict=True)]
    theirs = hf_decoder.run(ids, edits=edits)
    for ours, hf in ((a.before, clean), (a.after, theirs)):
        assert np.abs(metrics.probabilities(ours.logits) - metrics.probabilities(hf["logits"])).max() <= UNIT
        loss, hf_loss = metrics.position_loss(ours.logits, ids), metrics.position_loss(hf["logits"], ids)
        assert np.abs(loss - hf_loss).max() <= close(decoder.path, hf_loss)
        assert np.abs(ours.logits - hf["logits"]).max() <= close(decoder.path, hf["logits"])


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["zero", "mean"])
def test_an_encoders_ablation_equals_transformers_hooks(minilm, hf_encoder, how):
    ids = sentence_ids(minilm)
    a = ablation.ablate(minilm, ids, [(2, 3), (4, 7)], how=how)
    clean = hf_encoder.run(ids)
    if how == "zero":
        values = [np.zeros(32), np.zeros(32)]
    else:
        values = [clean["z"][2, :, 3].mean(axis=0), clean["z"][4, :, 7].mean(axis=0)]
    theirs = hf_encoder.run(ids, edits=[SetHead(2, 3, values[0]), SetHead(4, 7, values[1])])
    for layer in range(6):
        change = ablation.layer_change(a, layer)
        after, before = theirs["resid"][layer + 1], clean["resid"][layer + 1]
        hf_change = np.sqrt(((after - before) ** 2).sum(axis=-1))
        assert np.abs(change["change"] - hf_change).max() <= UNIT * max(1.0, np.abs(before).max())
        assert np.abs(change["cosine"] - metrics.cosine(before, after)).max() <= UNIT
    pooled = ablation.layer_change(a, 5)["pooled_cosine"]
    assert abs(pooled - metrics.cosine(clean["pooled"], theirs["pooled"])) <= UNIT
