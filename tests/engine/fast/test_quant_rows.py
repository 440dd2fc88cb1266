"""Several rows' products on blocks (engine/fast/quant/rows.py): each row the one-row product's bits."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.engine.fast import quant
from attnlab.engine.fast.quant import QuantMatrix
from attnlab.engine.fast.quant.rows import WIDTH, product_rows

pytest.importorskip("numba")
if quant.kernel() is None:  # pragma: no cover - a machine where the kernels cannot compile
    pytest.skip(f"the quantized kernels cannot run here: {quant.reason()}", allow_module_level=True)


sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/, for gguf_blocks

from gguf_blocks import ALL, random_blocks, width  # noqa: E402

FORMATS = ALL


def random_matrix(rng, fmt: str, n_out: int, n_in: int) -> QuantMatrix:
    """Random valid blocks of ``fmt``, ``n_in`` rounded up to whole blocks, in two parts side by side."""
    rows = random_blocks(rng, fmt, n_out, width(fmt, n_in))
    third = n_out // 3
    return QuantMatrix(fmt, np.ascontiguousarray(rows[:third]), np.ascontiguousarray(rows[third:]))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_rows", [1, 2, 3, WIDTH, WIDTH + 1, 2 * WIDTH + 3])
def test_each_row_is_the_one_row_products_bits(fmt, n_rows):
    rng = np.random.default_rng(n_rows)
    w = random_matrix(rng, fmt, 97, 128)  # two parts side by side, an odd column count
    x = rng.standard_normal((n_rows, w.n_in)).astype(np.float32)
    together = product_rows(x, w)
    alone = np.concatenate([quant.product(x[t : t + 1], w) for t in range(n_rows)])
    assert together.dtype == np.float32 and together.shape == (n_rows, 97)
    assert together.tobytes() == alone.tobytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_row_does_not_depend_on_the_others(fmt):
    rng = np.random.default_rng(7)
    w = random_matrix(rng, fmt, 64, 96)
    x = rng.standard_normal((5, w.n_in)).astype(np.float32)
    y = x.copy()
    y[[0, 1, 3, 4]] = rng.standard_normal((4, w.n_in)).astype(np.float32)
    assert product_rows(x, w)[2].tobytes() == product_rows(y, w)[2].tobytes()


@pytest.mark.parametrize("fmt", ["Q8_0", "Q4_K", "BF16"])
def test_a_large_product_shared_by_threads_keeps_the_bits(fmt):
    rng = np.random.default_rng(3)
    w = random_matrix(rng, fmt, 8192, 576)  # past the threshold: pieces on our threads
    x = rng.standard_normal((4, w.n_in)).astype(np.float32)
    alone = np.concatenate([quant.product(x[t : t + 1], w) for t in range(4)])
    assert product_rows(x, w).tobytes() == alone.tobytes()


def test_a_wrong_width_is_refused():
    w = random_matrix(np.random.default_rng(0), "Q4_1", 8, 64)
    with pytest.raises(ValueError, match=r"x has shape \(2, 32\); it needs \(T, 64\)"):
        product_rows(np.zeros((2, 32), np.float32), w)


def test_the_shared_products_check_themselves_before_use():
    from attnlab.engine.fast.quant import rows

    assert rows.ready() is True and rows.reason() == ""
