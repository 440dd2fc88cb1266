"""Every sentence of the state-space lab is true of its numbers: each claim recomputed here (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import page_claims

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.ssm import CONTROLS, LAB
from attnlab.lab.connections.ssm.walk import SSM, VOCAB, copy_keys


@st.composite
def inputs(draw) -> dict:
    n = draw(st.integers(2, 32))
    given = {
        "n": n,
        "step": draw(st.integers(1, n)),
        "d": draw(st.integers(2, 16)),
        "seed": draw(st.integers(0, 9999)),
    }
    return read(CONTROLS, given, "inputs")


def phi(a):
    return np.where(a > 0, a + 1.0, np.exp(np.minimum(a, 0.0)))


@settings(max_examples=30, deadline=None)
@given(inputs())
def test_every_claim(v):
    answer = LAB.answer(v)
    two, state, cost, scan, copy = page_claims(answer)
    n, t = v["n"], v["step"] - 1
    rng = np.random.default_rng(v["seed"])
    q, k, val = rng.standard_normal((3, n, 4))
    x = rng.standard_normal(n)
    # 1) the matrix form, recomputed as a plain causal sum, equals the lab's recurrence
    ref = np.array(
        [
            sum(phi(q[i]) @ phi(k[j]) * val[j] for j in range(i + 1))
            / sum(phi(q[i]) @ phi(k[j]) for j in range(i + 1))
            for i in range(n)
        ]
    )
    assert np.allclose(answer["data"]["recurrent_output"], ref, rtol=0, atol=1e-12)
    assert two["within"] == (two["difference"] <= two["bound"] == 1e-12) and two["within"]
    # 2) the state's size and row t's output
    assert state["state_numbers"] == 20 and state["row_weights"] == t + 1
    assert np.allclose(state["output"], ref[t], atol=1e-12)
    # 3) costs
    assert cost["matrix"] == n * (n + 1) // 2 * 8 and cost["recurrence"] == n * 32
    assert ("the matrix does" in answer["words"][2]["text"]) == (cost["ratio"] >= 1)
    # 4) the scan, unrolled by hand: y_t = Σ_s c · (Π decays) Δ_s b x_s
    dt = np.log1p(np.exp(SSM.w * x + SSM.beta))
    a = np.exp(-dt[:, None] * np.array(SSM.rates))
    y = [
        sum(
            np.dot(SSM.c, np.prod(a[s + 1 : i + 1], axis=0) * dt[s] * np.array(SSM.b)) * x[s]
            for s in range(i + 1)
        )
        for i in range(n)
    ]
    assert np.allclose(answer["data"]["scan_output"], y, rtol=1e-12, atol=1e-12)
    assert scan["within"] and scan["upper"] == 0.0 and scan["row"] == t
    assert np.isclose(scan["row_sum"], sum(answer["data"]["dual"][t]), rtol=1e-12)
    # 5) copy: linear is exact while the keys stay orthonormal (L <= d), softmax's count as drawn
    keys, tokens = copy_keys(v["d"], v["seed"])
    L = n
    lin = keys[:L] @ (keys[:L].T @ np.eye(VOCAB)[tokens[:L]])
    assert copy["linear_right"] == int(np.sum(lin.argmax(axis=1) == tokens[:L]))
    assert copy["exact_up_to"] >= min(v["d"], 32) and copy["length"] == L
    if L <= v["d"]:
        assert copy["linear_right"] == L
