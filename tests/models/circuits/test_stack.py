"""The pieces of a forward pass give the model's own numbers, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from circuitkit import CLEAN, SENTENCE, sentence_ids

from attnlab.engine.errors import FieldError
from attnlab.engine.threads import one_blas_thread
from attnlab.models.circuits.stack import stack_of

pytestmark = pytest.mark.models


def _through_pieces(stack, ids):
    with one_blas_thread():
        x = stack.embed(ids)
        for layer in range(stack.n_layer):
            x, _ = stack.block(layer, x, None)
        return x


def test_decoder_pieces_give_the_forwards_logits_bit_for_bit(decoder):
    stack = stack_of(decoder)
    assert stack.kind == "decoder" and stack.path == decoder.path
    ids = decoder.encode(CLEAN)
    results: list = []
    logits = decoder.forward(ids, results=results)
    x = _through_pieces(stack, ids)
    assert x.tobytes() == results[-1].output.tobytes()
    with one_blas_thread():
        assert stack.logits(x).tobytes() == logits.tobytes()


def test_answer_logits_are_the_forwards(decoder):
    """On the q4_1 path the same bits (one row or several); on float weights, float32 rounding."""
    stack = stack_of(decoder)
    ids = decoder.encode(CLEAN)
    logits = decoder.forward(ids)
    x = _through_pieces(stack, ids)
    tokens = (7042, 7268)
    with one_blas_thread():
        several, one = stack.answer_logits(x, tokens), stack.answer_logits(x[-1:], tokens)
    if decoder.path == "q4_1":
        assert several.tobytes() == logits[:, tokens].tobytes()
        assert one.tobytes() == logits[-1:, tokens].tobytes()
    else:
        np.testing.assert_allclose(several, logits[:, tokens], rtol=0, atol=2e-5)
        np.testing.assert_allclose(one, logits[-1:, tokens], rtol=0, atol=2e-5)


def test_the_final_rms_is_the_divisor_the_norm_used(decoder):
    from attnlab.engine.layers import rms_norm

    stack = stack_of(decoder)
    x = _through_pieces(stack, decoder.encode(CLEAN))
    rms = stack.final_rms(x)
    assert rms.shape == (x.shape[0],) and rms.dtype == np.float32
    assert ((x / rms[:, None]) * stack.final_norm.weight).tobytes() == rms_norm(x, stack.final_norm).tobytes()


def test_encoder_pieces_give_minilms_hidden_states_and_embedding_bit_for_bit(minilm):
    stack = stack_of(minilm)
    assert (stack.kind, stack.path, stack.n_head, stack.d_head) == ("encoder", "float32", 12, 32)
    ids = sentence_ids(minilm)
    hidden, _ = minilm.hidden(minilm.tokenize([SENTENCE]))
    x = _through_pieces(stack, ids)
    assert x.tobytes() == hidden[0].tobytes()
    assert stack.pooled(x).tobytes() == minilm.encode([SENTENCE])[0].tobytes()


def test_bad_ids_are_refused_at_their_field(smollm2, minilm):
    for model in (smollm2, minilm):
        stack = stack_of(model)
        bad = (([], ("ids",)), ([1, -1], ("ids", 1)), ([1, 10**6], ("ids", 1)), ([1, 2.0], ("ids", 1)))
        for ids, loc in bad:
            with pytest.raises(FieldError) as error:
                stack.check_ids(ids)
            assert error.value.loc == loc
    with pytest.raises(FieldError):
        stack_of(object())
