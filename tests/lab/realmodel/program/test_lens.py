"""The logit lens's numbers: a token's probability and logit after a block, printed bit for bit."""

from __future__ import annotations

import pytest

from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits.lens import logit_lens
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


def test_the_answers_probability_after_a_block_is_printed_bit_for_bit(
    smollm2_f32, f32_trace, source, run_program
):
    t = f32_trace("smollm2")
    lens = logit_lens(smollm2_f32, run(smollm2_f32, list(t.ids)), 4)
    answer = program_answer(source(t), {"kind": "lens", "position": 4, "layer": 20, "quantity": "token_p"})
    assert (
        "TOKEN = int(ranked(lens[-1], 1)[0])" in answer["program"]
    )  # the model's answer, found as the lens does
    assert run_program(answer) == float(lens.token_p[20])


def test_a_top_tokens_probability_is_printed_bit_for_bit(smollm2_f32, f32_trace, source, run_program):
    t = f32_trace("smollm2")
    lens = logit_lens(smollm2_f32, run(smollm2_f32, list(t.ids)), 11)
    fields = {"kind": "lens", "position": 11, "layer": 18, "quantity": "top_p", "rank": 2}
    answer = program_answer(source(t), fields)
    assert answer["file_name"] == "smollm2_lens_top_p_11_L18_rank2.py"  # each rank its own file
    assert run_program(answer) == float(lens.top_p[18, 2])


def test_on_the_q4_1_path_the_program_agrees_up_to_its_rounding(smollm2, f32_trace, source, run_program):
    """The shared model runs on the file's Q4_1 blocks: the program (float32 path) agrees within the
    circuits oracle's 1e-5 for a probability, and says the two differ by rounding."""
    t = f32_trace("smollm2")
    assert smollm2.path == "q4_1"
    lens = logit_lens(smollm2, run(smollm2, list(t.ids)), 4)
    answer = program_answer(
        source(t, path="q4_1"), {"kind": "lens", "position": 4, "layer": 20, "quantity": "token_p"}
    )
    assert answer["says"]["claims"] == {"page_path": "q4_1", "program_path": "float32", "bit_for_bit": False}
    assert abs(run_program(answer) - float(lens.token_p[20])) <= 1e-5


@pytest.mark.parametrize("words", [8, 70])  # the query heads of a KV head together; one head at a time
def test_where_the_compiled_steps_did_not_run_the_program_takes_numpys_steps_bit_for_bit(
    smollm2_f32, source, run_program, monkeypatch, words
):
    """A model whose fast path ran NumPy's steps (no numba): its lens, printed by a program that carries
    those steps (engine/fast/decode/steps.py's, no compiled forms); 70 words take the long-prompt form."""
    import copy

    from attnlab.engine.fast.ops import Fast
    from attnlab.lab.realmodel.program import answer as a

    class NumpySteps(Fast):
        kernels = staticmethod(lambda: None)

    model = copy.copy(smollm2_f32)
    model.ops = NumpySteps()
    t = model.trace(" ".join(["one two three four"] * (words // 4)), details=True)
    position = len(t.ids) - 1
    lens = logit_lens(model, run(model, list(t.ids)), position)
    assert lens.token_p[20] != logit_lens(smollm2_f32, run(smollm2_f32, list(t.ids)), position).token_p[20]
    monkeypatch.setattr(a, "compiled_steps_ran", lambda: False)
    fields = {"kind": "lens", "position": position, "layer": 20, "quantity": "token_p"}
    answer = program_answer(source(t), fields)
    assert "OPS = Fast(None)" in answer["program"] and "def fma32(" not in answer["program"]
    assert ("\ndef _heads_shared(" in answer["program"]) == (len(t.ids) >= 64)
    assert run_program(answer) == float(lens.token_p[20])
