"""A selective state-space scan and its lower-triangular "dual" matrix (Gu & Dao, 2024; Dao & Gu, 2024).

One input channel x (n,) drives a state h of N numbers. At step t the step
size depends on the input (that is what makes the scan *selective*):

    Δ_t = softplus(w x_t + β)                      how far this step moves
    a_t = exp(-Δ_t λ)                              (N,) decay per state entry, in (0, 1)
    h_t = a_t ⊙ h_{t-1} + Δ_t b x_t                (N,) the recurrence, h_0 = 0
    y_t = c · h_t

with decay rates λ > 0, input weights b and readout c fixed (N,) vectors.
Unrolled, y = M x with M lower triangular:

    M[t, s] = Σ_i c_i (a_{s+1,i} ⋯ a_{t,i}) Δ_s b_i      for s <= t, 0 above

the same shape as causal attention's weight matrix, but built from products
of decays instead of a softmax: Mamba-2's state-space duality. M depends on x
through Δ, so like attention's weights it is data-dependent. Both forms give
the same y up to rounding. NumPy float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlab.engine.errors import FieldError


@dataclass(frozen=True)
class SelectiveSSM:
    """The scan's fixed parameters: ``rates`` λ (N,) > 0, ``b`` and ``c`` (N,), and the step's
    ``w`` and ``beta``."""

    rates: tuple[float, ...]
    b: tuple[float, ...]
    c: tuple[float, ...]
    w: float = 1.0
    beta: float = 0.0

    def __post_init__(self) -> None:
        n = len(self.rates)
        if n < 1 or len(self.b) != n or len(self.c) != n:
            raise FieldError("rates", f"rates, b and c need the same length of at least 1, not {n}")
        if not all(r > 0 for r in self.rates):
            raise FieldError("rates", "must all be positive, so every decay is below 1")


@dataclass(frozen=True, eq=False)
class ScanResult:
    """``steps`` Δ (n,), ``decays`` a (n, N), ``states`` h (n, N), ``output`` y (n,)."""

    steps: np.ndarray
    decays: np.ndarray
    states: np.ndarray
    output: np.ndarray


def _check_x(x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.shape[0] < 1:
        raise FieldError("x", f"has shape {x.shape}; it must be (n,) with n >= 1")
    if not np.all(np.isfinite(x)):
        raise FieldError("x", "holds NaN or infinity; every number must be finite")
    return x


def step_sizes(x, ssm: SelectiveSSM) -> tuple[np.ndarray, np.ndarray]:
    """Return Δ (n,) = softplus(w x + β) and the decays a (n, N) = exp(-Δ λ)."""
    x = _check_x(x)
    pre = ssm.w * x + ssm.beta
    steps = np.logaddexp(0.0, pre)  # softplus, without overflow for large inputs
    decays = np.exp(-steps[:, None] * np.asarray(ssm.rates)[None, :])  # (n, N)
    return steps, decays


def selective_scan(x, ssm: SelectiveSSM) -> ScanResult:
    """Run the recurrence left to right (see the module docstring)."""
    x = _check_x(x)
    steps, decays = step_sizes(x, ssm)
    b, c = np.asarray(ssm.b), np.asarray(ssm.c)
    h = np.zeros(len(ssm.rates))
    states, out = np.empty((x.shape[0], h.shape[0])), np.empty(x.shape[0])
    for t in range(x.shape[0]):
        h = decays[t] * h + steps[t] * b * x[t]  # (N,): forget a little, write the input
        states[t] = h
        out[t] = float(np.dot(c, h))  # read out
    return ScanResult(steps=steps, decays=decays, states=states, output=out)


def scan_matrix(x, ssm: SelectiveSSM) -> np.ndarray:
    """Return the (n, n) lower-triangular M with y = M x (the scan unrolled; see the module docstring)."""
    x = _check_x(x)
    steps, decays = step_sizes(x, ssm)
    b, c = np.asarray(ssm.b), np.asarray(ssm.c)
    n = x.shape[0]
    m = np.zeros((n, n))
    for s in range(n):
        carried = steps[s] * b  # (N,): what input s wrote into the state, per unit of x_s
        for t in range(s, n):
            if t > s:
                carried = carried * decays[t]  # decayed once more by every later step
            m[t, s] = float(np.dot(c, carried))
    return m
