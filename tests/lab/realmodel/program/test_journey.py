"""The journey's numbers: a block's norms, its norms' statistics and its strongest units, bit for bit."""

from __future__ import annotations

import pytest

from attnlab.lab.realmodel.journey import journey_view
from attnlab.lab.realmodel.program import journey
from attnlab.lab.realmodel.program.answer import program_answer

pytestmark = pytest.mark.models


def page_number(view: dict, layer: int, quantity: str, rank: int):
    block = view["blocks"][layer]
    if quantity == "mlp_unit":
        return block["mlp_top"][rank]["value"]
    name, _, stat = quantity.partition(".")
    return block[name][stat] if stat else block[name]


@pytest.mark.parametrize("quantity", journey.QUANTITIES)
def test_every_number_of_an_encoders_journey_is_printed_bit_for_bit(f32_trace, source, run_program, quantity):
    t = f32_trace("minilm")
    page = page_number(journey_view(t, 6), 4, quantity, 2)
    fields = {"kind": "journey", "index": 6, "layer": 4, "quantity": quantity, "rank": 2}
    assert run_program(program_answer(source(t), fields)) == page


@pytest.mark.parametrize(("quantity", "rank"), [("norm_1.rms", 0), ("mlp_unit", 4)])
def test_a_decoders_journey_is_printed_bit_for_bit(f32_trace, source, run_program, quantity, rank):
    t = f32_trace("smollm2")
    page = page_number(journey_view(t, 9), 28, quantity, rank)
    fields = {"kind": "journey", "index": 9, "layer": 28, "quantity": quantity, "rank": rank}
    assert run_program(program_answer(source(t), fields)) == page
