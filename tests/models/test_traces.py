"""A kept trace recomputes a head's scores and weights, bit for bit as the model computed them.

A trace made with details keeps q, k and v (not every head's (T, T) scores and
weights); ``head_scores`` / ``head_weights`` / ``layer_weights`` recompute them by
the engine's own ``attend``, with the arguments the model's blocks gave it. Two
references: the engine's own forward pass in this process (its block results), and
SHA-256 digests recorded with the code that still kept the arrays (``RECORDED``,
before the change), which this machine's BLAS reproduces or the test says it does not.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from attnlab.lab.realmodel.query import query_row

pytestmark = pytest.mark.models

TEXT = "The cat sat on the mat. The cat sat on"
LONG = " ".join(f"word{i % 17} and thing{i % 5}," for i in range(40))
HEADS = {"minilm": [(0, 0), (3, 5), (5, 11)], "smollm2": [(0, 0), (7, 4), (29, 8)]}

# (model, text, layer, head, what) -> sha256 of the float32 bytes, recorded with the code that kept
# every head's arrays (the trace's own ``weights[l, h]`` and ``scores[l, h]``), on the build machine
RECORDED = {
    ("minilm", 0, 0, "weights"): "b8e5832d0b16f23d3331862f18553f259bbfa2a0daaa0937c844bc410858d90e",
    ("minilm", 0, 0, "scores"): "9aef030829ef785252e42f8d89eb3ebaca991ef0fc03b230a7647ccd5505c177",
    ("minilm", 3, 5, "weights"): "37ebf0ae055d1512d700590ef23e94e8eaebc568c13f623f0b9c6929c7c9fdf9",
    ("minilm", 3, 5, "scores"): "f518821908e3f58d5d470b044aa6e86047e92bebd9613a8776d55e2601d9218e",
    ("minilm", 5, 11, "weights"): "028b108d3be280c73e19b44ecdb7dd3448f3c6de4c48dbe97213fabb66374b4a",
    ("minilm", 5, 11, "scores"): "074e7ee2815f00b6ee7b9514b50d4a884831f85b721def28f61aa6d3a4ec094a",
    ("smollm2", 0, 0, "weights"): "ca3e34c3dd8b26b2b80b22da3766e601ff700ea7df762ffed4a0d0ed89ee009d",
    ("smollm2", 0, 0, "scores"): "5f012b6d1d3395fdff29f18022464953330e48b3444529cd584e730408e1e803",
    ("smollm2", 7, 4, "weights"): "92ea8e38123af06d43f9bb2330ef61fab1d8221063ebc0c41b8024774f659c09",
    ("smollm2", 7, 4, "scores"): "0b39ecf99c26a10a7d8660e55efc6921e08a9a10dad451a868a14cd701b9231a",
    ("smollm2", 29, 8, "weights"): "b021766bd137ee740b48bc592972ad7fec38514c5af76335bb3c7e61ae57bf24",
    ("smollm2", 29, 8, "scores"): "835a81934fff962866eecc3294d467445831db1c96ae06636fedcf0a468fd0d6",
}
RECORDED_ALL = {  # every layer's and head's weights, stacked (L, H, T, T)
    ("minilm", TEXT): "69ebf44951b0c6bfcee80197e3e0bb0f8690d9bb41b073224174e9b2311b2db2",
    ("smollm2", TEXT): "53bb6552d5fe07afbe3e373000babecc055a171e6639efbbb885932fae6fdedb",
    ("minilm", LONG): "d8d5349e7475a72e4720beb6d680559aede06d485177d4bce5ab5fd1626910e2",
    ("smollm2", LONG): "0164647faad9ddf49c14b295ba4618ee8e57d7ff701f2239a78056b8c2f2efce",
}


def digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


@pytest.fixture(params=["minilm", "smollm2"])
def model(request):
    return request.getfixturevalue(request.param)


def engine_results(model, text: str) -> list:
    """Each layer's pattern and scores (blocked keys -inf) from the hook points of the model's own
    forward pass on the trace's steps (the engine, untouched)."""
    from attnlab.engine.hooks import block_names

    ids = model.tokenize([text]).ids[0].tolist() if model.name == "minilm" else model.encode(text)
    _, cache = model.run_with_cache(ids, ops=model.trace_ops)
    layers = [block_names(i) for i in range(model.arch.n_layer)]
    return [(cache[n.pattern], cache[n.scores]) for n in layers]


