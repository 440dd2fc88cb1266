"""Activation patching: the invariants exactly, sweeps with progress and cancel, and the hooked oracle."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from circuitkit import CLEAN, CORRUPT, OTHER_SENTENCE, SENTENCE, UNIT, close, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.models.circuits import patching
from attnlab.models.circuits.edits import SetResid

pytestmark = pytest.mark.models

TOWN = "The Eiffel Tower is in the town of"  # agrees with CLEAN on its first 7 tokens


@pytest.fixture(scope="module")
def town(smollm2, smollm2_f32):
    """``town(model)``: CLEAN against TOWN (answers " Paris", " Rome"), one pair per path."""
    made = {}

    def make(model):
        if id(model) not in made:
            ids = model.encode(CLEAN), model.encode(TOWN)
            made[id(model)] = patching.pair(model, *ids, answers=(7042, 7268))
        return made[id(model)]

    return make


def test_the_pairs_metric_is_the_logit_difference_of_the_runs_own_logits(decoder, eiffel):
    p = eiffel(decoder)
    assert (p.metric, p.answers, p.position) == ("logit_difference", (7042, 7268), 8)  # " Paris", " Rome"
    for c, value, row in ((p.clean, p.clean_value, 0), (p.corrupt, p.corrupt_value, 1)):
        mine = p.answer_logits[row]
        if decoder.path == "q4_1":  # the forward's own bits
            assert mine.tolist() == c.logits[-1, [7042, 7268]].astype(np.float64).tolist()
        np.testing.assert_allclose(mine, c.logits[-1, [7042, 7268]], rtol=0, atol=2e-5)
        assert value == mine[0] - mine[1]
    assert p.clean_value > 0 > p.corrupt_value  # Paris over Rome on the clean prompt, Rome on the corrupted


@pytest.mark.parametrize("site", ["pre", "mid", "post"])
def test_patching_where_the_prompts_agree_recovers_exactly_nothing(decoder, town, site):
    p = town(decoder)
    first = next(i for i, (a, b) in enumerate(zip(p.clean.ids, p.corrupt.ids, strict=True)) if a != b)
    assert first == 7
    sweep = patching.residual_sweep(decoder, p, site=site, layers=(0, 14, 29))
    assert sweep.values.shape == (3, 9) and sweep.layers == (0, 14, 29) and sweep.columns == tuple(range(9))
    assert np.all(sweep.values[:, :first] == p.corrupt_value)
    assert np.all(sweep.recovered[:, :first] == 0.0)
    assert sweep.skipped[:, :first].all() and not sweep.skipped[1:, first:].any()
    assert sweep.skipped[0, 8] == (site == "pre")  # " of" again: the same embedding after the change
    for layer, position in ((0, 0), (14, 6), (29, 3)):  # recomputed, not skipped: the same bits
        edit = patching.residual_patch(p, layer, position, site)
        assert patching.patch_value(decoder, p, [edit]) == p.corrupt_value


def test_the_residual_leaving_the_last_block_at_the_last_token_recovers_exactly_everything(decoder, eiffel):
    p = eiffel(decoder)
    sweep = patching.residual_sweep(decoder, p, site="post", layers=(29,))
    assert sweep.recovered[0, -1] == 1.0 and sweep.values[0, -1] == p.clean_value
    assert patching.patch_value(decoder, p, [patching.residual_patch(p, 29, 8, "post")]) == p.clean_value


def test_a_sweeps_cells_are_the_single_patches(smollm2, eiffel):
    p = eiffel(smollm2)
    heads = patching.head_sweep(smollm2, p, layers=(17, 29), heads=(4, 6))
    assert heads.values.shape == (2, 2) and heads.columns == (4, 6) and heads.kind == "heads"
    for i, layer in enumerate((17, 29)):
        for j, head in enumerate((4, 6)):
            edit = patching.head_patch(p, layer, head)
            assert heads.values[i, j] == patching.patch_value(smollm2, p, [edit])
    gap = p.clean_value - p.corrupt_value
    np.testing.assert_array_equal(heads.recovered, (heads.values - p.corrupt_value) / gap)
    mlp = patching.mlp_sweep(smollm2, p, layers=(0, 1))
    assert mlp.values.shape == (2, 1) and mlp.columns == (None,)
    assert mlp.values[1, 0] == patching.patch_value(smollm2, p, [patching.mlp_patch(p, 1)])
    each = patching.mlp_sweep(smollm2, p, layers=(3,), per_position=True)
    assert each.values.shape == (1, 9)
    assert each.values[0, 0] == p.corrupt_value and each.skipped[0, 0]  # the shared first token
    assert each.values[0, 4] == patching.patch_value(smollm2, p, [patching.mlp_patch(p, 3, [4])])
    full = patching.patched_run(smollm2, p, [patching.head_patch(p, 17, 4)])
    assert full.start == 17 and full.resid[:18].tobytes() == p.corrupt.resid[:18].tobytes()
    # q4_1: the output layer's own bits
    assert float(full.logits[-1, 7042]) - float(full.logits[-1, 7268]) == heads.values[0, 0]


def test_a_sweep_reports_progress_and_stops_when_cancelled(smollm2, eiffel):
    p = eiffel(smollm2)
    seen = []
    sweep = patching.head_sweep(smollm2, p, layers=(28, 29), progress=lambda *step: seen.append(step))
    assert seen == [(n, 18) for n in range(1, 19)] and sweep.done == 18

    stop = threading.Event()

    def progress(done, total):
        if done == 5:
            stop.set()

    with pytest.raises(patching.Cancelled) as cancelled:
        patching.residual_sweep(smollm2, p, layers=(27, 28, 29), progress=progress, cancel=stop)
    partial = cancelled.value.sweep
    assert partial.done == 5 and np.isfinite(partial.values).sum() == 5 and np.isnan(partial.values[1:]).all()
    with pytest.raises(patching.Cancelled) as cancelled:
        patching.mlp_sweep(smollm2, p, cancel=lambda: True)
    assert cancelled.value.sweep.done == 0


def test_pairs_of_different_lengths_or_one_answer_are_refused(smollm2):
    clean = smollm2.encode(CLEAN)
    with pytest.raises(FieldError) as error:
        patching.pair(smollm2, clean, clean[:-1], answers=(7042, 7268))
    assert error.value.loc == ("corrupt",)
    bad = (((7042, 7042), ("answers",)), ((7042,), ("answers",)), ((7042, 10**6), ("answers", 1)))
    for answers, loc in bad:
        with pytest.raises(FieldError) as error:
            patching.pair(smollm2, clean, clean, answers=answers)
        assert error.value.loc == loc
    with pytest.raises(FieldError) as error:
        patching.residual_sweep(smollm2, patching.pair(smollm2, clean, clean, answers=(1, 2)), site="middle")
    assert error.value.loc == ("site",)


def test_an_encoder_pair_measures_the_cosine_with_the_clean_embedding(minilm):
    p = patching.pair(minilm, sentence_ids(minilm), sentence_ids(minilm, OTHER_SENTENCE))
    assert (p.metric, p.answers, p.position) == ("cosine", None, None)
    assert p.clean_value == pytest.approx(1.0, abs=1e-6) and p.corrupt_value < 0.9
    whole = SetResid(5, "post", p.clean.resid[6])  # every position of the last block's output
    assert patching.patch_value(minilm, p, [whole]) == p.clean_value
    sweep = patching.head_sweep(minilm, p, layers=(0, 5))
    assert sweep.values.shape == (2, 12) and np.isfinite(sweep.recovered).all()


# -- against transformers with hooks ------------------------------------------------------------


def _hf_ld(hf_decoder, ids, edits=()):
    logits = hf_decoder.run(ids, edits=edits, keep=False, logits_to_keep=1)["logits"][-1]
    return logits[7042] - logits[7268]


@pytest.mark.oracle
def test_residual_head_and_mlp_patches_equal_transformers_hooks(decoder, eiffel, hf_decoder):
    p = eiffel(decoder)
    clean, corrupt = decoder.encode(CLEAN), decoder.encode(CORRUPT)
    theirs_clean, theirs_corrupt = _hf_ld(hf_decoder, clean), _hf_ld(hf_decoder, corrupt)
    tol = close(decoder.path, [theirs_clean, theirs_corrupt])
    assert abs(p.clean_value - theirs_clean) <= tol and abs(p.corrupt_value - theirs_corrupt) <= tol
    gap = theirs_clean - theirs_corrupt
    patches = [
        patching.residual_patch(p, 0, 1), patching.residual_patch(p, 12, 3),
        patching.residual_patch(p, 20, 2, "post"), patching.residual_patch(p, 29, 8, "post"),
        patching.head_patch(p, 0, 0), patching.head_patch(p, 17, 4), patching.head_patch(p, 18, 6, [8]),
        patching.mlp_patch(p, 0), patching.mlp_patch(p, 2, [2]),
    ]  # fmt: skip
    for edit in patches:
        ours = patching.patch_value(decoder, p, [edit])
        theirs = _hf_ld(hf_decoder, corrupt, [edit])  # the same clean values, through transformers' hooks
        assert abs(ours - theirs) <= tol, edit
        fraction_tol = UNIT if decoder.path == "float32" else tol / abs(gap)
        assert abs(p.recovered(ours) - (theirs - theirs_corrupt) / gap) <= fraction_tol, edit


@pytest.mark.oracle
def test_encoder_patches_equal_transformers_hooks(minilm, hf_encoder):
    a, b = sentence_ids(minilm, SENTENCE), sentence_ids(minilm, OTHER_SENTENCE)
    p = patching.pair(minilm, a, b)
    clean = hf_encoder.run(a, keep=False)["pooled"]

    def theirs(edits=()):
        pooled = hf_encoder.run(b, edits=edits, keep=False)["pooled"]
        return pooled @ clean / np.linalg.norm(pooled) / np.linalg.norm(clean)

    assert abs(p.corrupt_value - theirs()) <= UNIT
    for edit in (patching.residual_patch(p, 1, 2), patching.residual_patch(p, 3, 2, "mid"),
                 patching.residual_patch(p, 5, 5, "post"), patching.head_patch(p, 3, 5),
                 patching.mlp_patch(p, 4, [2]), patching.mlp_patch(p, 0)):  # fmt: skip
        assert abs(patching.patch_value(minilm, p, [edit]) - theirs([edit])) <= UNIT, edit


# -- attention pattern, keys and values ----------------------------------------------------------------


def test_patching_a_runs_own_pattern_keys_or_values_changes_nothing(decoder, eiffel):
    from attnlab.models.circuits.edits import SetKV, SetPattern

    p = eiffel(decoder)
    own = patching.attention_of(decoder, p.corrupt, 12)
    for edit in (SetPattern(12, 5, own["pattern"][5]), SetKV(12, 1, "k", own["k"][:, 1]),
                 SetKV(12, 2, "v", own["v"][:, 2])):  # fmt: skip
        assert patching.patch_value(decoder, p, [edit]) == p.corrupt_value


def test_pattern_and_kv_sweeps_cover_query_heads_and_kv_heads(decoder, eiffel):
    p = eiffel(decoder)
    seen = []
    sweep = patching.pattern_sweep(decoder, p, layers=(0, 20), progress=lambda done, total: seen.append(done))
    assert sweep.kind == "pattern" and sweep.values.shape == (2, 9) and seen == list(range(1, 19))
    keys = patching.kv_sweep(decoder, p, "k", layers=(3, 20))
    values = patching.kv_sweep(decoder, p, "v", layers=(3, 20))
    assert (keys.kind, values.kind) == ("keys", "values")
    assert keys.values.shape == values.values.shape == (2, 3)
    for sweep in (keys, values):
        assert np.isfinite(sweep.values).all() and sweep.columns == (0, 1, 2)
    # each cell is the metric with that one patch made, computed alone
    one = patching.patch_value(decoder, p, [patching.kv_patch(decoder, p, 20, 1, "v")])
    assert one == values.values[1, 1]
    one = patching.patch_value(decoder, p, [patching.pattern_patch(decoder, p, 20, 4)])
    assert one == sweep_value(patching.pattern_sweep(decoder, p, layers=(20,), heads=(4,)))
    with pytest.raises(FieldError) as err:
        patching.kv_sweep(decoder, p, "q")
    assert err.value.loc == ("which",)


def sweep_value(sweep) -> float:
    assert sweep.values.shape == (1, 1)
    return float(sweep.values[0, 0])


def test_a_kv_patch_reaches_every_query_head_of_its_group_and_no_other(smollm2, eiffel):
    """The GQA pitfall: a KV head is shared, so patching it changes its whole group's outputs."""
    from attnlab.models.circuits.edits import SetKV

    p = eiffel(smollm2)
    clean = patching.attention_of(smollm2, p.clean, 16)
    run = patching.patched_run(smollm2, p, [SetKV(16, 1, "v", clean["v"][:, 1])])
    changed = [h for h in range(9) if not np.array_equal(run.z[16, :, h], p.corrupt.z[16, :, h])]
    assert changed == [3, 4, 5]  # query heads 3, 4, 5 read KV head 1


def test_pattern_and_value_patches_match_the_hooked_peer(smollm2_f32, eiffel, hf_decoder):
    """The patched metric against transformers with the same head's pattern or KV head's values replaced
    (an attention function of its own for the pattern; a hook on v_proj for the values)."""
    import torch

    p = eiffel(smollm2_f32)
    clean = patching.attention_of(smollm2_f32, p.clean, 15)
    ours = patching.patch_value(smollm2_f32, p, [patching.kv_patch(smollm2_f32, p, 15, 1, "v")])
    model = hf_decoder.model
    d = 64

    def v_hook(module, args, output):
        out = output.clone()
        out[0, :, d : 2 * d] = torch.as_tensor(np.array(clean["v"][:, 1]))
        return out

    handle = model.model.layers[15].self_attn.v_proj.register_forward_hook(v_hook)
    try:
        with torch.no_grad():
            out = model(torch.tensor([list(p.corrupt.ids)]), logits_to_keep=1)
        logits = out.logits[0, -1].double().numpy()
    finally:
        handle.remove()
    theirs = logits[7042] - logits[7268]
    assert abs(ours - theirs) <= close("float32", [theirs])
