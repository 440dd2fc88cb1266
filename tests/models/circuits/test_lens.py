"""The logit lens: the last block's row is the model's output, the named layers follow the ranks,
and each layer's distribution equals transformers' final norm and unembedding on its hidden state."""

from __future__ import annotations

import numpy as np
import pytest
from circuitkit import CLEAN, UNIT, close, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.models.circuits import metrics
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


def test_the_last_blocks_lens_is_the_models_output(decoder):
    c = run(decoder, decoder.encode(CLEAN))
    lens = logit_lens(decoder, c)
    assert lens.position == 8 and lens.logits.shape == (30, 49152) and lens.top_ids.shape == (30, 5)
    if decoder.path == "q4_1":  # the output layer's own sums: the same bits
        assert lens.logits[-1].tobytes() == c.logits[-1].tobytes()
    np.testing.assert_allclose(lens.logits[-1], c.logits[-1], rtol=0, atol=2e-5)
    assert lens.answer == lens.token == 7042  # " Paris"
    ranks = lens.token_rank
    assert lens.first_top1 == int(np.flatnonzero(ranks == 0)[0])
    assert lens.settled is not None and np.all(ranks[lens.settled :] == 0) and ranks[lens.settled - 1] > 0
    assert np.all(lens.top_ids[ranks == 0, 0] == 7042)
    np.testing.assert_array_equal(lens.token_p, metrics.probabilities(lens.logits)[:, 7042])
    np.testing.assert_array_equal(lens.top_p[:, 0], metrics.probabilities(lens.logits).max(axis=-1))


def test_any_position_and_token_and_the_refusals(smollm2, minilm):
    c = run(smollm2, smollm2.encode(CLEAN))
    lens = logit_lens(smollm2, c, position=2, token=7268, top=3)
    assert (lens.position, lens.token, lens.top_ids.shape) == (2, 7268, (30, 3))
    assert lens.answer == int(metrics.ranked(c.logits[2], 1)[0])
    with pytest.raises(FieldError) as error:
        logit_lens(smollm2, c, position=9)
    assert error.value.loc == ("position",)
    with pytest.raises(FieldError) as error:
        logit_lens(minilm, run(minilm, sentence_ids(minilm)))
    assert error.value.loc == ("model",)


@pytest.mark.oracle
def test_the_lens_equals_transformers_final_norm_and_unembedding(decoder, hf_decoder):
    import torch

    ids = decoder.encode(CLEAN)
    lens = logit_lens(decoder, run(decoder, ids))
    hidden = torch.as_tensor(hf_decoder.run(ids)["resid"][1:, -1], dtype=torch.float32)  # (30, 576)
    with torch.no_grad():
        model = hf_decoder.model
        theirs = model.lm_head(model.model.norm(hidden)).to(torch.float64).numpy()
    assert np.abs(lens.logits - theirs).max() <= close(decoder.path, theirs)
    assert np.abs(metrics.probabilities(lens.logits) - metrics.probabilities(theirs)).max() <= UNIT
    np.testing.assert_array_equal(lens.top_ids[:, 0], theirs.argmax(axis=-1))
    first = int(np.flatnonzero(theirs.argmax(axis=-1) == theirs[-1].argmax())[0])
    assert lens.first_top1 == first
