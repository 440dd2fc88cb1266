"""The logit lens's numbers: a token's probability and logit after a block, printed bit for bit."""

from __future__ import annotations

import pytest

from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


def test_the_answers_probability_after_a_block_is_printed_bit_for_bit(smollm2_f32, f32_trace, source, run_program):
    t = f32_trace("smollm2")
    lens = logit_lens(smollm2_f32, run(smollm2_f32, list(t.ids)), 4)
    answer = program_answer(source(t), {"kind": "lens", "position": 4, "layer": 20, "quantity": "token_p"})
    assert "TOKEN = int(ranked(lens[-1], 1)[0])" in answer["program"]  # the model's answer, found as the lens does
    assert run_program(answer) == float(lens.token_p[20])


def test_a_top_tokens_probability_is_printed_bit_for_bit(smollm2_f32, f32_trace, source, run_program):
    t = f32_trace("smollm2")
    lens = logit_lens(smollm2_f32, run(smollm2_f32, list(t.ids)), 11)
    fields = {"kind": "lens", "position": 11, "layer": 18, "quantity": "top_p", "rank": 2}
    assert run_program(program_answer(source(t), fields)) == float(lens.top_p[18, 2])
