"""What a head reads and writes: its QK products and the logits its value promotes, printed bit for bit."""

from __future__ import annotations

import pytest

from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits.heads import head_reads, head_writes
from attnlab.models.circuits.runs import run

pytestmark = pytest.mark.models


@pytest.mark.parametrize("quantity", ["after", "weight"])
def test_a_decoders_qk_products_are_printed_bit_for_bit(
    smollm2_f32, f32_trace, source, run_program, quantity
):
    t = f32_trace("smollm2")
    reads = head_reads(smollm2_f32, run(smollm2_f32, list(t.ids)), 9, 4)
    page = {"after": reads.dots_after, "weight": reads.weights}[quantity][6, 2]
    fields = {"kind": "head_qk", "layer": 9, "head": 4, "query": 6, "key": 2, "quantity": quantity}
    assert run_program(program_answer(source(t), fields)) == float(page)


def test_an_encoders_qk_product_is_printed_bit_for_bit(minilm, f32_trace, source, run_program):
    t = f32_trace("minilm")
    reads = head_reads(minilm, run(minilm, list(t.ids)), 3, 7)
    fields = {"kind": "head_qk", "layer": 3, "head": 7, "query": 2, "key": 5, "quantity": "before"}
    assert run_program(program_answer(source(t), fields)) == float(reads.dots_before[2, 5])


@pytest.mark.parametrize(
    ("quantity", "where"), [("promoted", {"source": 1, "rank": 2}), ("written", {"rank": 0})]
)
def test_the_logits_a_heads_output_promotes_are_printed_bit_for_bit(smollm2_f32, f32_trace, source,
                                                                    run_program,
                                                                    quantity, where):  # fmt: skip
    t = f32_trace("smollm2")
    writes = head_writes(smollm2_f32, run(smollm2_f32, list(t.ids)), 15, 7, 6)
    page = writes.promoted_logits[1, 2] if quantity == "promoted" else writes.written_logits[0]
    fields = {"kind": "head_ov", "layer": 15, "head": 7, "position": 6, "quantity": quantity, **where}
    assert run_program(program_answer(source(t), fields)) == float(page)
