"""The head view's numbers: a program for a share and for each score prints the page's number bit for bit."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.census import evidence
from attnlab.lab.realmodel.modelview import head_view, model_view
from attnlab.lab.realmodel.program import head
from attnlab.lab.realmodel.program.answer import program_answer

pytestmark = pytest.mark.models


@pytest.mark.parametrize(
    ("model", "layer", "h", "query", "key"), [("minilm", 3, 4, 9, 3), ("smollm2", 17, 4, 13, 2)]
)
def test_a_share_of_the_heatmap_is_printed_bit_for_bit(
    f32_trace, source, run_program, model, layer, h, query, key
):
    t = f32_trace(model)
    shown = head_view(t, layer, h)["weights"][query][key]  # the page's number
    answer = program_answer(
        source(t), {"kind": "weight", "layer": layer, "head": h, "query": query, "key": key}
    )
    assert answer["file_name"] == f"{model}_weight_L{layer}_H{h}_{query}_{key}.py"
    assert run_program(answer) == shown


@pytest.mark.parametrize("score", head.SCORES)
def test_every_score_of_an_encoders_head_is_printed_bit_for_bit(f32_trace, source, run_program, score):
    t = f32_trace("minilm")
    page = head_view(t, 2, 7)
    answer = program_answer(source(t), {"kind": "head_score", "layer": 2, "head": 7, "score": score})
    assert run_program(answer) == page[score]


@pytest.mark.parametrize("score", ["induction", "breadth"])
def test_a_decoders_head_scores_are_printed_bit_for_bit(f32_trace, source, run_program, score):
    t = f32_trace("smollm2")
    page = head_view(t, 25, 6)
    answer = program_answer(source(t), {"kind": "head_score", "layer": 25, "head": 6, "score": score})
    assert run_program(answer) == page[score]


def test_a_score_the_text_cannot_have_is_refused(minilm, source):
    t = minilm.trace("The cat sat on a mat.", details=True)  # no token repeats
    with pytest.raises(FieldError) as refused:
        program_answer(source(t), {"kind": "head_score", "layer": 0, "head": 0, "score": "induction"})
    assert refused.value.loc == ("score",)
    assert str(refused.value) == "score 'induction' has no value here: no token of the text repeats"


@pytest.mark.parametrize(("model", "layer", "h", "score"), [("minilm", 1, 3, "breadth"),
                                                      ("smollm2", 3, 3, "breadth"),
                                                      ("minilm", 3, 5, "induction")])  # fmt: skip
def test_a_census_score_is_printed_bit_for_bit(f32_trace, source, run_program, model, layer, h, score):
    """The model view's and the census's score: every head's weights at once. Its float64 sums group
    otherwise than one head's, and for these breadths the last bits differ from the head view's."""
    t = f32_trace(model)
    page = model_view(t)["heads"][layer * t.n_head + h][score]
    assert (head_view(t, layer, h)[score] != page) == (score == "breadth")
    answer = program_answer(source(t), {"kind": "census", "layer": layer, "head": h, "score": score})
    assert answer["file_name"] == f"{model}_census_{score}_L{layer}_H{h}.py"
    assert run_program(answer) == page


@pytest.mark.parametrize(
    ("model", "layer", "h", "score", "query"),
    [("minilm", 3, 5, "induction", 9), ("minilm", 1, 2, "breadth", 4),
     ("smollm2", 17, 4, "previous", 7), ("smollm2", 18, 6, "duplicate", None)],
)  # fmt: skip
def test_a_census_evidence_value_is_printed_bit_for_bit(
    f32_trace, source, run_program, model, layer, h, score, query
):
    """The evidence's numbers (lab/circuits/census.evidence, from the trace's head weights):
    one query's value, or (query None) the mean of the counted ones its sentence states."""
    t = f32_trace(model)
    shown = evidence(t.head_weights(layer, h), t.allowed, t.ids, list(t.tokens),
                     layer=layer, head=h, kv_head=0, score=score, model=model)  # fmt: skip
    page = shown["value"] if query is None else shown["queries"][query]["value"]
    fields = {"kind": "evidence", "layer": layer, "head": h, "score": score, "query": query}
    answer = program_answer(source(t), fields)
    tail = "mean" if query is None else f"q{query}"
    assert answer["file_name"] == f"{model}_evidence_{score}_L{layer}_H{h}_{tail}.py"
    assert run_program(answer) == page


def test_a_query_the_evidence_does_not_count_is_refused(f32_trace, source):
    src = source(f32_trace("minilm"))  # [CLS] The cat sat on the mat . The cat …: token 2 'cat' is new
    for score, query in (("induction", 2), ("previous", 0)):
        with pytest.raises(FieldError) as refused:
            program_answer(src, {"kind": "evidence", "layer": 0, "head": 0, "score": score, "query": query})
        assert (refused.value.loc, str(refused.value)) == (
            ("query",), f"query token {query} is not counted by this score, so it gives it no value"
        )
    with pytest.raises(FieldError) as refused:
        program_answer(src, {"kind": "evidence", "layer": 0, "head": 0, "score": "self"})
    assert refused.value.loc == ("score",)