def test_a_detailed_trace_keeps_q_k_v_not_every_heads_scores_and_weights(model):
    trace = model.trace(TEXT, details=True)
    assert trace.weights is None and trace.scores is None
    assert trace.q.dtype == trace.k.dtype == trace.v.dtype == np.float32
    kept = {id(a) for a in trace.arrays().values()}
    assert id(trace.q) in kept and id(trace.k) in kept and id(trace.v) in kept


@pytest.mark.parametrize("text", [TEXT, LONG])
def test_every_head_recomputed_equals_the_engines_forward_pass_bit_for_bit(model, text):
    trace = model.trace(text, details=True)
    for layer, (weights, scores) in enumerate(engine_results(model, text)):
        got = trace.layer_weights(layer)
        assert got.dtype == weights.dtype == np.float32 and np.array_equal(got, weights)
        for head in range(trace.n_head):
            w, s = trace.head_weights(layer, head), trace.head_scores(layer, head)
            assert w.dtype == s.dtype == np.float32
            allowed = trace.allowed  # the trace keeps the scores before the mask; the hook: -inf if blocked
            assert np.array_equal(w, weights[head]) and np.array_equal(s[allowed], scores[head][allowed])
            assert np.all(scores[head][~allowed] == -np.inf)


def test_recomputed_heads_equal_the_digests_recorded_before_the_change(model):
    fresh = engine_results(model, TEXT)
    if digest(np.stack([w for w, _ in fresh])) != RECORDED_ALL[(model.name, TEXT)]:
        pytest.skip("this machine's BLAS rounds float32 differently from the recording machine's")
    trace = model.trace(TEXT, details=True)
    for layer, head in HEADS[model.name]:
        assert trace.head_weights(layer, head).dtype == np.float32
        assert digest(trace.head_weights(layer, head)) == RECORDED[(model.name, layer, head, "weights")]
        assert digest(trace.head_scores(layer, head)) == RECORDED[(model.name, layer, head, "scores")]
    assert digest(trace.all_weights()) == RECORDED_ALL[(model.name, TEXT)]
    assert digest(model.trace(LONG, details=True).all_weights()) == RECORDED_ALL[(model.name, LONG)]


def test_a_memory_mapped_trace_recomputes_the_same_bits(model, tmp_path):
    from attnlab.models.jobs.kept import spill_trace

    trace = model.trace(TEXT, details=True)
    mapped = spill_trace(trace, tmp_path / "t")
    assert isinstance(mapped.q, np.memmap) and isinstance(mapped.k, np.memmap)
    for layer, head in HEADS[model.name]:
        assert np.array_equal(mapped.head_weights(layer, head), trace.head_weights(layer, head))
        assert np.array_equal(mapped.head_scores(layer, head), trace.head_scores(layer, head))
    assert query_row(mapped, 2, 1, 3) == query_row(trace, 2, 1, 3)


def test_a_trace_records_the_path_it_ran_on_and_keeps_it_through_a_spill(model, tmp_path):
    from attnlab.models.jobs.kept import spill_trace

    trace = model.trace(TEXT, details=True)
    assert trace.path == model.path and trace.path in ("q4_1", "float32")
    assert model.name != "minilm" or trace.path == "float32"  # the encoder's products: float32 weights
    assert model.trace(TEXT).path == trace.path  # without details too
    assert spill_trace(trace, tmp_path / "t").path == trace.path

