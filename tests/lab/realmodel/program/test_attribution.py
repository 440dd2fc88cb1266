"""Direct logit attribution's numbers: each term, their sum and the logit, printed bit for bit."""

from __future__ import annotations

import pytest

from attnlab.lab.circuits.attribution import attribution_view
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits.attribution import logit_attribution
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


@pytest.mark.parametrize(("term", "where"), [("head", {"layer": 20, "head": 4}), ("mlp", {"layer": 27}),
                                             ("total", {}), ("logit", {})])  # fmt: skip
def test_a_term_of_a_logit_is_printed_bit_for_bit(smollm2_f32, f32_trace, source, run_program, term, where):
    t = f32_trace("smollm2")
    a = logit_attribution(smollm2_f32, run(smollm2_f32, list(t.ids)), 8)
    page = {"head": a.heads[20, 4], "mlp": a.mlps[27], "total": a.total, "logit": a.logit}[term]
    fields = {"kind": "attribution", "position": 8, "token": a.token, "term": term, **where}
    answer = program_answer(source(t), fields)
    named = {"head": "_L20_H4", "mlp": "_L27"}.get(term, "")
    assert answer["file_name"] == f"smollm2_attribution_{term}_8_{a.token}{named}.py"
    assert run_program(answer) == float(page)


@pytest.mark.parametrize("term", ["heads", "mlps", "difference", "bound", "scale", "rms"])
def test_a_number_of_the_attributions_sentences_is_printed_bit_for_bit(
    smollm2_f32, f32_trace, source, run_program, term
):
    """The numbers the sentences state (lab/circuits/attribution's claims): the heads' and the MLPs' sums,
    the sum's distance from the logit and the rounding bound it stays within, the norm's scale and rms."""
    t = f32_trace("smollm2")
    a = logit_attribution(smollm2_f32, run(smollm2_f32, list(t.ids)), 8)
    view = attribution_view(a, tokens=list(t.tokens), token_text="x", path="float32")
    said = view["exact"]["claims"] | view["norm"]["claims"] | view["sums"]["claims"]
    page = said[term]
    fields = {"kind": "attribution", "position": 8, "token": a.token, "term": term}
    assert run_program(program_answer(source(t), fields)) == page


def test_on_the_q4_1_path_the_logit_agrees_within_the_q4_oracles_tolerance(
    smollm2, f32_trace, source, run_program
):
    t = f32_trace("smollm2")
    a = logit_attribution(smollm2, run(smollm2, list(t.ids)), 8)
    fields = {"kind": "attribution", "position": 8, "token": a.token, "term": "logit"}
    assert abs(run_program(program_answer(source(t, path="q4_1"), fields)) - a.logit) <= 5e-4
