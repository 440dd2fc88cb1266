"""Ablation's numbers: a program switches the heads off as the circuits' run does and prints its number."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.ablation import layer_view, mean_loss
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits.ablation import ablate, layer_change, next_token_change

pytestmark = pytest.mark.models

HEADS = [(2, 3), (4, 1), (2, 5)]


CASES = [("zero", "p_next_after", None), ("mean", "loss_after", None), ("mean", "top_p_after", 1),
         ("zero", "kl", None)]  # fmt: skip


@pytest.mark.parametrize(("how", "quantity", "at"), CASES)
def test_a_decoders_ablation_is_printed_bit_for_bit(
    smollm2_f32, f32_trace, source, run_program, how, quantity, at
):
    t = f32_trace("smollm2")
    change = next_token_change(ablate(smollm2_f32, list(t.ids), HEADS, how=how))
    page = change[quantity][5] if at is None else change[quantity][5, at]
    fields = {
        "kind": "ablation",
        "heads": "2.3,4.1,2.5",
        "how": how,
        "quantity": quantity,
        "position": 5,
        "rank": at,
    }
    assert run_program(program_answer(source(t), fields)) == float(page)


@pytest.mark.parametrize("quantity", ["mean_loss_before", "mean_loss_after", "mean_loss_change"])
def test_a_decoders_mean_loss_is_printed_bit_for_bit(smollm2_f32, f32_trace, source, run_program, quantity):
    """The mean loss the ablation's sentence states (lab/circuits/ablation.mean_loss's claims)."""
    t = f32_trace("smollm2")
    change = next_token_change(ablate(smollm2_f32, list(t.ids), HEADS, how="zero"))
    said = mean_loss(change["loss_before"], change["loss_after"])["claims"]
    page = {"mean_loss_before": said["before"], "mean_loss_after": said["after"],
            "mean_loss_change": said["after"] - said["before"]}[quantity]  # fmt: skip
    fields = {"kind": "ablation", "heads": "2.3,4.1,2.5", "how": "zero", "quantity": quantity}
    answer = program_answer(source(t), fields)
    assert answer["file_name"] == f"smollm2_ablation_{quantity}.py"
    assert run_program(answer) == page


@pytest.mark.parametrize("quantity", ["change", "relative", "cosine", "pooled_cosine"])
def test_an_encoders_ablation_is_printed_bit_for_bit(minilm, f32_trace, source, run_program, quantity):
    t = f32_trace("minilm")
    moved = layer_change(ablate(minilm, list(t.ids), HEADS, how="mean"), 4)
    relative = layer_view(moved, heads=HEADS, how="mean", tokens=list(t.tokens))["positions"][3]["relative"]
    page = {"pooled_cosine": moved["pooled_cosine"], "relative": relative}.get(quantity)
    page = moved[quantity][3] if page is None else page
    fields = {"kind": "ablation", "heads": [[2, 3], [4, 1], [2, 5]], "how": "mean", "quantity": quantity,
              "position": 3, "layer": 4}  # fmt: skip
    answer = program_answer(source(t), fields)
    where = "" if quantity == "pooled_cosine" else "_3_L4"
    assert answer["file_name"] == f"minilm_ablation_{quantity}{where}.py"
    assert run_program(answer) == float(page)


def test_heads_are_named_layer_dot_head(f32_trace, source):
    src = source(f32_trace("minilm"))
    for heads in ("2-3", "", "2.3.4"):
        with pytest.raises(FieldError) as refused:
            program_answer(src, {"kind": "ablation", "heads": heads, "how": "zero", "quantity": "change"})
        assert refused.value.loc == ("heads",)
    with pytest.raises(FieldError) as refused:
        program_answer(src, {"kind": "ablation", "heads": "2.12", "how": "zero", "quantity": "change"})
    assert str(refused.value) == "head 12 does not exist; minilm has heads 0..11"
