"""A text as each model reads it for circuits, and an answer's one token; refusals typed and worded."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.models.circuits.texts import answer_id, is_encoder, token_texts, tokenize
from attnlab.models.errors import Refusal, TooManyTokens

pytestmark = pytest.mark.models


def test_each_model_reads_a_text_as_its_trace_does(minilm, smollm2):
    for model in (minilm, smollm2):
        ids, tokens = tokenize(model, "The cat sat.")
        trace = model.trace("The cat sat.")
        assert ids == list(trace.ids) and tokens == list(trace.tokens)
        assert token_texts(model, ids) == dict(zip(ids, tokens))
    assert is_encoder(minilm) and not is_encoder(smollm2)


def test_a_text_over_the_cap_is_refused_at_its_field(smollm2):
    with pytest.raises(FieldError) as caught:
        tokenize(smollm2, "cat" + " cat" * 299, field="clean")
    assert isinstance(caught.value, TooManyTokens)
    assert (caught.value.n_tokens, caught.value.cap) == (300, 256)  # the facts, for a program
    assert caught.value.loc == ("clean",)
    assert caught.value.problem == (
        "is 300 tokens long for SmolLM2-135M-Instruct; the Real model view takes at most 256 tokens. "
        "Shorten it by 44."
    )


def test_an_answer_is_one_token(smollm2):
    assert answer_id(smollm2, " Paris", field="right") == smollm2.encode(" Paris")[0]
    with pytest.raises(FieldError) as caught:
        answer_id(smollm2, " Parisian", field="other")
    assert isinstance(caught.value, Refusal) and caught.value.kind == "circuits.not_one_token"
    assert caught.value.loc == ("other",)
    assert caught.value.problem == (
        "is 2 tokens for SmolLM2-135M-Instruct (␣Paris + ian); give one token, such as ' Paris'"
    )
