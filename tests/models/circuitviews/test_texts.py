"""A text as each model reads it for circuits, and an answer's one token."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.models.circuitviews.texts import answer_id, token_texts, tokenize

pytestmark = pytest.mark.models


def test_each_model_reads_a_text_as_its_trace_does(minilm, smollm2):
    for model in (minilm, smollm2):
        ids, tokens = tokenize(model, "The cat sat.")
        trace = model.trace("The cat sat.")
        assert ids == list(trace.ids) and tokens == list(trace.tokens)
        assert token_texts(model, ids) == dict(zip(ids, tokens))


def test_a_text_over_the_cap_is_refused_at_its_field(smollm2):
    with pytest.raises(FieldError) as caught:
        tokenize(smollm2, "cat" + " cat" * 299, field="clean")
    assert caught.value.loc == ("clean",)
    assert caught.value.problem == (
        "is 300 tokens long for SmolLM2-135M-Instruct; the Real model view takes at most 256 tokens. "
        "Shorten it by 44."
    )


def test_an_answer_is_one_token(smollm2):
    assert answer_id(smollm2, " Paris", field="right") == smollm2.encode(" Paris")[0]
    with pytest.raises(FieldError) as caught:
        answer_id(smollm2, " Parisian", field="other")
    assert caught.value.loc == ("other",)
    assert caught.value.problem == (
        "is 2 tokens for SmolLM2-135M-Instruct (␣Paris + ian); give one token, such as ' Paris'"
    )
