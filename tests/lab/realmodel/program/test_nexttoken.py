"""The next-token view's numbers: a token's logit and probabilities, printed bit for bit."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.nexttoken import trace_next
from attnlab.lab.realmodel.program.answer import program_answer

pytestmark = pytest.mark.models

CONTROLS = [dict(temperature=1.0, top_k=0, top_p=1.0), dict(temperature=0.7, top_k=50, top_p=0.9)]


@pytest.mark.parametrize(
    ("quantity", "controls"), [("logit", CONTROLS[0]), ("p_model", CONTROLS[0]), ("p", CONTROLS[1])]
)
def test_a_tokens_logit_and_probabilities_are_printed_bit_for_bit(
    f32_trace, source, run_program, quantity, controls
):
    t = f32_trace("smollm2")
    entry = trace_next(t, 5, top=10, **controls)["entries"][1]
    fields = {"kind": "next", "position": 5, "token": entry["id"], "quantity": quantity, **controls}
    assert run_program(program_answer(source(t), fields)) == entry[quantity]


def test_greedy_sampling_puts_everything_on_the_top_token(f32_trace, source, run_program):
    t = f32_trace("smollm2")
    entries = trace_next(t, 3, top=2, temperature=0.0, top_k=0, top_p=1.0)["entries"]
    for entry in entries:
        fields = {"kind": "next", "position": 3, "token": entry["id"], "quantity": "p", "temperature": 0.0}
        answer = program_answer(source(t), fields)
        assert "TEMPERATURE, TOP_K, TOP_P = 0.0, 0, 1.0" in answer["program"]
    assert [e["p"] for e in entries] == [1.0, 0.0]


def test_an_encoder_has_no_next_token(f32_trace, source):
    with pytest.raises(FieldError) as refused:
        program_answer(
            source(f32_trace("minilm")), {"kind": "next", "position": 1, "token": 5, "quantity": "logit"}
        )
    assert refused.value.loc == ("kind",)
    assert str(refused.value) == (
        "kind 'next' is not a number all-MiniLM-L6-v2 shows: it needs a model that predicts the next token"
    )
