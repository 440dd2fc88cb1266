"""Float32 products of a short prompt shared with the spinning helpers (quant/share.py's FLOAT jobs):
NumPy's bits, block by block.

A prompt's float product is cut in column blocks fixed by the weights' shape (decode._product); the
blocks go to the helpers' sgemm calls (float32, from 16 rows) or to NumPy's matmul on the pool's
threads. Nothing here depends on timing: a helper that takes blocks, takes none or is given up on
leaves the same bits as NumPy's matmul on each block.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from attnlab.engine.fast import decode
from attnlab.engine.fast import quant as fast_quant
from attnlab.engine.fast.ops import FAST
from attnlab.engine.fast.quant import share
from attnlab.engine.forward import forward
from attnlab.engine.threads import blas_libraries, holding_one_blas_thread, one_blas_thread

from ..tinykit import llama


def _numpy_blas_is_scipy_openblas64() -> bool:
    return any(lib.get("internal_api") == "openblas" and "scipy_openblas64" in str(lib.get("filepath", ""))
               for lib in blas_libraries())  # fmt: skip


NO_SGEMM = "NumPy's BLAS here is not scipy-openblas64 (no sgemm to call)"
pytestmark = pytest.mark.skipif(not _numpy_blas_is_scipy_openblas64(), reason=NO_SGEMM)


@pytest.fixture(autouse=True)
def _held():
    with one_blas_thread():
        yield


def blockwise(x: np.ndarray, w: np.ndarray, width: int) -> np.ndarray:
    """NumPy's matmul on each block of ``width`` columns: the bits the shared product must give."""
    out = np.empty((x.shape[0], w.shape[1]), np.float32)
    for c in range(0, w.shape[1], width):
        np.matmul(x, w[:, c : c + width], out=out[:, c : c + width])
    return out


