"""One answer for 'How is this computed?': what it carries, which attention it follows, what it refuses."""

from __future__ import annotations

import pytest

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.program import answer as a
from attnlab.lab.realmodel.program.number import Source


def smollm2(n_tokens: int, path: str = "float32") -> Source:
    return Source(model="smollm2", title="SmolLM2-135M-Instruct", ids=tuple(range(1, n_tokens + 1)),
                  tokens=("x",) * n_tokens, path=path, n_layer=30, n_head=9, d_head=64,
                  vocab=49152)  # fmt: skip


@pytest.mark.models  # a program's description is the one attnlab reads from the model's files
def test_an_answer_carries_its_program_its_file_and_what_it_reproduces():
    got = a.program_answer(
        smollm2(6, "q4_1"), {"kind": "lens", "position": 5, "layer": 3, "quantity": "logit"}
    )
    assert set(got) == {"kind", "title", "program", "file_name", "path", "program_path", "says"}
    assert (got["kind"], got["path"], got["program_path"]) == ("lens", "q4_1", "float32")
    assert got["title"] == (
        "The logit lens after block 3 at token 5: the model's answer's logit, in SmolLM2-135M-Instruct"
    )
    assert got["file_name"] == "smollm2_lens_logit_5_L3.py"
    assert got["says"]["claims"]["bit_for_bit"] is False


@pytest.mark.models
@pytest.mark.parametrize(("n_tokens", "compiled", "attends"), [(63, True, "Kernels.scores"),
                                                               (63, False, "def _softmax_attend("),
                                                               (64, True, "def _heads_shared(")])  # fmt: skip
def test_a_circuits_program_attends_as_the_fast_path_did(monkeypatch, n_tokens, compiled, attends):
    """The compiled steps (as NumPy: Kernels) where they ran, with their attention up to 63 tokens; else the
    NumPy steps, the query heads of a KV head together below 64 x 64 scores, one head at a time from it."""
    monkeypatch.setattr(a, "compiled_steps_ran", lambda: compiled)
    got = a.program_answer(
        smollm2(n_tokens), {"kind": "lens", "position": 0, "layer": 0, "quantity": "logit"}
    )
    assert attends in got["program"]
    assert ("OPS = Fast(Kernels)" in got["program"]) == compiled
    assert ("def fma32(" in got["program"]) == compiled
    assert ("\ndef _softmax_attend(" in got["program"]) == (not compiled or n_tokens >= 64)
    assert ("\ndef _heads_shared(" in got["program"]) == (n_tokens >= 64)


@pytest.mark.models
def test_a_trace_program_follows_the_reference_steps():
    got = a.program_answer(smollm2(6), {"kind": "weight", "layer": 0, "head": 0, "query": 1, "key": 0})
    assert "TRACE_OPS = Trace()" in got["program"] and "\nclass Reference:" in got["program"]
    assert "\nclass Fast(" not in got["program"] and "\ndef fast_attend(" not in got["program"]


@pytest.mark.parametrize(("fields", "loc", "problem"), [
    ({"kind": "nope"}, ("kind",), "'nope' is unknown; use one of " + ", ".join(a.KINDS)),
    ({"layer": 1}, ("kind",), "is needed: it says which kind of number the program is for"),
    ({"kind": "weight", "layer": 30, "head": 0, "query": 0, "key": 0}, ("layer",),
     "30 does not exist; smollm2 has layers 0..29"),
    ({"kind": "weight", "layer": 0, "head": 0, "query": 6, "key": 0}, ("query",),
     "6 does not exist; the text has tokens 0..5"),
    ({"kind": "next", "position": 0, "token": 49152, "quantity": "p"}, ("token",),
     "49152 is outside the vocabulary 0..49151"),
    ({"kind": "next", "position": 0, "token": 1, "quantity": "p", "temperature": 9}, ("temperature",),
     "must be between 0 and 5, got 9"),
    ({"kind": "weight", "layer": 0, "head": 0, "query": 0, "key": 0, "value": "0.5"}, ("value",),
     "must be a finite number, got '0.5'"),
])  # fmt: skip
def test_a_descriptor_the_text_or_the_model_cannot_answer_is_refused_at_its_field(fields, loc, problem):
    with pytest.raises(FieldError) as refused:
        a.program_answer(smollm2(6), fields)
    assert refused.value.loc == loc
    assert refused.value.problem == problem
