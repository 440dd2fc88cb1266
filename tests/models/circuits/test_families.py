"""The circuits' numbers layer (models/circuits, models/census) on models other than SmolLM2 and MiniLM.

Tiny Qwen2 (RMSNorm, q/k/v biases, GQA) and tiny GPT-2 (LayerNorm with biases, learned positions)
from tests/familykit.py, opened from their folders as any found model is. Each view keeps its
stated invariants on them: a run's logits are the model's own, the lens's last block is the model's
logits, a residual patch before the first differing token recovers exactly 0 and one after the last
block at the last position exactly 1, ablating a head changes the text's losses, the census scores
every head. Direct logit attribution's sum is exact for RMSNorm without bias (Qwen2); for GPT-2's
LayerNorm it is not (docs/engine-conventions.md: the components must be centred and the norm's
bias counted, which ``attribution.py`` does not do yet): that test is a strict xfail, failing
loudly once it is fixed.
"""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.models.census import score_text
from attnlab.models.circuits import patching
from attnlab.models.circuits.ablation import ablate, next_token_change
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.runs import run
from attnlab.models.families.checkpoint import open_path

TEXT = "The cat sat on the mat. The cat"
CLEAN, CORRUPT = "The fox jumps over the fox. The", "The dog jumps over the dog. The"


@pytest.fixture(scope="module", params=[("qwen2", "float32"), ("qwen2", "float64"), ("gpt2", "float32"),
                                        ("gpt2", "float64")], ids=lambda p: "-".join(p))  # fmt: skip
def tiny(request, families):
    name, weights = request.param
    return open_path(families.folder(name), weights=weights)


def test_a_run_keeps_the_models_own_logits_and_the_lens_ends_on_them(tiny):
    ids = tiny.to_tokens(TEXT)
    c = run(tiny, ids)
    assert np.array_equal(c.logits, tiny.logits(ids)) and c.n_layer == tiny.arch.n_layer
    lens = logit_lens(tiny, c)
    tol = 1e-5 if tiny.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(lens.logits[-1], c.logits[-1], rtol=0, atol=tol * np.abs(c.logits).max())
    assert lens.answer == int(np.argmax(c.logits[-1]))


def test_residual_patching_recovers_0_before_the_first_difference_and_1_after_the_last_block(tiny):
    clean, corrupt = tiny.to_tokens(CLEAN), tiny.to_tokens(CORRUPT)
    assert len(clean) == len(corrupt)
    first = next(i for i, (a, b) in enumerate(zip(clean, corrupt)) if a != b)
    answers = (tiny.to_tokens(" fox")[-1], tiny.to_tokens(" dog")[-1])
    p = patching.pair(tiny, clean, corrupt, answers=answers)
    assert p.clean_value != p.corrupt_value
    post = patching.residual_sweep(tiny, p, site="post")
    assert post.recovered[-1, -1] == 1.0 and not post.recovered[:, :first].any()
    heads = patching.head_sweep(tiny, p)
    assert heads.recovered.shape == (tiny.arch.n_layer, tiny.arch.n_head)
    assert np.isfinite(heads.recovered).all()


def test_ablating_a_head_changes_the_texts_losses_and_the_census_scores_every_head(tiny):
    ids = tiny.to_tokens(TEXT)
    change = next_token_change(ablate(tiny, ids, [(1, 0)]))
    before, after = change["loss_before"], change["loss_after"]
    assert before.shape == after.shape == (len(ids) - 1,) and not np.array_equal(before, after)
    scores = score_text(tiny, tiny.name, TEXT)["scores"]
    shape = (tiny.arch.n_layer, tiny.arch.n_head)
    assert all(s.shape == shape and np.isfinite(s).all() for s in scores.values() if s is not None)


@pytest.mark.parametrize("name", ["qwen2", pytest.param("gpt2", marks=pytest.mark.xfail(
    strict=True, reason="logit attribution does not centre the components nor count the final LayerNorm's "
    "bias (GPT-2): its terms miss the logit"))])  # fmt: skip
def test_logit_attribution_adds_up_to_the_logit(families, name):
    model = open_path(families.folder(name), weights="float64")
    a = logit_attribution(model, run(model, model.to_tokens(TEXT)))
    assert abs(a.total - a.logit) <= a.bound < 1e-9
