"""Norms, activations and the position-wise feed-forward networks.

Weights are pre-transposed, paper style: ``h = x @ W_1 + b_1`` with ``W_1`` of
shape (d_model, d_ff). (PyTorch ``nn.Linear`` stores (out, in); a loader
transposes once.) Every function works on the last axis and keeps the leading
ones, on any array-API namespace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlab.engine._arrays import Array, namespace, shape_of
from attnlab.engine.errors import FieldError
from attnlab.engine.threads import holds_one_blas_thread
from attnlab.engine.trace import TraceBuilder

ACTIVATIONS = ("gelu", "gelu_tanh", "relu", "silu")


@dataclass(frozen=True, eq=False)
class LayerNormParams:
    """LayerNorm: ``weight`` and ``bias`` (d_model,) or None; ``eps`` inside the sqrt."""

    weight: Array | None
    bias: Array | None
    eps: float = 1e-5


@dataclass(frozen=True, eq=False)
class RMSNormParams:
    """RMSNorm (Llama): ``weight`` (d_model,) or None; ``eps`` inside the sqrt."""

    weight: Array | None
    eps: float = 1e-6


@dataclass(frozen=True, eq=False)
class MLPParams:
    """Feed-forward ``act(x @ w_1 + b_1) @ w_2 + b_2``.

    ``w_1`` (d_model, d_ff), ``w_2`` (d_ff, d_model), biases (d_ff,) and
    (d_model,) or None; ``activation`` one of ``ACTIVATIONS`` ("gelu" is the
    erf form of BERT and PyTorch, "gelu_tanh" the GPT-2 approximation).
    """

    w_1: Array
    w_2: Array
    b_1: Array | None = None
    b_2: Array | None = None
    activation: str = "gelu"


@dataclass(frozen=True, eq=False)
class SwiGLUParams:
    """Gated feed-forward (Llama): ``(silu(x @ w_gate) * (x @ w_up)) @ w_down``.

    ``w_gate`` and ``w_up`` (d_model, d_ff), ``w_down`` (d_ff, d_model).
    """

    w_gate: Array
    w_up: Array
    w_down: Array


@holds_one_blas_thread
def linear(x: Array, w: Array, b: Array | None = None) -> Array:
    """Return ``x @ w + b`` for x (..., d_in), w (d_in, d_out), b (d_out,) or None.

    The leading axes are folded into one before the product: NumPy's stacked
    (3-D @ 2-D) matmul runs several times slower than one 2-D GEMM on the same data.
    """
    xp = namespace(x)
    xs, ws = shape_of(x), shape_of(w)
    if len(xs) > 2:
        y = xp.reshape(xp.reshape(x, (-1, xs[-1])) @ w, xs[:-1] + (ws[-1],))
    else:
        y = x @ w
    return y if b is None else y + b


def layer_norm(x: Array, params: LayerNormParams) -> Array:
    """Normalise the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias``.

    The variance is biased (divides by d_model), as in ``torch.nn.LayerNorm``.
    """
    xp = namespace(x)
    mean = xp.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    var = xp.mean(centred * centred, axis=-1, keepdims=True)
    y = centred / xp.sqrt(var + params.eps)
    if params.weight is not None:
        y = y * params.weight
    if params.bias is not None:
        y = y + params.bias
    return y


def rms_norm(x: Array, params: RMSNormParams) -> Array:
    """Scale the last axis to unit root-mean-square: ``x / sqrt(mean(x^2) + eps) * weight``."""
    xp = namespace(x)
    y = x / xp.sqrt(xp.mean(x * x, axis=-1, keepdims=True) + params.eps)
    return y if params.weight is None else y * params.weight


def norm(x: Array, params: LayerNormParams | RMSNormParams) -> Array:
    """Apply the norm that ``params`` describes."""
    if isinstance(params, LayerNormParams):
        return layer_norm(x, params)
    if isinstance(params, RMSNormParams):
        return rms_norm(x, params)
    raise FieldError("params", f"a norm needs LayerNormParams or RMSNormParams, not {type(params).__name__}")


def relu(x: Array) -> Array:
    """Return ``max(x, 0)``."""
    xp = namespace(x)
    return xp.where(x > 0, x, 0.0)


def sigmoid(x: Array) -> Array:
    """Return ``1 / (1 + exp(-x))`` without overflowing for large negative x."""
    xp = namespace(x)
    e = xp.exp(-xp.abs(x))  # in (0, 1]: never overflows
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def silu(x: Array) -> Array:
    """Return ``x * sigmoid(x)`` (also called swish)."""
    return x * sigmoid(x)


def gelu(x: Array, approximate: str = "none") -> Array:
    """Return ``x * Phi(x)``: ``approximate="none"`` uses erf, ``"tanh"`` the GPT-2 formula.

    erf: ``0.5 x (1 + erf(x / sqrt 2))``;
    tanh: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``.
    """
    xp = namespace(x)
    if approximate == "none":
        if type(x) is np.ndarray:  # in place: 3 fewer (..., d_ff) temporaries, same numbers
            e = erf(x / math.sqrt(2.0))
            e += 1.0
            e *= x
            e *= 0.5  # exact, so (1 + erf) * x * 0.5 == 0.5 * x * (1 + erf) bit for bit
            return e
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    if approximate == "tanh":
        return 0.5 * x * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    raise FieldError("approximate", f"approximate={approximate!r}; use 'none' (erf) or 'tanh'")


def activate(x: Array, activation: str) -> Array:
    """Apply the activation named ``activation`` (one of ``ACTIVATIONS``)."""
    if activation == "gelu":
        return gelu(x)
    if activation == "gelu_tanh":
        return gelu(x, approximate="tanh")
    if activation == "relu":
        return relu(x)
    if activation == "silu":
        return silu(x)
    raise FieldError("activation", f"activation={activation!r} is unknown; use one of {ACTIVATIONS}")


def erf(x: Array) -> Array:
    """Return the error function of ``x``, using the namespace's own erf when it has one.

    NumPy float32 uses :func:`erf_float32` (vectorised, a few ulp); other NumPy
    dtypes ``scipy.special.erf`` when SciPy is installed; namespaces without
    an erf (the array API standard has none) use :func:`erf_series`.
    """
    if type(x) is np.ndarray and x.dtype == np.float32:
        return erf_float32(x)
    xp = namespace(x)
    if hasattr(xp, "erf"):  # torch
        return xp.erf(x)
    if xp.__name__.endswith("numpy"):
        try:
            from scipy.special import erf as scipy_erf
        except ImportError:  # pragma: no cover - SciPy is installed here
            return erf_series(x)
        return scipy_erf(x)
    return erf_series(x)


# Eigen's / XLA's float32 erf: erf(x) ~ x P(x^2) / Q(x^2) on [-4, 4] (erf(4) rounds
# to 1 in float32), highest power first. Within 8 ulp of the exact value (tested).
_ERF32_P = np.array(
    [
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    ],
    dtype=np.float32,
)
_ERF32_Q = np.array(
    [
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    ],
    dtype=np.float32,
)


_ERF32_CHUNK = 65536  # elements per pass: the four float32 work arrays (1 MiB) stay in L2


def erf_float32(x: np.ndarray) -> np.ndarray:
    """Return erf(x) for a NumPy float32 array, within 8 ulp, from NumPy ufuncs only.

    A rational approximation evaluated in place (Horner), chunk by chunk so that
    its dozen passes run over cache-resident data: faster than
    ``scipy.special.erf``'s scalar loop, which dominated BERT-style GELU layers
    (docs/performance.md).
    NaN stays NaN; +-inf give +-1.
    """
    flat = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    out = np.empty_like(flat)
    size = min(_ERF32_CHUNK, flat.size)
    c, c2, q = np.empty(size, np.float32), np.empty(size, np.float32), np.empty(size, np.float32)
    for start in range(0, flat.size, _ERF32_CHUNK):
        stop = min(start + _ERF32_CHUNK, flat.size)
        n = stop - start
        cn, x2, qn, p = c[:n], c2[:n], q[:n], out[start:stop]
        np.clip(flat[start:stop], np.float32(-4.0), np.float32(4.0), out=cn)
        np.multiply(cn, cn, out=x2)
        np.multiply(x2, _ERF32_P[0], out=p)
        p += _ERF32_P[1]
        for a in _ERF32_P[2:]:
            p *= x2
            p += a
        np.multiply(x2, _ERF32_Q[0], out=qn)
        qn += _ERF32_Q[1]
        for b in _ERF32_Q[2:]:
            qn *= x2
            qn += b
        p *= cn
        p /= qn
    return out.reshape(np.shape(x))


_SERIES_TERMS = 60  # the series for |x| <= 3 has converged to < 1e-17 relative by then
_FRACTION_TERMS = 60  # the continued fraction for x >= 3 likewise


def erf_series(x: Array) -> Array:
    """Return erf(x) to double precision using array-API operations only.

    |x| <= 3: ``erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (2n+1)!!`` (all
    terms positive: no cancellation). |x| > 3: ``erf = 1 - erfc`` with erfc from
    its continued fraction ``exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))``.
    """
    xp = namespace(x)
    a = xp.abs(x)
    small = xp.where(a <= 3.0, a, 0.0)
    term, total = small, small
    for n in range(1, _SERIES_TERMS):
        term = term * (2.0 * small * small) / (2 * n + 1)
        total = total + term
    near = total * (2.0 / math.sqrt(math.pi)) * xp.exp(-small * small)
    big = xp.where(a > 3.0, a, 3.0)
    frac = big
    for n in range(_FRACTION_TERMS, 0, -1):
        frac = big + (n / 2.0) / frac
    far = 1.0 - xp.exp(-big * big) / (math.sqrt(math.pi) * frac)
    value = xp.where(a <= 3.0, near, far)
    return xp.where(x < 0, -value, value)


@holds_one_blas_thread
def mlp(x: Array, params: MLPParams | SwiGLUParams, *, return_trace: bool = False):
    """Apply the feed-forward network ``params`` describes; return ``(output, trace)``.

    Trace names: ``hidden`` (first projection, before the activation; for
    SwiGLU the gate projection), ``up`` (SwiGLU only), ``activated`` (the
    d_ff-wide input of the last projection), ``output``.
    """
    if isinstance(params, SwiGLUParams):
        return swiglu(x, params, return_trace=return_trace)
    if not isinstance(params, MLPParams):
        raise FieldError("params", f"mlp needs MLPParams or SwiGLUParams, not {type(params).__name__}")
    _check_linear(x, params.w_1, "w_1")
    steps = TraceBuilder(enabled=return_trace)
    hidden = linear(x, params.w_1, params.b_1)  # (..., L, d_ff)
    steps.add("hidden", hidden)
    activated = activate(hidden, params.activation)
    steps.add("activated", activated)
    _check_linear(activated, params.w_2, "w_2")
    out = linear(activated, params.w_2, params.b_2)  # (..., L, d_model)
    steps.add("output", out)
    return out, steps.build()


@holds_one_blas_thread
def swiglu(x: Array, params: SwiGLUParams, *, return_trace: bool = False):
    """Return ``((silu(x @ w_gate) * (x @ w_up)) @ w_down, trace)``."""
    _check_linear(x, params.w_gate, "w_gate")
    _check_linear(x, params.w_up, "w_up")
    steps = TraceBuilder(enabled=return_trace)
    gate = linear(x, params.w_gate)  # (..., L, d_ff)
    up = linear(x, params.w_up)  # (..., L, d_ff)
    steps.add("hidden", gate)
    steps.add("up", up)
    activated = silu(gate) * up
    steps.add("activated", activated)
    _check_linear(activated, params.w_down, "w_down")
    out = linear(activated, params.w_down)  # (..., L, d_model)
    steps.add("output", out)
    return out, steps.build()


def _check_linear(x: Array, w: Array, field: str) -> None:
    xs, ws = shape_of(x), shape_of(w)
    if len(ws) != 2 or ws[0] != xs[-1]:
        raise FieldError(
            field,
            f"has shape {ws}; it must be (in, out) with in = {xs[-1]}, the last "
            f"dimension of its input {xs} (weights are pre-transposed: y = x @ W)"
        )


__all__ = [
    "ACTIVATIONS",
    "LayerNormParams",
    "MLPParams",
    "RMSNormParams",
    "SwiGLUParams",
    "activate",
    "erf",
    "erf_float32",
    "erf_series",
    "gelu",
    "layer_norm",
    "linear",
    "mlp",
    "norm",
    "relu",
    "rms_norm",
    "sigmoid",
    "silu",
    "swiglu",
]
