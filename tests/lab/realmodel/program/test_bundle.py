"""Program text from attnlab's own source (program/bundle.py, program/text.py): the engine's forward and steps
copied as written, every name they use defined once, nothing of attnlab imported; and every kind's program
well formed (pyflakes' checks but undefined annotations: a program's annotations stay strings)."""

from __future__ import annotations

import dataclasses
import inspect
import shutil
import subprocess
import sys

import pytest

from attnlab.engine.fast.decode import steps
from attnlab.engine.forward import Reference, forward
from attnlab.engine.hooks import Hooks
from attnlab.lab.realmodel.program import bundle as b
from attnlab.lab.realmodel.program.answer import program_answer
from attnlab.lab.realmodel.program.number import Source
from attnlab.models import program_steps as ops

from .conftest import imports_of

pytestmark = pytest.mark.models  # a program's description is the one attnlab reads from the model's files

SMOLLM2 = Source(model="smollm2", title="SmolLM2-135M-Instruct", ids=(1, 2, 3, 2, 3, 5, 6, 7, 8, 9),
                 tokens=("t",) * 10, path="float32", n_layer=30, n_head=9, d_head=64, vocab=49152,
                 corrupt_ids=tuple(range(11, 21)), corrupt_tokens=("c",) * 10)  # fmt: skip
MINILM = Source(model="minilm", title="all-MiniLM-L6-v2", ids=(101, 2, 3, 2, 3, 5, 6, 7, 8, 102),
                tokens=("t",) * 10, path="float32", n_layer=6, n_head=12, d_head=32,
                corrupt_ids=(101, *range(11, 19), 102), corrupt_tokens=("c",) * 10)  # fmt: skip
ANSWERS = {"answers": "5,6"}
KINDS = [
    (SMOLLM2, {"kind": "weight", "layer": 1, "head": 2, "query": 3, "key": 1}),
    (MINILM, {"kind": "census", "layer": 1, "head": 2, "score": "breadth"}),
    (SMOLLM2, {"kind": "evidence", "layer": 1, "head": 2, "score": "previous", "query": 3}),
    (MINILM, {"kind": "row", "layer": 1, "head": 2, "query": 3, "key": 1, "coordinate": 4,
              "quantity": "running"}),
    (SMOLLM2, {"kind": "next", "position": 3, "token": 5, "quantity": "p", "temperature": 0.7,
               "top_p": 0.9}),
    (SMOLLM2, {"kind": "journey", "index": 3, "layer": 2, "quantity": "mlp_unit", "rank": 1}),
    (MINILM, {"kind": "journey", "index": 3, "layer": 2, "quantity": "norm_2.rms"}),
    (SMOLLM2, {"kind": "ablation", "heads": "2.3,4.1", "how": "mean", "quantity": "kl", "position": 2}),
    (MINILM, {"kind": "ablation", "heads": "2.3", "how": "zero", "quantity": "relative", "position": 2,
              "layer": 3}),
    (SMOLLM2, {"kind": "attribution", "position": 3, "token": 5, "term": "bound"}),
    (SMOLLM2, {"kind": "patch", "quantity": "recovered", "target": "head", "layer": 3, "column": 2,
               **ANSWERS}),
    (SMOLLM2, {"kind": "patch", "quantity": "value", "target": "keys", "layer": 3, "kv_head": 2, **ANSWERS}),
    (MINILM, {"kind": "patch", "quantity": "value", "target": "pattern", "layer": 3, "head": 2}),
    (SMOLLM2, {"kind": "lens", "position": 3, "layer": 5, "quantity": "top_p", "rank": 2}),
    (MINILM, {"kind": "head_qk", "layer": 3, "head": 4, "query": 5, "key": 2, "quantity": "before"}),
    (SMOLLM2, {"kind": "head_ov", "layer": 3, "head": 4, "position": 5, "quantity": "promoted", "source": 1,
               "rank": 2}),
]  # fmt: skip