def width_of(w: np.ndarray) -> int:
    """decode._product's block width for w."""
    n = w.shape[1]
    parts = 2 * -(-n // (2 * decode._BLOCK_COLUMNS))
    width = -(-n // parts)
    return -(-width // 16) * 16


def matrices(rng):
    joined = rng.standard_normal((576, 3 * 576)).astype(np.float32)  # q|k|v side by side: views
    shapes = ((384, 1152), (1536, 384), (70, 37))
    return [joined[:, 576:1152], joined, *(rng.standard_normal(s).astype(np.float32) for s in shapes)]


def test_numpy_blas_sgemm_is_found_and_checked():
    assert share.sgemm_address() != 0
    x = np.ones((20, 64), np.float32)
    decode._product(x, np.ones((64, 48), np.float32))
    assert decode._float_reason == "" and decode.float_reason() == ""


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("n_tokens", [16, 22, 40, 63])
def test_shared_float_products_are_numpys_bits_block_by_block(rng, n_threads, n_tokens):
    helpers = share.sharing(n_threads)
    for w in matrices(rng):
        width = width_of(w)
        for _ in range(2):
            x = rng.standard_normal((n_tokens, w.shape[0])).astype(np.float32)
            out = np.full((n_tokens, w.shape[1]), np.nan, np.float32)
            assert helpers.float_product(x, w, out, width)
            assert out.tobytes() == blockwise(x, w, width).tobytes()


def test_a_float_job_is_never_given_up_on(rng, monkeypatch):
    """A helper writes its blocks straight into the caller's out, so the caller waits for each one it
    took, however short its patience with blocks of quantised rows."""
    monkeypatch.setattr(share, "PATIENCE", 0)
    helpers = share.sharing(2)
    w = rng.standard_normal((576, 1536)).astype(np.float32)
    for n_tokens in range(16, 300, 41):
        x = rng.standard_normal((n_tokens, 576)).astype(np.float32)
        out = np.full((n_tokens, 1536), np.nan, np.float32)
        assert helpers.float_product(x, w, out, 64)
        assert out.tobytes() == blockwise(x, w, 64).tobytes()
        assert helpers.ctl[share.ABANDONED] == 0


def test_products_from_many_threads_at_once(rng):
    """One product at a time has the helpers; the others take the pool's threads: all of them right."""
    ws = matrices(rng)
    xs = [rng.standard_normal((16 + 7 * i, ws[i % len(ws)].shape[0])).astype(np.float32) for i in range(6)]
    want = [blockwise(x, ws[i % len(ws)], width_of(ws[i % len(ws)])) for i, x in enumerate(xs)]
    got: dict[int, list] = {}

    def work(i: int) -> None:
        with one_blas_thread():
            got[i] = [decode._product(xs[i], ws[i % len(ws)]) for _ in range(8)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for i in range(6):
        assert len(got[i]) == 8 and all(g.tobytes() == want[i].tobytes() for g in got[i]), i


def test_which_products_take_the_helpers(rng, monkeypatch):
    """From 16 rows of float32 on, BLAS held to one thread; not a decoding step's rows, float64, an x
    not C-ordered or BLAS on its own threads (NumPy's matmul there, as before)."""
    used = []
    real = share.Sharing.float_product

    def spy(self, *args):
        used.append(args[0].shape[0])
        return real(self, *args)

    monkeypatch.setattr(share.Sharing, "float_product", spy)
    for module in (decode, fast_quant):  # whatever this machine has
        monkeypatch.setattr(module, "CORES", 2)
    w = rng.standard_normal((96, 80)).astype(np.float32)
    for n in (1, 15, 16, 63, 64, 200):
        x = rng.standard_normal((n, 96)).astype(np.float32)
        got = decode._product(x, w)
        assert got.tobytes() == (x @ w if n < 16 else blockwise(x, w, width_of(w))).tobytes()
    assert used == [16, 63, 64, 200]
    used.clear()
    decode._product(np.ones((20, 96)), w.astype(np.float64))
    decode._product(np.ones((20, 96), np.float32)[:, ::-1], w)  # x not C-ordered
    x = rng.standard_normal((20, 96)).astype(np.float32)
    for odd in (w[::-1], w[:, ::2], np.asfortranarray(w)):  # rows backwards, columns apart, by columns
        assert decode._product(x, odd).tobytes() == blockwise(x, odd, width_of(odd)).tobytes()
    assert used == []
    assert holding_one_blas_thread()


def test_products_outside_one_blas_thread_take_numpys_matmul(rng, monkeypatch):
    used = []
    monkeypatch.setattr(share.Sharing, "float_product", lambda self, *a: used.append(1) or False)
    monkeypatch.setattr(fast_quant, "CORES", 2)
    decode._product(np.ones((20, 32), np.float32), np.ones((32, 32), np.float32))
    assert used  # BLAS held to one thread (this test's fixture): the helpers are asked
    used.clear()
    monkeypatch.setattr(decode, "holding_one_blas_thread", lambda: False)
    assert decode._product(np.ones((20, 32), np.float32), np.ones((32, 32), np.float32))[0, 0] == 32.0
    assert used == []


def test_a_helper_product_that_differs_from_numpy_turns_the_helpers_off(rng, monkeypatch):
    monkeypatch.setattr(decode, "_float_reason", None)

    def wrong(self, x, w, out, columns):
        out[...] = 0.0
        return True

    monkeypatch.setattr(share.Sharing, "float_product", wrong)
    x, w = rng.standard_normal((20, 64)).astype(np.float32), rng.standard_normal((64, 48)).astype(np.float32)
    assert decode._product(x, w).tobytes() == blockwise(x, w, width_of(w)).tobytes()
    assert "differs from NumPy's" in decode.float_reason()
    assert decode._float_helpers(x, w) is None


def test_a_forward_gives_the_same_bits_with_the_helpers_or_without(rng, monkeypatch):
    used = []
    real = share.Sharing.float_product
    monkeypatch.setattr(share.Sharing, "float_product", lambda self, *a: used.append(1) or real(self, *a))
    for module in (decode, fast_quant):
        monkeypatch.setattr(module, "CORES", 2)
    arch, w = llama(rng, dtype=np.float32, d_model=64, d_head=16, d_ff=160, n_layer=2)
    for n in (16, 30, 63):
        ids = rng.integers(0, arch.d_vocab, n)
        with_helpers = forward(arch, w, ids, ops=FAST)
        monkeypatch.setattr(decode, "_float_reason", "off")
        without = forward(arch, w, ids, ops=FAST)
        monkeypatch.setattr(decode, "_float_reason", "")
        assert with_helpers.tobytes() == without.tobytes()
    assert used
