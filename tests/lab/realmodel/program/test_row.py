"""The row and neuron views' numbers: a program for each prints the page's number bit for bit."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.neuron import neuron_view
from attnlab.lab.realmodel.program import row
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.lab.realmodel.query import query_row
from attnlab.lab.realmodel.row import row_view

pytestmark = pytest.mark.models


def page_numbers(t, layer, head, query, key, coordinate) -> dict:
    """Each quantity as the neuron view (and, for score and share, the row view) serves it."""
    n = neuron_view(t, layer, head, query, key)
    r = row_view(query_row(t, layer, head, query), query, t.tokens)["sources"][key]
    assert (r["score"], r["share"]) == (n["score"], n["row"]["key_share"])  # the two views agree
    return {"q": n["q"][coordinate], "k": n["k"][coordinate], "product": n["products"][coordinate],
            "running": n["running"][coordinate], "dot": n["dot"], "score": r["score"],
            "exp": n["row"]["exps"][key],
            "share": r["share"], "m": n["row"]["m"], "z": n["row"]["z"]}  # fmt: skip


@pytest.mark.parametrize("quantity", row.QUANTITIES)
def test_every_number_of_an_encoders_row_is_printed_bit_for_bit(f32_trace, source, run_program, quantity):
    t = f32_trace("minilm")
    page = page_numbers(t, 4, 7, 10, 4, 5)
    fields = {
        "kind": "row",
        "layer": 4,
        "head": 7,
        "query": 10,
        "key": 4,
        "coordinate": 5,
        "quantity": quantity,
    }
    assert run_program(program_answer(source(t), fields)) == page[quantity]


@pytest.mark.parametrize("quantity", ["running", "share"])
def test_a_decoders_row_after_rope_is_printed_bit_for_bit(f32_trace, source, run_program, quantity):
    t = f32_trace("smollm2")
    page = page_numbers(t, 21, 8, 12, 5, 37)
    fields = {
        "kind": "row",
        "layer": 21,
        "head": 8,
        "query": 12,
        "key": 5,
        "coordinate": 37,
        "quantity": quantity,
    }
    assert run_program(program_answer(source(t), fields)) == page[quantity]


def test_a_row_needs_the_fields_of_its_quantity(f32_trace, source):
    t = f32_trace("minilm")
    with pytest.raises(FieldError) as refused:
        program_answer(source(t), {"kind": "row", "layer": 0, "head": 0, "query": 1, "quantity": "share"})
    assert (refused.value.loc, str(refused.value)) == (("key",), "key is needed for a number of kind row")
    with pytest.raises(FieldError) as refused:
        program_answer(source(t), {"kind": "row", "layer": 0, "head": 0, "query": 1, "quantity": "q",
                                   "coordinate": 32})  # fmt: skip
    assert str(refused.value) == "coordinate 32 does not exist; minilm has coordinates 0..31"
