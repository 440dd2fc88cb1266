"""Activation patching's numbers: the metric after a patch and the fraction recovered, printed bit for bit."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.models.circuits import patching as cp

pytestmark = pytest.mark.models

CLEAN = "The Eiffel Tower is in the city of"
CORRUPT = "The Colosseum is in the city of"


@pytest.fixture(scope="module")
def eiffel(smollm2_f32, source):
    clean, corrupt = (smollm2_f32.trace(t, details=True) for t in (CLEAN, CORRUPT))
    answers = tuple(smollm2_f32.encode(a)[0] for a in (" Paris", " Rome"))
    pair = cp.pair(smollm2_f32, list(clean.ids), list(corrupt.ids), answers=answers)
    src = source(clean, corrupt_ids=tuple(corrupt.ids), corrupt_tokens=tuple(corrupt.tokens))
    return pair, src, f"{answers[0]},{answers[1]}"


def test_the_two_runs_metrics_are_printed_bit_for_bit(eiffel, run_program):
    pair, src, answers = eiffel
    for quantity, page in (("clean", pair.clean_value), ("corrupt", pair.corrupt_value)):
        assert (
            run_program(program_answer(src, {"kind": "patch", "quantity": quantity, "answers": answers}))
            == page
        )


@pytest.mark.parametrize(("target", "layer", "column"), [("resid_pre", 5, 3), ("head", 14, 6), ("mlp", 2, 3)])
def test_a_patchs_fraction_recovered_is_printed_bit_for_bit(
    smollm2_f32, eiffel, run_program, target, layer, column
):
    pair, src, answers = eiffel
    edit = {"resid_pre": lambda: cp.residual_patch(pair, layer, column, "pre"),
            "head": lambda: cp.head_patch(pair, layer, column),
            "mlp": lambda: cp.mlp_patch(pair, layer, (column,))}[target]()  # fmt: skip
    page = pair.recovered(cp.patch_value(smollm2_f32, pair, [edit]))
    fields = {"kind": "patch", "quantity": "recovered", "target": target, "layer": layer, "column": column,
              "answers": answers}  # fmt: skip
    assert run_program(program_answer(src, fields)) == page


def test_an_encoders_patch_is_printed_bit_for_bit(minilm, source, run_program):
    clean, corrupt = (
        minilm.trace(t, details=True) for t in ("The cat sat on the mat.", "The dog sat on the rug.")
    )
    pair = cp.pair(minilm, list(clean.ids), list(corrupt.ids))
    src = source(clean, corrupt_ids=tuple(corrupt.ids), corrupt_tokens=tuple(corrupt.tokens))
    page = cp.patch_value(minilm, pair, [cp.residual_patch(pair, 1, 5, "mid")])
    fields = {"kind": "patch", "quantity": "value", "target": "resid_mid", "layer": 1, "column": 5}
    assert run_program(program_answer(src, fields)) == page


def test_patching_needs_two_prompts_of_one_length(f32_trace, source):
    t = f32_trace("minilm")
    with pytest.raises(FieldError) as refused:
        program_answer(source(t), {"kind": "patch", "quantity": "clean"})
    assert refused.value.loc == ("corrupt",)
    with pytest.raises(FieldError) as refused:
        program_answer(source(t, corrupt_ids=(101, 102)), {"kind": "patch", "quantity": "clean"})
    n = len(t.ids)
    assert (
        str(refused.value)
        == f"corrupt is 2 tokens long and the clean prompt {n}; patching needs the same length"
    )


@pytest.mark.parametrize(("target", "layer", "column"),
                         [("pattern", 14, 6), ("keys", 9, 2), ("values", 20, 0)])  # fmt: skip
def test_a_pattern_or_key_value_patchs_fraction_recovered_is_printed_bit_for_bit(
    smollm2_f32, eiffel, run_program, target, layer, column
):
    """A query head's pattern, or a KV head's keys (after RoPE) or values, the clean run's in the corrupted
    run: the pattern and key/value sweeps' cells (models/circuits/patching.py)."""
    pair, src, answers = eiffel
    if target == "pattern":
        edit = cp.pattern_patch(smollm2_f32, pair, layer, column)
        where = {"head": column}
    else:
        edit = cp.kv_patch(smollm2_f32, pair, layer, column, "k" if target == "keys" else "v")
        where = {"kv_head": column}
    page = pair.recovered(cp.patch_value(smollm2_f32, pair, [edit]))
    fields = {"kind": "patch", "quantity": "recovered", "target": target, "layer": layer, "answers": answers}
    answer = program_answer(src, {**fields, **where})
    mark = "_H" if target == "pattern" else "_KV"
    assert answer["file_name"] == f"smollm2_patch_recovered_{target}_L{layer}{mark}{column}.py"
    assert program_answer(src, {**fields, "column": column})["program"] == answer["program"]  # a sweep's cell
    assert run_program(answer) == page


def test_an_encoders_pattern_patch_is_printed_bit_for_bit(minilm, source, run_program):
    clean, corrupt = (
        minilm.trace(t, details=True) for t in ("The cat sat on the mat.", "The dog sat on the rug.")
    )
    pair = cp.pair(minilm, list(clean.ids), list(corrupt.ids))
    src = source(clean, corrupt_ids=tuple(corrupt.ids), corrupt_tokens=tuple(corrupt.tokens))
    page = cp.patch_value(minilm, pair, [cp.pattern_patch(minilm, pair, 2, 7)])
    fields = {"kind": "patch", "quantity": "value", "target": "pattern", "layer": 2, "head": 7}
    assert run_program(program_answer(src, fields)) == page


def test_a_kv_head_is_one_the_model_has(eiffel):
    _, src, answers = eiffel
    fields = {"kind": "patch", "quantity": "value", "target": "values", "layer": 3, "answers": answers}
    with pytest.raises(FieldError) as refused:
        program_answer(src, {**fields, "kv_head": 3})
    assert refused.value.loc == ("kv_head",)
    assert str(refused.value) == "kv_head 3 does not exist; smollm2 has KV heads 0..2"
    with pytest.raises(FieldError) as refused:
        program_answer(src, fields)
    assert (refused.value.loc, str(refused.value)) == (
        ("kv_head",), "kv_head is needed for a number of kind patch"
    )
