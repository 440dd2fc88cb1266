"""The tiled pass's trace (``tiled_steps``): the same bits as ``tiled_attention``, every tile's m, l and O,
and the final O equal to full attention within 1e-15 of the largest value in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlab.engine.attention import attention
from attnlab.engine.tiled import tiled_attention, tiled_steps

SETTINGS = settings(max_examples=40, deadline=None)


def _qkv(seed: int, n: int, d: int, magnitude: float = 1.0):
    q, k, v = np.random.default_rng(seed).standard_normal((3, n, d))
    return q * magnitude, k * magnitude, v


@SETTINGS
@given(
    st.integers(0, 2**32 - 1), st.integers(1, 64), st.integers(1, 8), st.integers(1, 70), st.integers(1, 70)
)
def test_the_trace_is_the_same_pass_and_its_last_step_divides_the_output(seed, n, d, block_q, block_k):
    q, k, v = _qkv(seed, n, d)
    result, steps = tiled_steps(q, k, v, block_q=block_q, block_k=block_k)
    plain = tiled_attention(q, k, v, block_q=block_q, block_k=block_k)
    np.testing.assert_array_equal(result.output, plain.output)  # bit for bit: one schedule
    per_block = math.ceil(n / min(block_k, n))
    assert len(steps) == math.ceil(n / block_q) * per_block
    for i0 in range(0, n, block_q):
        mine = [s for s in steps if s.q_start == i0]
        assert [(s.k_start, s.k_stop) for s in mine] == [
            (j0, min(n, j0 + min(block_k, n))) for j0 in range(0, n, min(block_k, n))
        ]
        last = mine[-1]
        np.testing.assert_array_equal(result.output[i0 : last.q_stop], last.acc / last.l[:, None])
        for a, b in zip(mine, mine[1:]):
            assert np.all(b.m >= a.m)  # the running maximum never falls
        s = (q[i0 : last.q_stop] @ k.T) * (1.0 / math.sqrt(d))
        # the last m is the row's largest score (BLAS may round one product of another shape differently)
        np.testing.assert_allclose(last.m, s.max(axis=1), rtol=1e-15, atol=1e-300)


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 64), st.integers(1, 64))
def test_flash_equals_full_attention_within_1e_15_of_the_largest_value(seed, n, tile):
    q, k, v = _qkv(seed, n, 4)
    result, _ = tiled_steps(q, k, v, block_q=tile, block_k=tile)
    full = attention(q, k, v).output
    assert np.max(np.abs(result.output - full)) / np.max(np.abs(v)) <= 1e-15


def test_each_step_is_the_online_softmax_of_the_keys_so_far():
    q, k, v = _qkv(3, 10, 4)
    _, steps = tiled_steps(q, k, v, block_q=10, block_k=3)
    for s in steps:
        scores = (q @ k[: s.k_stop].T) / 2.0  # every key up to this tile, d = 4
        m = scores.max(axis=1)
        np.testing.assert_allclose(s.m, m, rtol=1e-15, atol=0)
        np.testing.assert_allclose(s.l, np.exp(scores - m[:, None]).sum(axis=1), rtol=1e-14)
        partial = attention(q, k[: s.k_stop], v[: s.k_stop]).output  # attention over the keys seen so far
        np.testing.assert_allclose(s.acc / s.l[:, None], partial, rtol=0, atol=1e-14)


@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
def test_tiles_a_causal_mask_skips_have_no_step(causal):
    q, k, v = _qkv(0, 8, 2)
    _, steps = tiled_steps(q, k, v, block_q=4, block_k=4, causal=causal)
    assert [(s.q_start, s.k_start) for s in steps] == [(0, 0), (4, 0), (4, 4)]
