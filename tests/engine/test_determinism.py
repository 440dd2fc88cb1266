"""The same numbers every run: tiled attention, the forward on the fast ops and the array engine, bit for bit.

Whatever the BLAS thread count (``OPENBLAS_NUM_THREADS=1`` or ``=2``), the
``threads=`` argument, a busy core beside them, or which process computes them.
Also the reference-counted BLAS hold (engine/threads.py) under interleaving.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, for busy_runs (see its docstring)

from busy_runs import assert_same_bits, results_here, results_in_processes  # noqa: E402

# Each case is named "<case>|threads=<t>": every entry of one case must be the same bits.
PROGRAM = '''
import numpy as np

from attnlab.engine.fast.tiled import tiled_attention
from attnlab.engine.block import BlockParams, transformer_block
from attnlab.engine.cache import KVCache
from attnlab.engine.fast.ops import FAST, ROWS
from attnlab.engine.forward import forward
from attnlab.engine.layers import RMSNormParams, SwiGLUParams
from attnlab.engine.model import Architecture, Weights
from attnlab.engine.multihead import AttentionParams
from attnlab.engine.threads import one_blas_thread


def attention_inputs(dtype, kind="plain"):
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((2, 3, 300, 64)), rng.standard_normal((2, 3, 260, 64))
    v = rng.standard_normal((2, 3, 260, 48))
    if kind == "aligned":  # rows 64..127 point along the longest key: scores near a bound too big
        k[:, :, 0] *= 2.0  # for exp unshifted, so their blocks are shifted (the NumPy code)
        q[:, :, 64:128] = 20.0 * k[:, :, :1] + 0.1 * rng.standard_normal((2, 3, 64, 64))
    if kind == "loose":  # one long key orthogonal to the rest: bounds far too big, rows redone exactly
        k[:, :, 0] = 0.0
        k[:, :, 0, 0] = 2000.0 if dtype == np.float64 else 200.0
    return [a.astype(dtype) for a in (q, k, v)]


def tiled_cases():
    out = {}
    real = np.random.default_rng(6).random((2, 1, 260)) < 0.8
    for dtype in (np.float32, np.float64):
        d = np.dtype(dtype).name
        for causal in (None, "top_left", "bottom_right"):
            q, k, v = attention_inputs(dtype)
            for threads in (1, 2, None):
                res = tiled_attention(q, k, v, causal=causal, block_q=64, block_k=96, threads=threads)
                out[f"tiled-{d}-{causal}|threads={threads}"] = res.output
                out[f"tiled-{d}-{causal}-lse|threads={threads}"] = res.logsumexp
        q, k, v = attention_inputs(dtype)
        for threads in (1, 2, None):
            res = tiled_attention(q, k, v, causal="top_left", key_padding_mask=real, threads=threads)
            out[f"tiled-{d}-padded-default-tiles|threads={threads}"] = res.output
        q, k, v = attention_inputs(dtype, "aligned")
        for threads in (1, 2, None):
            res = tiled_attention(q, k, v, causal="bottom_right", block_q=64, block_k=64, threads=threads)
            out[f"tiled-{d}-shifted|threads={threads}"] = res.output
        q, k, v = attention_inputs(dtype, "loose")
        for threads in (1, 2, None):
            res = tiled_attention(q, k, v, block_q=64, block_k=64, threads=threads)
            out[f"tiled-{d}-rescued|threads={threads}"] = res.output
        res = tiled_attention(q, k, v, causal="top_left", block_k=None, backend="generic")  # whole rows
        out[f"tiled-{d}-generic|threads=None"] = res.output
    return out


def decoder_cases():
    """A Llama-style model on the fast ops, BLAS held to one thread as a model holds it: a 40-token
    prompt (products shared out, the compiled attention), 3 steps, a 150-token prompt (the heads and
    SwiGLU's rows shared out), and 3 rows at once on one cache (ROWS)."""
    rng = np.random.default_rng(7)
    d, d_ff, n_layer = 256, 1024, 2
    arch = Architecture(family="llama", causal=True, n_layer=n_layer, d_model=d, n_head=4, n_kv_head=2,
                        d_head=64, d_ff=d_ff, d_vocab=500, n_ctx=256, rope_pairs="interleaved")

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    blocks = tuple(BlockParams(
        attn=AttentionParams(w_q=w(d, d), w_k=w(d, 128), w_v=w(d, 128), w_o=w(d, d)),
        mlp=SwiGLUParams(w_gate=w(d, d_ff), w_up=w(d, d_ff), w_down=w(d_ff, d)),
        norm_1=RMSNormParams(np.ones(d, np.float32), 1e-5),
        norm_2=RMSNormParams(np.ones(d, np.float32), 1e-5),
    ) for _ in range(n_layer))
    weights = Weights(embed=w(500, d), blocks=blocks, final_norm=RMSNormParams(np.ones(d, np.float32), 1e-5))
    caches = [KVCache() for _ in range(n_layer)]
    out = {}
    with one_blas_thread():
        out["decoder-prompt|threads=None"] = forward(arch, weights, rng.integers(0, 500, 40), ops=FAST,
                                                     caches=caches)
        for step in range(3):
            ids = rng.integers(0, 500, 1)
            out[f"decoder-step{step}|threads=None"] = forward(arch, weights, ids, ops=FAST, caches=caches)
        out["decoder-long-prompt|threads=None"] = forward(arch, weights, rng.integers(0, 500, 150), ops=FAST)
        per_layer = [[c, c, c] for c in caches]
        out["decoder-rows|threads=None"] = forward(arch, weights, rng.integers(0, 500, 3), ops=ROWS,
                                                   caches=per_layer, positions=np.arange(43, 46))
    return out


def generic_cases():
    """The array engine called directly: attention (one query row and many) and a post-norm block."""
    from attnlab.engine import attention
    from attnlab.engine.layers import LayerNormParams, MLPParams

    rng = np.random.default_rng(8)
    out = {}
    for rows in (1, 300):
        q, k = rng.standard_normal((rows, 512)), rng.standard_normal((700, 512))
        v = rng.standard_normal((700, 96))
        out[f"attention-{rows}-rows|threads=None"] = attention(q, k, v).output
    d = 256
    params = BlockParams(
        attn=AttentionParams(*(rng.standard_normal((d, d)) / 16 for _ in range(4))),
        mlp=MLPParams(w_1=rng.standard_normal((d, 4 * d)) / 16, w_2=rng.standard_normal((4 * d, d)) / 32),
        norm_1=LayerNormParams(np.ones(d), np.zeros(d), 1e-5),
        norm_2=LayerNormParams(np.ones(d), np.zeros(d), 1e-5),
    )
    for rows in (1, 64):
        x = rng.standard_normal((rows, d))
        res = transformer_block(x, params, n_head=4, norm="post", causal="top_left")
        out[f"block-post-{rows}-rows|threads=None"] = res.output
    # the same blocks as an encoder's forward (the reference's steps): a padded batch, pooled
    arch = Architecture(family="bert", causal=False, n_layer=2, d_model=d, n_head=4, n_kv_head=4, d_head=64,
                        d_ff=4 * d, d_vocab=300, n_ctx=64, norm="layer", norm_placement="post",
                        final_norm=False, positions="none", mlp="plain", activation="gelu", head="pooled")
    weights = Weights(embed=rng.standard_normal((300, d)), blocks=(params, params))
    padding = np.arange(50) < np.array([[50], [31], [7]])
    with one_blas_thread():
        out["encoder-batch|threads=None"] = forward(arch, weights, rng.integers(0, 300, (3, 50)), ops=FAST,
                                                    key_padding=padding)
    return out


def results():
    return {**tiled_cases(), **decoder_cases(), **generic_cases()}
'''


def _cases(results: dict) -> dict[str, list[tuple[str, np.ndarray]]]:
    cases: dict = {}
    for name, array in results.items():
        case, _, threads = name.partition("|")
        cases.setdefault(case, []).append((threads, array))
    return cases


def test_tiled_attention_and_the_decoder_path_are_the_same_bits_everywhere(tmp_path):
    runs = results_in_processes(PROGRAM, tmp_path)
    here = results_here(PROGRAM)
    assert set(runs[1]) == set(runs[2]) == set(here)
    for case, entries in _cases(here).items():
        reference_threads, reference = entries[0]
        assert np.isfinite(reference).any(), case
        for source, results in (("here", here), ("OPENBLAS_NUM_THREADS=1", runs[1]),
                                ("OPENBLAS_NUM_THREADS=2", runs[2])):  # fmt: skip
            for threads, _ in entries:
                got = results[f"{case}|{threads}"]
                assert_same_bits(got, reference, f"{case} {threads} {source} vs {reference_threads} here")


def test_the_cases_reach_the_shifted_blocks_and_the_exact_rows(monkeypatch):
    """The cases above cover the NumPy code's shifted blocks and the rescue path, not only the kernel."""
    from attnlab.engine.fast import tiles as fast

    namespace: dict = {}
    exec(compile(PROGRAM, "<program>", "exec"), namespace)
    inputs = namespace["attention_inputs"]
    rescued = []
    real = fast._rescue
    monkeypatch.setattr(fast, "_rescue", lambda rows, *a: (rescued.extend(rows), real(rows, *a)))
    for dtype in (np.float32, np.float64):
        rescued.clear()
        namespace["tiled_attention"](*inputs(dtype, "loose"), block_q=64, block_k=64)
        assert rescued, dtype
        q, k, _ = inputs(dtype, "aligned")
        bound = np.linalg.norm(q / 8.0, axis=-1) * np.linalg.norm(k, axis=-1).max(axis=-1, keepdims=True)
        per_block = bound[..., :256].reshape(2, 3, 4, 64).max(axis=-1)  # the first four 64-row blocks
        limit = fast._NO_SHIFT[np.dtype(dtype)]
        assert (per_block[..., 1] > limit).all() and (per_block[..., 0] <= limit).all(), dtype


def test_the_blas_hold_survives_interleaved_threads():
    """A enters, B enters, A leaves: B still runs on one BLAS thread; the last one out restores."""
    from threadpoolctl import threadpool_limits

    from attnlab.engine.threads import blas_threads, one_blas_thread

    seen: dict[str, set] = {}
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def a() -> None:
        with one_blas_thread():
            a_in.set()
            assert b_in.wait(10)
        a_out.set()

    def b() -> None:
        assert a_in.wait(10)
        with one_blas_thread():
            b_in.set()
            assert a_out.wait(10)
            seen["b after a left"] = blas_threads()

    with threadpool_limits(limits=2, user_api="blas"):
        start = blas_threads()
        threads = [threading.Thread(target=a), threading.Thread(target=b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        assert seen["b after a left"] == {1}
        assert blas_threads() == start  # both out: what was there before, not a leftover 1
        with one_blas_thread(), one_blas_thread():  # nested in one thread
            assert blas_threads() == {1}
        assert blas_threads() == start


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_argument_never_changes_the_bits_in_process(rng, threads):
    """A quick in-process check beside the subprocess one: odd thread counts and head counts too."""
    from attnlab.engine.fast.tiled import tiled_attention

    q, k, v = (rng.standard_normal((5, 3, 130, 16)).astype(np.float32) for _ in range(3))
    one = tiled_attention(q * 9, k, v, causal="top_left", block_q=32, block_k=40, threads=1)
    other = tiled_attention(q * 9, k, v, causal="top_left", block_q=32, block_k=40, threads=threads)
    assert_same_bits(other.output, one.output, f"threads={threads}")
    assert_same_bits(other.logsumexp, one.logsumexp, f"threads={threads} logsumexp")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("rows", "cols"), [(1, 960), (15, 3072), (16, 24), (40, 1100), (17, 3072)])
def test_products_shared_out_in_column_blocks_are_the_product(rng, monkeypatch, dtype, rows, cols):
    """A prompt's products (16 rows or more) go in fixed column blocks; any thread count, same bits."""
    from attnlab.engine.fast import decode

    x, w = rng.standard_normal((rows, 300)).astype(dtype), rng.standard_normal((300, cols)).astype(dtype)
    got = decode._product(x, w)
    np.testing.assert_allclose(got, x @ w, rtol=0, atol=1e-11 if dtype == np.float64 else 2e-4)
    for threads in (1, 3):
        monkeypatch.setattr(decode, "CORES", threads)
        assert_same_bits(decode._product(x, w), got, f"{threads} threads")
