"""Norms, activations, erf and the feed-forward networks."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlab.engine import (
    LayerNormParams,
    MLPParams,
    RMSNormParams,
    SwiGLUParams,
    activate,
    erf,
    gelu,
    layer_norm,
    linear,
    mlp,
    norm,
    relu,
    rms_norm,
    sigmoid,
    silu,
)
from attnlab.engine.layers import erf_float32, erf_series


def test_layer_norm_worked_numbers():
    x = np.array([1.0, 2.0, 3.0, 6.0])  # mean 3, biased variance (4 + 1 + 0 + 9) / 4 = 3.5
    y = layer_norm(x, LayerNormParams(None, None, eps=0.5))  # eps inside the sqrt: sqrt(4) = 2
    assert y.tolist() == [-1.0, -0.5, 0.0, 1.5]
    scaled = layer_norm(x, LayerNormParams(np.full(4, 2.0), np.ones(4), eps=0.5))
    assert scaled.tolist() == [-1.0, 0.0, 1.0, 4.0]


def test_layer_norm_centres_and_scales(rng):
    x = rng.standard_normal((3, 5, 40)) * 7 + 3
    y = layer_norm(x, LayerNormParams(None, None, eps=0.0))
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-14)
    np.testing.assert_allclose(y.var(-1), 1.0, atol=1e-13)


def test_rms_norm_worked_numbers():
    x = np.array([3.0, 4.0])  # mean square 12.5; with eps 3.5: sqrt(16) = 4
    assert rms_norm(x, RMSNormParams(None, eps=3.5)).tolist() == [0.75, 1.0]
    assert rms_norm(x, RMSNormParams(np.array([2.0, -1.0]), eps=3.5)).tolist() == [1.5, -1.0]
    assert norm(x, RMSNormParams(None, eps=3.5)).tolist() == [0.75, 1.0]
    with pytest.raises(ValueError, match="LayerNormParams or RMSNormParams, not dict"):
        norm(x, {})


def test_activations_worked_numbers():
    x = np.array([-2.0, 0.0, 1.5])
    assert relu(x).tolist() == [0.0, 0.0, 1.5]
    np.testing.assert_allclose(sigmoid(x), 1 / (1 + np.exp(-x)), atol=1e-16)
    np.testing.assert_allclose(silu(x), x / (1 + np.exp(-x)), atol=1e-16)
    exact = [0.5 * t * (1 + math.erf(t / math.sqrt(2))) for t in x]
    np.testing.assert_allclose(gelu(x), exact, atol=1e-16)
    tanh = [0.5 * t * (1 + math.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t**3))) for t in x]
    np.testing.assert_allclose(gelu(x, approximate="tanh"), tanh, atol=1e-16)
    big = np.array([-1000.0, 1000.0])  # no overflow warning (warnings are errors here)
    assert silu(big).tolist() == [-0.0, 1000.0] and sigmoid(big).tolist() == [0.0, 1.0]


def test_activation_names():
    x = np.array([-1.0, 2.0])
    assert activate(x, "relu").tolist() == [0.0, 2.0]
    np.testing.assert_array_equal(activate(x, "gelu_tanh"), gelu(x, approximate="tanh"))
    with pytest.raises(ValueError, match=r"activation='swish' is unknown"):
        activate(x, "swish")
    with pytest.raises(ValueError, match=r"approximate='erf'"):
        gelu(x, approximate="erf")


def test_erf_series_is_double_precision_on_array_api_strict():
    import array_api_strict as xs

    x = np.concatenate([np.linspace(-7, 7, 4001), [2.9999999, 3.0, 3.0000001, 0.0, 1e-300, 40.0]])
    ref = np.array([math.erf(t) for t in x])
    got = np.from_dlpack(erf_series(xs.asarray(x)))
    assert np.max(np.abs(got - ref)) <= 2e-15
    np.testing.assert_allclose(erf(x), ref, rtol=0, atol=4.5e-16)  # NumPy goes through SciPy


def test_float32_erf_is_within_8_ulp_on_a_dense_grid():
    x = np.concatenate([np.linspace(-6, 6, 600_001, dtype=np.float32), np.float32([0.0, 1e-30, -1e-30, 4.0])])
    ref = np.array([math.erf(float(t)) for t in x])  # exact, in float64
    got = erf_float32(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    ulp = np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64)
    ulps = np.abs(got.astype(np.float64) - ref) / np.maximum(ulp, np.spacing(np.float32(0)))
    assert ulps.max() <= 8.0, (ulps.max(), x[ulps.argmax()])
    assert np.abs(got.astype(np.float64) - ref).max() <= 5e-7
    np.testing.assert_array_equal(erf(x), got)  # NumPy float32 takes this path
    odd = erf_float32(np.float32([np.inf, -np.inf, 100.0]))
    assert odd.tolist() == [1.0, -1.0, 1.0]
    assert np.isnan(erf_float32(np.float32([np.nan]))).all()
    # chunked evaluation: a 2-D array, not a multiple of the chunk, equals the flat result
    grid = x[: 3 * 70_001].reshape(3, 70_001)
    np.testing.assert_array_equal(erf_float32(grid), got[: 3 * 70_001].reshape(3, 70_001))
    assert erf_float32(np.zeros((0, 4), np.float32)).shape == (0, 4)


def test_numpy_float32_gelu_matches_the_generic_path():
    import array_api_strict as xs

    x = np.linspace(-9, 9, 7200, dtype=np.float32).reshape(40, 180)
    exact = np.array([0.5 * t * (1 + math.erf(t / math.sqrt(2))) for t in x.astype(np.float64).ravel()])
    fast = gelu(x)
    generic = np.from_dlpack(gelu(xs.asarray(x)))  # erf_series, float32 arithmetic
    assert fast.dtype == generic.dtype == np.float32
    np.testing.assert_allclose(fast.ravel(), exact, rtol=0, atol=1e-6)
    # the generic float32 path cancels in 1 + erf near x = -4; the fast one is the closer of the two
    np.testing.assert_allclose(fast, generic, rtol=0, atol=2e-6)
    assert np.abs(fast.ravel() - exact).max() <= np.abs(generic.ravel() - exact).max()


def test_generic_gelu_matches_numpy_gelu():
    import array_api_strict as xs

    x = np.linspace(-9, 9, 721)
    np.testing.assert_allclose(np.from_dlpack(gelu(xs.asarray(x))), gelu(x), rtol=0, atol=2e-15)


def test_linear_folds_leading_axes(rng):
    x, w, b = rng.standard_normal((2, 3, 5, 4)), rng.standard_normal((4, 6)), rng.standard_normal(6)
    np.testing.assert_allclose(linear(x, w, b), x @ w + b, atol=1e-14)
    assert linear(x[0, 0], w).shape == (5, 6)


def test_mlp_and_its_trace(rng):
    x = rng.standard_normal((2, 5, 4))
    p = MLPParams(
        w_1=rng.standard_normal((4, 9)), w_2=rng.standard_normal((9, 4)), b_1=np.ones(9), activation="relu"
    )
    out, trace = mlp(x, p, return_trace=True)
    np.testing.assert_allclose(out, np.maximum(x @ p.w_1 + 1, 0) @ p.w_2, atol=1e-13)
    assert trace.shapes() == {"hidden": (2, 5, 9), "activated": (2, 5, 9), "output": (2, 5, 4)}
    _, none = mlp(x, p)
    assert none is None


def test_swiglu_and_its_trace(rng):
    x = rng.standard_normal((5, 4))
    p = SwiGLUParams(
        w_gate=rng.standard_normal((4, 7)),
        w_up=rng.standard_normal((4, 7)),
        w_down=rng.standard_normal((7, 4)),
    )
    out, trace = mlp(x, p, return_trace=True)
    gate = x @ p.w_gate
    np.testing.assert_allclose(out, (gate / (1 + np.exp(-gate)) * (x @ p.w_up)) @ p.w_down, atol=1e-13)
    assert list(trace) == ["hidden", "up", "activated", "output"]


def test_wrong_weight_shapes_name_them(rng):
    with pytest.raises(ValueError, match=r"w_1 has shape \(5, 9\); it must be \(in, out\) with in = 4"):
        mlp(np.ones((2, 4)), MLPParams(w_1=np.ones((5, 9)), w_2=np.ones((9, 4))))
    with pytest.raises(ValueError, match=r"w_down has shape \(6, 4\)"):
        mlp(np.ones((2, 4)), SwiGLUParams(np.ones((4, 7)), np.ones((4, 7)), np.ones((6, 4))))
    with pytest.raises(ValueError, match="MLPParams or SwiGLUParams"):
        mlp(np.ones((2, 4)), None)


def test_layers_on_every_namespace(xp, to_xp, to_np, rng):
    x, w, b = rng.standard_normal((3, 8)), rng.standard_normal(8), rng.standard_normal(8)
    for f, p in ((layer_norm, LayerNormParams(w, b)), (rms_norm, RMSNormParams(w))):
        pp = type(p)(**{k: to_xp(v) if isinstance(v, np.ndarray) else v for k, v in vars(p).items()})
        np.testing.assert_allclose(to_np(f(to_xp(x), pp)), f(x, p), rtol=0, atol=1e-15)
    for f in (gelu, relu, silu, sigmoid):
        np.testing.assert_allclose(to_np(f(to_xp(x))), f(x), rtol=0, atol=2e-15)
