"""The runs a program makes (program/runs.py), in-process on the real models: the circuits' runs' arrays, a
plan's writes and a block's attention run again, bit for bit as models/circuits makes them."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine.fast.decode import steps
from attnlab.lab.realmodel.program import runs
from attnlab.models.circuits import patching as cp
from attnlab.models.circuits import runs as circuit_runs
from attnlab.models.circuits.edits import SetHead, SetKV, SetPattern, plan
from attnlab.models.program_steps import Fast, Kernels

pytestmark = pytest.mark.models

TEXT = "The cat sat on the mat. The cat sat on the mat."
ARRAYS = ("resid", "mid", "z", "attn_out", "mlp_out")


def ops_of(model):
    """The program's steps for the model's own: SmolLM2's fast path, MiniLM's reference."""
    if model.arch.causal:
        return Fast(Kernels if steps.kernels() is not None else None)
    from attnlab.engine.forward import REFERENCE

    return REFERENCE


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture(params=["smollm2", "minilm"])
def model(request, smollm2_f32, minilm):
    return smollm2_f32 if request.param == "smollm2" else minilm


def test_a_circuits_run_keeps_the_models_arrays(model):
    ids = model.to_tokens(TEXT) if model.arch.causal else model.tokenize([TEXT]).ids[0].tolist()
    mine = runs.circuit_run(model.arch, model.weights, ids, ops=ops_of(model))
    theirs = circuit_runs.run(model, ids)
    for name in ARRAYS:
        assert same(mine[name], getattr(theirs, name)), name
    ends = ("final_rms", "logits") if model.arch.causal else ("pooled",)
    for name in ends:
        assert same(mine[name], getattr(theirs, name)), name


def test_a_runs_resumption_with_a_plans_writes_is_the_models(smollm2_f32):
    """Two heads' z set from layer 4 on: the program's plan (new_plan, write, edit) and edits.plan's."""
    m = smollm2_f32
    ids = m.to_tokens(TEXT)
    before = circuit_runs.run(m, ids)
    values = np.random.default_rng(0).standard_normal((2, m.arch.d_head)).astype(np.float32)
    theirs = circuit_runs.resume(m, before, 4, edits=[SetHead(4, 2, values[0]), SetHead(6, 8, values[1])])
    p = runs.new_plan(m.arch)
    d = m.arch.d_head
    for (layer, head), v in zip(((4, 2), (6, 8)), values):
        runs.edit(p, "z", layer, runs.write(v, len(ids), d, cols=slice(head * d, (head + 1) * d)))
    base = {name: getattr(before, name) for name in ARRAYS}
    mine = runs.circuit_run(m.arch, m.weights, ids, ops=ops_of(m), plan=p, base=base, start=p.start)
    assert p.start == 4
    for name in (*ARRAYS, "logits"):
        assert same(mine[name], getattr(theirs, name)), name


@pytest.mark.parametrize("what", ["pattern", "k", "v"])
def test_a_pattern_or_kv_patch_runs_as_the_models(smollm2_f32, what):
    m = smollm2_f32
    clean, corrupt = (m.to_tokens(t) for t in ("The Eiffel Tower is in the city of",
                                               "The Colosseum is in the city of"))  # fmt: skip
    pair = cp.pair(m, clean, corrupt, answers=(m.encode(" Paris")[0], m.encode(" Rome")[0]))
    base = {name: getattr(pair.clean, name) for name in ARRAYS}
    kept = runs.attention_of(m.arch, m.weights, base, 7, ops=ops_of(m))
    theirs = cp.attention_of(m, pair.clean, 7)
    assert all(same(kept[k], theirs[k]) for k in ("pattern", "k", "v"))
    n, d = len(clean), m.arch.d_head
    p = runs.new_plan(m.arch)
    if what == "pattern":
        runs.edit(p, "pattern", 7, runs.write(kept["pattern"][5], n, n, head=5))
        edit = SetPattern(7, 5, theirs["pattern"][5])
    else:
        runs.edit(p, what, 7, runs.write(kept[what][:, 1], n, d, cols=slice(d, 2 * d)))
        edit = SetKV(7, 1, what, theirs[what][:, 1])
    corrupt_resid = pair.corrupt.resid[7]
    mine = runs.final_residual(m.arch, m.weights, corrupt_resid, 7, p, ops=ops_of(m))
    theirs_x = circuit_runs.final_residual(m, corrupt_resid, 7, plan(m, n, [edit]))
    assert same(mine, theirs_x)
    a = runs.answer_logits(m.arch, m.weights, mine[-1:], pair.answers, ops=ops_of(m))[0]
    assert float(np.float64(a[0]) - np.float64(a[1])) == cp.patch_value(m, pair, [edit])
