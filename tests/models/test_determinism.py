"""The same numbers every run: MiniLM's trace and SmolLM2's greedy generation, bit for bit.

Whatever the BLAS thread count (``OPENBLAS_NUM_THREADS=1`` or ``=2``; and
``NUMBA_NUM_THREADS``, for SmolLM2's products on its Q4_1 blocks), a busy
core beside them, or which process computes them (the CLI's, the lab's worker,
this one): the forward passes hold BLAS to one thread and share out only fixed
pieces of work among our own threads.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from attnlab.models import files

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, for busy_runs (see its docstring)

from busy_runs import assert_same_bits, results_here, results_in_processes  # noqa: E402

pytestmark = pytest.mark.models


def _missing() -> str | None:
    for shipped in (files.MINILM, files.SMOLLM2):
        try:
            files.locate(shipped)
        except files.ModelNotInstalled as error:
            return str(error)
    return None


MISSING = _missing()
needs_models = pytest.mark.skipif(bool(MISSING), reason=str(MISSING))

# The prompt is over 16 tokens, so the prefill shares its products out in column blocks
PROGRAM = '''
import numpy as np

from attnlab.models.registry import get_model

TEXT = "The cat sat on the mat."
PROMPT = "Once upon a time, in a small village by the sea, there lived an old fisherman who"
SENTENCES = [TEXT, "A longer sentence, about something else entirely.", "Short.", "Two words",
             "The quick brown fox jumps over the lazy dog.", "Attention is all you need, they said.",
             "Numbers: 1, 2, 3 and 12345.", "Café, naïve and 🙂.", "One more.", "And the tenth."]


def results():
    out = {}
    minilm = get_model("minilm")
    trace = minilm.trace(TEXT, details=True)
    for name in ("q", "k", "v"):
        out[f"minilm-{name}"] = getattr(trace, name)
    out["minilm-weights"] = trace.all_weights()  # recomputed from q, k, v
    out["minilm-scores"] = np.stack([trace.layer_scores(layer) for layer in range(trace.n_layer)])
    out["minilm-embeddings"] = minilm.encode(SENTENCES)  # in pieces of 8 that our threads share
    smollm2 = get_model("smollm2")
    out["smollm2-on-blocks"] = np.array(smollm2.path == "q4_1")  # products on the Q4_1 blocks
    ids = smollm2.encode(PROMPT)
    out["smollm2-prompt-length"] = np.array(len(ids))
    out["smollm2-generated"] = np.array(list(smollm2.generate_ids(ids, max_new_tokens=4, stop=False)))
    cache = smollm2.new_cache()
    logits = [smollm2.forward(ids, cache=cache)[-1]]
    for _ in range(3):
        logits.append(smollm2.forward([int(np.argmax(logits[-1]))], cache=cache)[-1])
    out["smollm2-logits"] = np.stack(logits)
    out["smollm2-trace-weights"] = smollm2.trace(TEXT).weights
    return out
'''


@needs_models
def test_traces_and_generation_are_the_same_bits_in_every_process(tmp_path):
    runs = results_in_processes(PROGRAM, tmp_path)
    here = results_here(PROGRAM)
    assert bool(here["smollm2-on-blocks"])
    assert int(here["smollm2-prompt-length"]) >= 16
    greedy = np.argmax(here["smollm2-logits"], axis=-1)
    np.testing.assert_array_equal(here["smollm2-generated"], greedy)  # the loop above is generate_ids'
    for name, ours in here.items():
        for n, results in runs.items():
            assert_same_bits(results[name], ours, f"{name}: OPENBLAS_NUM_THREADS={n} vs this process")


@needs_models
def test_forward_passes_run_on_one_blas_thread_whatever_the_load(minilm, smollm2, monkeypatch):
    """No load-average switch: the load is not even read, and BLAS is at one thread inside."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.threads import blas_threads

    def no_load_average():
        raise AssertionError("the forward pass read the load average")

    monkeypatch.setattr(os, "getloadavg", no_load_average)
    seen = []

    def progress(done, total):
        seen.append(blas_threads())

    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        minilm.trace("The cat sat.", progress=progress)
        ids = smollm2.encode("The cat sat.")
        cache = smollm2.new_cache()
        smollm2.forward(ids, cache=cache, progress=progress)
        smollm2.forward([ids[-1]], cache=cache, progress=progress)  # one decoding step
        assert blas_threads() == before  # restored afterwards
    assert len(seen) == 6 + 30 + 30 and all(s == {1} for s in seen)


@needs_models
def test_the_hold_works_in_other_threads_too(minilm):
    """The lab computes in worker threads; threadpoolctl obeys one "controlling" thread, ours any."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.threads import blas_threads

    here = minilm.trace("The cat sat on the mat.").weights
    got, seen = {}, []

    def trace() -> None:
        progress = lambda *_: seen.append(blas_threads())  # noqa: E731
        got["weights"] = minilm.trace("The cat sat on the mat.", progress=progress).weights

    with threadpool_limits(limits=2, user_api="blas"):  # the main thread now controls threadpoolctl
        worker = threading.Thread(target=trace)
        worker.start()
        worker.join(120)
        assert blas_threads() == {2}
    assert len(seen) == 6 and all(s == {1} for s in seen)
    assert_same_bits(got["weights"], here, "a trace in a thread vs one in the main thread")


@needs_models
@pytest.mark.parametrize("cores", [1, 3])
def test_our_own_thread_count_does_not_change_the_bits(minilm, smollm2, monkeypatch, cores):
    """MiniLM's pieces, SmolLM2's output-layer slices and a prompt's column blocks, on 1 or 3 threads."""
    from attnlab.engine.fast import decode, quant
    from attnlab.engine.fast import ops as ops_module
    from attnlab.engine.fast.decode import steps as decode_steps
    from attnlab.models import model as model_module

    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    texts, ids = namespace["SENTENCES"], smollm2.encode(namespace["PROMPT"])

    def compute():
        return minilm.encode(texts), smollm2.forward(ids), smollm2.forward(ids[:5])

    before = compute()
    for module in (decode, decode_steps, quant, ops_module, model_module):
        monkeypatch.setattr(module, "CORES", cores)
    names = ("embeddings", "prompt logits", "short prompt logits")
    for got, want, what in zip(compute(), before, names, strict=True):
        assert_same_bits(got, want, f"{what} on {cores} threads")
