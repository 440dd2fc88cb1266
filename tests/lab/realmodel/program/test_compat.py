"""The NumPy stand-ins a program has for attnlab's array-API, thread and error helpers (program/compat.py):
each gives the numbers of what it replaces, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from attnlab.engine import layers, positions
from attnlab.engine.attention import attend as engine_attend
from attnlab.engine.positions import RoPE
from attnlab.lab.realmodel.program import compat


def same(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_embed_takes_the_tables_rows(rng):
    table = rng.standard_normal((50, 8)).astype(np.float32)
    ids = [3, 0, 49, 3]
    assert same(compat.embed(table, ids), positions.embed(table, ids))
    pairs = np.asarray([[1, 2], [4, 5]])
    assert same(compat.embed(table, pairs), positions.embed(table, pairs))


@pytest.mark.parametrize("convention", ["half", "interleaved"])
def test_rope_angles_and_rotation_are_the_engines(rng, convention):
    rope = RoPE(head_dim=64, base=100000.0, convention=convention)
    at = np.arange(5, 18)
    x = rng.standard_normal((9, 13, 64)).astype(np.float32)
    assert same(compat.angles(rope, at, like=x), rope.angles(at, like=x))
    cos, sin = rope.cos_sin(at, like=x)
    assert cos.dtype == np.float32 and same(rope.rotate(x, cos, sin), rope.apply(x, at))


def _engine_attend(q, k, v, **options):
    return engine_attend(q, k, v, return_trace=False, check_values=False, **options)


def _compat_attend(q, k, v, **options):
    return compat.attend(q, k, v, return_trace=False, check_values=False, **options)


@pytest.mark.parametrize("gqa", [True, False])
@pytest.mark.parametrize("causal", ["bottom_right", None])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attend_groups_query_heads_and_gives_the_engines_bits(rng, gqa, causal, dtype):
    n_head, n_kv = 6, 2 if gqa else 6
    q = rng.standard_normal((n_head, 7, 16)).astype(dtype)
    k = rng.standard_normal((n_kv, 9, 16)).astype(dtype)
    v = rng.standard_normal((n_kv, 9, 16)).astype(dtype)
    options = dict(mask=None, causal=causal, scale=0.25, key_padding_mask=None, enable_gqa=gqa)
    got, want = _compat_attend(q, k, v, **options), _engine_attend(q, k, v, **options)
    assert same(got.output, want.output) and same(got.weights, want.weights)
    assert same(got.fully_masked, want.fully_masked)


def test_attend_with_a_window_padding_and_hooks_gives_the_engines_bits(rng):
    """A sliding window's mask (L, S), key padding (B, 1, S) as Reference.attend passes it, and hooks on
    the scores and the weights that change them: called on (..., H, L, S) in both, the same answers."""
    q = rng.standard_normal((2, 6, 5, 8))
    k, v = rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 5, 8))
    window = np.arange(5)[None, :] > np.arange(5)[:, None] - 3  # the last 3 keys
    padding = np.ones((2, 1, 5), dtype=bool)
    padding[1, 0, 0] = False
    calls = {"compat": [], "engine": []}

    def hooks(who):
        def on_scores(s):
            calls[who].append(("scores", s.shape))
            return s * 0.5

        def on_weights(w):
            calls[who].append(("weights", w.shape))
            return w[..., ::-1]

        return dict(on_scores=on_scores, on_weights=on_weights)

    options = dict(mask=window, causal="bottom_right", scale=0.3, key_padding_mask=padding, enable_gqa=True)
    got = _compat_attend(q, k, v, **options, **hooks("compat"))
    want = _engine_attend(q, k, v, **options, **hooks("engine"))
    assert same(got.output, want.output) and same(got.weights, want.weights)
    assert calls["compat"] == calls["engine"] == [("scores", (2, 6, 5, 5)), ("weights", (2, 6, 5, 5))]


def test_run_does_every_task_in_order_on_this_thread():
    done = []
    compat.run(lambda task, buffers: done.append((task, type(buffers))), [3, 1, 2], 8)
    assert done == [(3, dict), (1, dict), (2, dict)]
    assert compat.CORES == 1


def test_erf_is_the_engines_erf_of_float32(rng):
    x = (rng.standard_normal(1000) * 3).astype(np.float32)
    assert same(compat.erf(x), layers.erf(x))


def test_the_namespace_is_numpy_and_the_decorator_changes_nothing():
    assert compat.namespace(np.zeros(2), None) is np
    assert list(compat.arange(np, 4, np.zeros(1))) == [0, 1, 2, 3]
    assert compat._device(np.zeros(1)) == "cpu"

    def f(x):
        return x + 1

    assert compat.holds_one_blas_thread(f) is f


def test_errors_are_value_errors_at_their_field():
    error = compat.FieldError(("ids", 2), "is outside the vocabulary")
    assert isinstance(error, ValueError) and error.loc == ("ids", 2)
    assert isinstance(compat.Refusal(("top_p",), "not_a_share", 2.0), ValueError)
    with pytest.raises(TypeError, match="float32 arrays only"):
        compat.product(np.zeros((1, 2)), compat.QuantMatrix())