def test_the_forward_and_the_reference_steps_are_attnlabs_source_as_written():
    text = program_answer(SMOLLM2, KINDS[0][1])["program"]
    for obj in (forward, Reference, Hooks, ops.Trace):
        assert inspect.getsource(obj) in text
    assert text.count("\ndef forward(") == 1 and "def run_trace" not in text
    circuits = program_answer(SMOLLM2, KINDS[10][1])["program"]
    for fn in (steps.rms, steps.rotate_qk, steps.gated, ops.Fast):
        assert inspect.getsource(fn) in circuits
    # engine/fast/decode/steps.py's attend, written under the name the fast steps call it by
    assert inspect.getsource(steps.attend).replace("def attend(", "def fast_attend(", 1) in circuits


def test_the_description_is_the_models_with_its_values_written_in():
    text = program_answer(SMOLLM2, KINDS[0][1])["program"]
    lines = ("    n_layer = 30", "    n_kv_head = 3", "    rope_pairs = 'interleaved'",
             "    norm_eps = 9.999999747378752e-06", "    mlp = 'gated'", "ARCH = Architecture()")
    for line in lines:
        assert line in text
    encoder = program_answer(MINILM, KINDS[1][1])["program"]
    assert "    norm_placement = 'post'" in encoder and "    head = 'pooled'" in encoder


def test_paths_a_program_never_takes_are_named_and_left_out():
    trace = program_answer(SMOLLM2, KINDS[0][1])["program"]
    assert "layer_norm = None  # every norm of this model is an RMSNorm" in trace
    assert "\ndef layer_norm(" not in trace and "\ndef erf_float32(" not in trace  # SiLU, not GELU
    circuits = program_answer(SMOLLM2, KINDS[10][1])["program"]
    if steps.kernels() is not None:  # the compiled attention ran: the NumPy attention is not carried
        assert "\ndef _softmax_attend(" not in circuits and "\n_softmax_attend = None  #" in circuits
        assert "\nclass Kernels:" in circuits and "OPS = Fast(Kernels)" in circuits
    encoder = program_answer(MINILM, KINDS[1][1])["program"]
    assert "\ndef layer_norm(" in encoder and "rms_norm = None" in encoder and "\ndef erf_float32(" in encoder


@pytest.mark.parametrize(("src", "fields"), KINDS, ids=[f"{s.model}-{f['kind']}" for s, f in KINDS])
def test_every_kinds_program_is_well_formed_and_imports_nothing_of_attnlab(tmp_path, src, fields):
    answer = program_answer(src, fields)
    text = answer["program"]
    assert not {n for n in imports_of(text) if n.split(".")[0] == "attnlab"}
    compile(text, answer["file_name"], "exec")
    ruff = shutil.which("ruff", path=str(sys.prefix) + "/bin") or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed here")
    path = tmp_path / answer["file_name"]
    path.write_text(text)
    done = subprocess.run([ruff, "check", "--no-cache", "--isolated", "--select", "F,E9", "--ignore", "F821",
                           str(path)], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]


def test_every_definition_is_written_once_and_after_what_it_needs():
    bundle = b.Bundle(given={"ARCH"})
    bundle.add(ops.Fast)
    bundle.add(forward)
    text = bundle.text()
    order = [line.split()[1].split("(")[0].rstrip(":") for line in text.splitlines()
             if line.startswith(("def ", "class "))]  # fmt: skip
    assert len(order) == len(set(order))
    assert order.index("Reference") < order.index("Fast")  # a base class before its subclass
    assert text.index("\nREFERENCE = Reference()") > text.index("\nclass Reference:")
    assert text.index("def holds_one_blas_thread(") < text.index("@holds_one_blas_thread")  # decorator first


def test_what_has_no_source_to_copy_is_refused():
    def reads_a_module():
        return b.compat.np  # attnlab's module, not NumPy's

    with pytest.raises(b.NotEmbeddable, match="a program has no attnlab"):
        b.Bundle().add(reads_a_module)
    with pytest.raises(b.NotEmbeddable, match="two definitions want the name run"):
        bundle = b.Bundle()
        bundle.add(b.compat.run)
        bundle.add(ops.Fast.linear, name="run")
    with pytest.raises(ValueError, match="the steps rebind head"):
        from attnlab.lab.realmodel.program import patching
        from attnlab.lab.realmodel.program.text import program

        steps_ = patching.steps(SMOLLM2, patching.check(SMOLLM2, {"quantity": "clean", **ANSWERS}))
        body = steps_.body + "head = 3\nvalue = 1\n"  # a variable named as runs.head
        program(SMOLLM2, dataclasses.replace(steps_, body=body))
