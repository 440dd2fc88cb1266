"""Products on GGUF's stored blocks, every format (engine/fast/quant/): exact values, fixed order."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.engine.fast import quant
from attnlab.engine.fast.quant import QuantMatrix, kernels

sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/, for busy_runs and gguf_blocks

from busy_runs import assert_same_bits, results_here, results_in_processes  # noqa: E402
from gguf_blocks import ALL, gguf_values, random_blocks, width  # noqa: E402

gguf_quants = pytest.importorskip("gguf.quants", reason="the reference dequantizer is gguf's")
FORMATS = ALL


def every_q4_1_layout() -> np.ndarray:
    """Q4_1 rows where every nibble value 0..15 sits at every weight position 0..31, with varied d, m."""
    rows = []
    for shift in range(16):
        q = (np.arange(32) + shift) % 16  # weight j has quant (j + shift) % 16
        packed = (q[:16] | (q[16:] << 4)).astype(np.uint8)  # low nibble: weight j; high: weight j + 16
        for d, m in ((0.5, -1.25), (-0.03125, 7.0), (0.0, 0.0), (0.0, -2.5), (1e-3, 1e-3)):
            head = np.array([d, m], np.float16).view(np.uint8)
            rows.append(np.concatenate([head, packed]))
    return np.stack(rows)


def fixed_order_dot(values: np.ndarray, x: np.ndarray) -> np.float32:
    """quant.ir's documented order, restated: two 16-lane FMA chains over the blocks, then a fixed tree.

    An FMA is the exact product plus the sum, rounded once to float32: in float64 the
    product of two float32 is exact, and the sum's one rounding never lands on a
    float32 tie in this test's data (fixed seed: checked once, the same ever after).
    """
    lo, hi = np.zeros(16, np.float32), np.zeros(16, np.float32)
    for b in range(values.size // 32):
        w, xb = values[32 * b : 32 * b + 32].astype(np.float64), x[32 * b : 32 * b + 32].astype(np.float64)
        lo = (w[:16] * xb[:16] + lo).astype(np.float32)
        hi = (w[16:] * xb[16:] + hi).astype(np.float32)
    v = lo + hi
    while v.size > 1:
        v = v[: v.size // 2] + v[v.size // 2 :]
    return v[0]


def test_the_kernels_build_here():
    """numba is a dependency and NumPy's wheel ships the sgemm they call: no silent fallback."""
    assert quant.kernel() is True, quant.reason()
    assert quant.reason() == ""


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("rows", "n_in"), [(1, 32), (3, 96), (37, 64), (129, 576), (5, 2048)])
def test_values_equal_gguf_value_by_value(rng, fmt, rows, n_in):
    n_in = width(fmt, n_in)
    blocks = random_blocks(rng, fmt, rows, n_in)
    w = QuantMatrix(fmt, blocks)
    expected = gguf_values(fmt, blocks)
    assert_same_bits(w.values(), expected.T, f"{fmt} values, {rows} x {n_in}")
    assert_same_bits(quant.reference_values(fmt, blocks), expected, "the self-check's NumPy restatement")
    picked = [rows - 1, 0, rows // 2, 0]
    assert_same_bits(w.stored_rows(picked), expected[picked], "rows looked up (an embedding)")


def test_every_q4_1_block_layout_and_d_zero():
    blocks = every_q4_1_layout()
    w = QuantMatrix("Q4_1", blocks)
    expected = gguf_values("Q4_1", blocks)
    assert_same_bits(w.values(), expected.T, "every nibble at every position")
    assert np.all(expected[2::5] == 0.0) and np.all(expected[3::5] == np.float32(-2.5))  # d = 0 blocks


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_tokens", [1, 5, 40])
def test_products_multiply_exactly_those_values(rng, fmt, n_tokens):
    """A one-hot row picks out one weight exactly: both product kinds use gguf's values, nothing else.

    (Equal as numbers: a weight of -0.0 comes out of a sum as +0.0.)
    """
    n_in = width(fmt, 96)
    blocks = random_blocks(rng, fmt, 37, n_in)
    w = QuantMatrix(fmt, blocks[:20], blocks[20:])  # two parts side by side, odd widths
    expected = gguf_values(fmt, blocks).T  # (n_in, n_out)
    for start in range(0, n_in, n_tokens):
        rows = np.eye(n_in, dtype=np.float32)[start : start + n_tokens]
        got = rows @ w if len(rows) > 1 else (rows[0] @ w)[None]
        np.testing.assert_array_equal(got, expected[start : start + n_tokens], f"one-hot rows {start}..")


@pytest.mark.parametrize("fmt", FORMATS)
def test_one_row_products_sum_in_the_documented_order(rng, fmt):
    n_in = width(fmt, 576)
    blocks = random_blocks(rng, fmt, 9, n_in, scale=0.5)
    values = gguf_values(fmt, blocks)
    x = rng.standard_normal(n_in).astype(np.float32)
    got = x @ QuantMatrix(fmt, blocks)
    want = np.array([fixed_order_dot(v, x) for v in values], np.float32)
    assert_same_bits(got, want, "one-row products vs the documented order")


def chain_dots(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A prompt's documented order, restated: each output one FMA chain over k in order, from 0.

    values (n_out, n_in), x (T, n_in); each FMA made in float64 (exact product) and rounded once to
    float32 (as fixed_order_dot: no tie lands in this test's data).
    """
    acc = np.zeros((x.shape[0], values.shape[0]), np.float32)
    for k in range(x.shape[1]):
        acc = (acc + np.outer(x[:, k].astype(np.float64), values[:, k].astype(np.float64))).astype(np.float32)
    return acc


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_tokens", [2, 3, 7, 8, 9, 15, 22, 32, 33, 70])
def test_a_prompts_products_sum_in_the_documented_order(rng, fmt, n_tokens, monkeypatch):
    """Two rows of x or more (tiles 8, 16, 24, 32 wide, one or several; helpers or workers): every
    output is one FMA chain over k in order, so a token's outputs never depend on the other tokens."""
    n_in = width(fmt, 192)
    blocks = random_blocks(rng, fmt, 70, n_in, scale=0.5)
    w = QuantMatrix(fmt, blocks[:50], blocks[50:])
    x = rng.standard_normal((n_tokens, n_in)).astype(np.float32)
    want = chain_dots(gguf_values(fmt, blocks), x)
    assert_same_bits(x @ w, want, f"{n_tokens} rows vs the documented order")
    assert_same_bits(x[:2] @ w, want[:2], "the first two rows alone")
    monkeypatch.setattr(quant, "CORES", 1)  # and alone, without the helpers or workers
    assert_same_bits(x @ w, want, f"{n_tokens} rows on one thread")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n_tokens", [1, 2, 17, 64])
def test_products_agree_with_float64(rng, fmt, n_tokens):
    """The products equal a float64 product on gguf's values to float32 summation's bound, and a
    float32 BLAS product on those values to the sum of both bounds."""
    n_in = width(fmt, 320)
    blocks = random_blocks(rng, fmt, 1043, n_in)  # odd row count; pieces of unequal parts
    w = QuantMatrix(fmt, blocks[:1000], blocks[1000:])
    x = rng.standard_normal((n_tokens, n_in)).astype(np.float32)
    values32 = gguf_values(fmt, blocks).T
    values = values32.astype(np.float64)
    exact = x.astype(np.float64) @ values
    got = x @ w
    assert got.shape == (n_tokens, 1043) and got.dtype == np.float32
    # a float32 sum of n terms is within n * eps * sum |terms| of the exact sum, in any order
    bound = n_in * np.finfo(np.float32).eps * (np.abs(x.astype(np.float64)) @ np.abs(values))
    assert np.all(np.abs(got - exact) <= bound)
    assert np.all(np.abs(got.astype(np.float64) - (x @ values32)) <= 2 * bound)  # float32 reference


@pytest.mark.parametrize(("fmt", "n_in"), [("Q8_0", 64), ("Q4_K", 256), ("Q6_K", 256), ("F16", 64)])
def test_the_output_layer_size_is_shared_in_fixed_slices(rng, monkeypatch, fmt, n_in):
    """Whatever our thread count, a big one-row product and a prompt's (fixed pieces) are the same bits."""
    blocks = random_blocks(rng, fmt, 20000, n_in)
    w = QuantMatrix(fmt, blocks)
    x = rng.standard_normal((3, n_in)).astype(np.float32)
    before = (x[:1] @ w, x @ w)
    for cores in (1, 3):
        monkeypatch.setattr(quant, "CORES", cores)
        monkeypatch.setattr(quant, "_THREAD_WEIGHTS", 0)  # share even small products
        assert_same_bits(x[:1] @ w, before[0], f"one row on {cores} threads")
        assert_same_bits(x @ w, before[1], f"three rows on {cores} threads")


PROGRAM = """
import numpy as np
from attnlab.engine.fast import quant
from attnlab.engine.fast.quant import reference

def results():
    assert quant.kernel(), quant.reason()
    rng = np.random.default_rng(7)
    out = {}
    for fmt, per in (("Q4_1", 20), ("Q8_0", 34)):
        blocks = rng.integers(0, 256, (5000, 18 * per), dtype=np.uint8)
        scales = (rng.standard_normal((5000, 18, 2)) * 0.05).astype(np.float16).view(np.uint8)
        blocks.reshape(5000, 18, per)[..., :4] = scales.reshape(5000, 18, 4)
        w = quant.QuantMatrix(fmt, blocks[:3000], blocks[3000:])
        x = rng.standard_normal((40, 576)).astype(np.float32)
        for n in (1, 2, 40):
            out[f"{fmt}-{n}"] = x[:n] @ w
    for fmt in ("F16", "BF16", "Q4_0", "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"):
        n_blocks = 3 if fmt.endswith("_K") else 24
        blocks = reference.valid_blocks(rng, fmt, 3000, n_blocks)
        w = quant.QuantMatrix(fmt, blocks[:2000], blocks[2000:])
        x = rng.standard_normal((40, w.n_in)).astype(np.float32)
        for n in (1, 2, 40):
            out[f"{fmt}-{n}"] = x[:n] @ w
    return out
"""


def test_same_bits_whatever_the_thread_counts(tmp_path):
    """NUMBA_NUM_THREADS and OPENBLAS_NUM_THREADS 1 or 2, a busy core beside: the same bits as here."""
    runs = results_in_processes(PROGRAM, tmp_path)
    here = results_here(PROGRAM)
    for name, ours in here.items():
        for n, results in runs.items():
            assert_same_bits(results[name], ours, f"{name}: thread counts {n} vs this process")


def test_bad_matrices_are_refused(rng):
    blocks = random_blocks(rng, "Q4_1", 4, 64)
    with pytest.raises(ValueError, match="unknown block format"):
        QuantMatrix("Q3_K", blocks)  # a K-quant the products cannot read: refused by name
    with pytest.raises(ValueError, match="whole blocks"):
        QuantMatrix("Q4_1", blocks[:, :30])
    with pytest.raises(ValueError, match="one format"):
        other = QuantMatrix("Q8_0", random_blocks(rng, "Q8_0", 2, 64))
        QuantMatrix.side_by_side(QuantMatrix("Q4_1", blocks), other)
    with pytest.raises(ValueError, match="needs"):
        np.ones((2, 32), np.float32) @ QuantMatrix("Q4_1", blocks)
    with pytest.raises(IndexError):
        QuantMatrix("Q4_1", blocks).stored_rows([4])


def test_blocks_are_used_in_place_read_only(rng):
    blocks = random_blocks(rng, "Q4_1", 4, 64)
    w = QuantMatrix("Q4_1", blocks)
    assert np.shares_memory(w.parts[0], blocks) and not w.parts[0].flags.writeable
    assert blocks.flags.writeable  # the caller's array is left as it was
    assert (w.shape, w.dtype, w.nbytes) == ((64, 4), np.float32, blocks.nbytes)


def test_with_values_swaps_blocks_for_their_values(rng):
    from attnlab.engine.layers import SwiGLUParams

    blocks = [QuantMatrix("Q4_1", random_blocks(rng, "Q4_1", n, 64)) for n in (8, 8)]
    down = rng.standard_normal((8, 64)).astype(np.float32)
    params = SwiGLUParams(blocks[0], blocks[1], down)
    swapped = quant.with_values(params)
    assert_same_bits(swapped.w_gate, blocks[0].values(), "w_gate")
    assert swapped.w_down is down
    assert quant.with_values(swapped) is swapped  # nothing left to swap


@pytest.mark.parametrize("n_tokens", [2, 8, 9, 22, 32, 33, 64, 70])
def test_a_prompt_is_packed_in_tiles_of_32_tokens(rng, n_tokens):
    """kernels.pack: tiles of 32 tokens, each k-major, the last zero-padded to 8, 16, 24 or 32."""

    x = rng.standard_normal((n_tokens, 64)).astype(np.float32)
    packed, width = kernels.pack(x)
    tiles = []
    for start in range(0, n_tokens, 32):
        rows = x[start : start + 32]
        wide = 32 if start + 32 < n_tokens else width
        tile = np.zeros((64, wide), np.float32)
        tile[:, : len(rows)] = rows.T
        tiles.append(tile.ravel())
    assert width == -(-(n_tokens - 32 * ((n_tokens - 1) // 32)) // 8) * 8
    assert_same_bits(packed, np.concatenate(tiles), f"{n_tokens} tokens packed")
    reused = np.full(packed.size + 7, np.nan, np.float32)  # the helpers' buffer holds an old job's x
    kernels.pack_into(x, reused, width)
    assert_same_bits(reused[: packed.size], packed, "packed into a used buffer (the padding zeroed)")


@pytest.mark.parametrize("fmt", ["Q3_K", "Q2_K", "IQ2_XS", "Q8_1", "q4_k", 7])
def test_a_format_the_products_cannot_read_is_refused_by_name(rng, fmt):
    from attnlab.engine.fast.formats import UnknownFormat

    with pytest.raises(UnknownFormat) as refused:
        QuantMatrix(fmt, random_blocks(rng, "Q8_0", 2, 64))
    assert refused.value.fmt == fmt and refused.value.known == FORMATS
    assert repr(fmt) in str(refused.value) and "Q4_K" in str(refused.value)
    with pytest.raises(UnknownFormat):
        quant.reference_values(fmt, random_blocks(rng, "Q8_0", 2, 64))


@pytest.mark.parametrize("fmt", ["F16", "BF16"])
def test_every_finite_16_bit_number_widens_exactly(fmt):
    """All 2^16 bit patterns but infinities and NaNs: the product reads each as gguf widens it."""
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    as_f32 = bits.view(np.float16).astype(np.float32) if fmt == "F16" else (
        (bits.astype(np.uint32) << np.uint32(16)).view(np.float32))
    bits = bits[np.isfinite(as_f32)]
    bits = bits[: len(bits) // 32 * 32]
    rows = bits.view(np.uint8).reshape(-1, 64)  # 32 numbers a row
    w = QuantMatrix(fmt, rows)
    expected = gguf_values(fmt, rows)
    assert_same_bits(w.stored_rows(np.arange(len(rows))), expected, f"every finite {fmt}")
    assert_same_bits(expected.ravel(), (bits.view(np.float16).astype(np.float32) if fmt == "F16" else
                                        (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)),
                     "gguf widens exactly")  # fmt: skip
    x = np.eye(32, dtype=np.float32)[[0, 7, 31]]
    np.testing.assert_array_equal(x @ w, expected.T[[0, 7, 31]])  # the products read the same numbers


@pytest.mark.parametrize("fmt", ["Q4_K", "Q5_K", "Q6_K"])
def test_every_scale_byte_at_every_scale_position(rng, fmt):
    """K-quants pack 6-bit scales and mins (Q6_K: int8 scales): each byte value 0..255 at each position."""
    n_in = 256
    blocks = random_blocks(rng, fmt, 256, n_in, scale=0.5)
    first, count = (192, 16) if fmt == "Q6_K" else (4, 12)
    for k in range(256):
        blocks[k, first : first + count] = (k + 37 * np.arange(count)) % 256
    w = QuantMatrix(fmt, blocks)
    expected = gguf_values(fmt, blocks)
    assert np.all(np.isfinite(expected))
    assert_same_bits(w.values(), expected.T, f"{fmt}: every scale byte")
    assert_same_bits(quant.reference_values(fmt, blocks), expected, "the NumPy restatement")


@pytest.mark.parametrize("fmt", FORMATS)
def test_side_by_side_values_and_rows_for_every_format(rng, fmt):
    n_in = width(fmt, 64)
    a, b = (QuantMatrix(fmt, random_blocks(rng, fmt, n, n_in)) for n in (5, 9))
    both = QuantMatrix.side_by_side(a, b)
    assert both.shape == (n_in, 14) and both.fmt == fmt and len(both.parts) == 2
    assert_same_bits(both.values(), np.concatenate([a.values(), b.values()], axis=1), "side by side")
    assert_same_bits(both.stored_rows([13, 0, 5]), both.values().T[[13, 0, 5]], "rows across the parts")
    x = rng.standard_normal((3, n_in)).astype(np.float32)
    assert_same_bits(x @ both, np.concatenate([x @ a, x @ b], axis=1), "products side by side")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_engines_random_blocks_are_valid(fmt):
    """reference.valid_blocks (the self-check's and the benchmark's data): finite values, the specials."""
    from attnlab.engine.fast.quant import reference

    blocks = reference.valid_blocks(np.random.default_rng(3), fmt, 4, 3)
    values = gguf_values(fmt, blocks)
    assert blocks.shape == (4, 3 * quant.BLOCK_BYTES[quant.FORMATS[fmt]]) and np.all(np.isfinite(values))
    assert_same_bits(reference.values(fmt, blocks), values, "the restatement on them")
    if fmt not in ("F32", "F16", "BF16"):
        per_block = values.reshape(4, 3, -1)
        assert np.all(per_block[0, 0] == 0.0) and np.any(per_block[1, 1] != 0.0)
