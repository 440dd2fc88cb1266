"""Products shared with spinning helper threads (engine/fast/quant/share.py): the bits of one thread.

Nothing here depends on timing: whether a helper takes pieces, takes none, or
is given up on (``PATIENCE`` = 0 makes the caller do late pieces at once), the
output must be the same bits as the product computed alone.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from attnlab.engine.fast import quant
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.fast.quant import kernels as quant_kernels
from attnlab.engine.fast.quant import share as quant_share

sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/, for gguf_blocks

from gguf_blocks import random_blocks  # noqa: E402


def matrix(rng, fmt: str, rows: tuple[int, ...], n_in: int) -> QuantMatrix:
    if fmt in ("Q4_1", "Q8_0"):  # these tests' first data, kept: random bytes, d and m finite
        per = quant.BLOCK_BYTES[quant.FORMATS[fmt]]
        parts = []
        for n in rows:
            blocks = rng.integers(0, 256, (n, n_in // 32, per), dtype=np.uint8)
            scales = (rng.standard_normal((n, n_in // 32, 2)) * 0.05).astype(np.float16).view(np.uint8)
            blocks[..., :4] = scales.reshape(n, n_in // 32, 4)
            parts.append(blocks.reshape(n, -1))
        return QuantMatrix(fmt, *parts)
    return QuantMatrix(fmt, *(random_blocks(rng, fmt, n, n_in) for n in rows))


def alone(w: QuantMatrix, x: np.ndarray) -> np.ndarray:
    """x (n_in,) or (T, n_in) @ w by one thread: one row's dot products, or the tile kernels for more."""
    rows = np.atleast_2d(x)
    out = np.empty((len(rows), w.n_out), np.float32)
    stride = w.parts[0].shape[1]
    if len(rows) == 1:
        row = rows[0].copy()
        row.flags.writeable = False
        quant_kernels.matvec_parts(w.code, w._at, w._rows, stride, row, out[0])
    else:
        xp, width = quant_kernels.pack(rows)
        quant_kernels.tile_rows(w.code, w._at.ctypes.data, w._rows.ctypes.data, stride, xp.ctypes.data,
                                len(rows), width, w.n_in, 0, w.n_out, out.ctypes.data, w.n_out)  # fmt: skip
    return out.reshape(x.shape[:-1] + (w.n_out,))


def shared(helpers, w: QuantMatrix, x: np.ndarray, out: np.ndarray) -> bool:
    """``helpers.product`` as quant.product calls it (x (T, n_in); it packs more rows in tiles itself)."""
    return helpers.product(w, x, out)


@pytest.fixture(autouse=True)
def _kernels():
    assert quant.kernel(), quant.reason()


SHAPES = [("Q4_1", (576, 192, 192), 576), ("Q4_1", (576,), 1536), ("Q8_0", (49152,), 64),
          ("Q4_1", (1, 63, 65), 32), ("Q4_K", (512, 128, 128), 512), ("Q6_K", (1536,), 768),
          ("Q5_K", (1, 63, 65), 256), ("Q5_0", (576,), 96), ("F16", (300,), 64)]  # fmt: skip


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize(("fmt", "rows", "n_in"), SHAPES)
@pytest.mark.parametrize("n_tokens", [1, 2, 13, 22, 32])
def test_shared_products_are_the_bits_of_one_thread(rng, n_threads, fmt, rows, n_in, n_tokens):
    w = matrix(rng, fmt, rows, n_in)
    helpers = quant_share.sharing(n_threads)
    for _ in range(3):
        x = rng.standard_normal((n_tokens, n_in)).astype(np.float32)
        out = np.full((n_tokens, w.n_out), np.nan, np.float32)
        assert shared(helpers, w, x, out)
        assert out.tobytes() == alone(w, x).tobytes()


def test_a_late_helper_is_given_up_on_and_its_pieces_done_here(rng, monkeypatch):
    monkeypatch.setattr(quant_share, "PATIENCE", 0)  # never wait: every piece a helper holds is redone
    w = matrix(rng, "Q4_1", (3072,), 576)
    helpers = quant_share.sharing(2)
    for n_tokens in range(1, 21):
        x = rng.standard_normal((n_tokens, 576)).astype(np.float32)
        out = np.full((n_tokens, w.n_out), np.nan, np.float32)
        assert shared(helpers, w, x, out)
        assert out.tobytes() == alone(w, x).tobytes()


def test_products_from_many_threads_at_once(rng):
    """One product at a time has the helpers; the others compute alone: all of them right."""
    w = matrix(rng, "Q4_1", (1536, 1536), 576)
    xs = [rng.standard_normal((1 + i % 3 * 5, 576)).astype(np.float32) for i in range(8)]
    want = [alone(w, x) for x in xs]
    got: dict[int, list] = {}

    def work(i: int) -> None:
        got[i] = [quant.product(xs[i], w) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    wrong = [(i, call, len(xs[i]), np.flatnonzero((g != want[i]).any(axis=0))[:8].tolist())
             for i in range(8) for call, g in enumerate(got[i])
             if g.tobytes() != want[i].tobytes()]  # fmt: skip
    assert wrong == []  # (thread, call, rows of x, the first columns that differ)


@pytest.mark.parametrize("patience", [0, 200])
def test_late_helpers_of_one_product_never_touch_the_next(rng, monkeypatch, patience):
    """Three helpers, callers one after another at once, and (patience 0) every late helper's job
    abandoned while it still computes: each helper writes only its own buffer, so a piece it
    finishes late for an old job cannot change another helper's piece of the new one."""
    monkeypatch.setattr(quant_share, "PATIENCE", patience)
    w = matrix(rng, "Q4_1", (1536,), 576)
    helpers = quant_share.sharing(4)
    xs = [rng.standard_normal((n, 576)).astype(np.float32) for n in (1, 2, 1, 3)]
    want = [alone(w, x).tobytes() for x in xs]
    wrong: list[int] = []

    def work(i: int) -> None:
        for _ in range(150):
            out = np.full((len(xs[i]), w.n_out), np.nan, np.float32)
            if helpers.product(w, xs[i], out) and out.tobytes() != want[i]:
                wrong.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert wrong == []


def test_products_use_the_helpers_and_one_thread_needs_none(rng, monkeypatch):
    w = matrix(rng, "Q4_1", (960,), 576)
    x = rng.standard_normal((1, 576)).astype(np.float32)
    used = []
    real = quant_share.Sharing.product

    def spy(self, *args):
        used.append(self)
        return real(self, *args)

    monkeypatch.setattr(quant_share.Sharing, "product", spy)
    monkeypatch.setattr(quant, "CORES", 2)  # whatever this machine has
    assert (x @ w)[0].tobytes() == alone(w, x[0]).tobytes()
    assert used and quant._share_reason == ""
    assert quant_share.sharing(1) is None
