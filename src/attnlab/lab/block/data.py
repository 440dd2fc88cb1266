"""The block's given example: three tokens A, B, C of d_model = 4, two heads, d_ff = 8.

Nothing here is learned: the numbers are small and chosen so that each head does
one visible thing on the held A/B/C tokens with the causal mask (pre-norm, no
positions):

- X's rows are one-hot in the first three coordinates plus a constant 1, so
  LN(x_A) ≈ [1, −1, −1, 1], LN(x_B) ≈ [−1, 1, −1, 1], LN(x_C) ≈ [−1, −1, 1, 1];
- head 1 looks back: its query for B meets A's key, its query for C meets B's key;
- head 2 looks at itself: W_Q² = W_K², so each token's query meets its own key best.

Shapes (weights pre-transposed, ``y = x @ W``): ``x`` (3, 4); per head ``w_q``,
``w_k``, ``w_v`` (4, 2); ``w_o`` (4, 4); ``norm_1``/``norm_2`` ``gamma``, ``beta``
(4,); ``w_1`` (4, 8), ``b_1`` (8,), ``w_2`` (8, 4), ``b_2`` (4,).
Every function returns fresh nested lists (editing one never changes the given example).
"""

from __future__ import annotations

import copy

from attnlab.lab.limits import BLOCK_MAX_MAGNITUDE

LABELS = ("A", "B", "C")
N_TOKENS = 3
D_MODEL = 4
N_HEAD = 2
D_HEAD = 2  # d_k = d_v: each head's q, k and v are points in a plane
D_FF = 8
EPS = 1e-5  # LayerNorm's eps, inside the square root (torch.nn.LayerNorm's default)
MAX_MAGNITUDE = BLOCK_MAX_MAGNITUDE  # the largest |number| the lab accepts in x and the weights (lab.limits)
NORMS = ("pre", "post")
POSITIONS = ("none", "sinusoidal", "rope")
BASE = 10000.0  # the sinusoidal and RoPE frequency base

_X = [
    [1.0, 0.0, 0.0, 1.0],  # A
    [0.0, 1.0, 0.0, 1.0],  # B
    [0.0, 0.0, 1.0, 1.0],  # C
]

_WEIGHTS = {
    "heads": [
        {  # head 1: previous token (q_B lines up with k_A, q_C with k_B)
            "w_q": [[0.0, 0.0], [0.5, -0.5], [-0.5, 0.5], [0.0, 0.0]],
            "w_k": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]],
            "w_v": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]],
        },
        {  # head 2: itself (the same map for q and k)
            "w_q": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]],
            "w_k": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]],
            "w_v": [[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        },
    ],
    "w_o": [
        [0.5, 0.0, 0.0, 0.0],
        [0.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 0.5, 0.0],
        [0.0, 0.0, 0.0, 0.5],
    ],
    "norm_1": {"gamma": [1.0, 1.0, 1.0, 1.0], "beta": [0.0, 0.0, 0.0, 0.0]},
    "norm_2": {"gamma": [1.0, 1.0, 1.0, 1.0], "beta": [0.0, 0.0, 0.0, 0.0]},
    # W_1 reads each coordinate twice, with opposite signs; b_1 shifts half of them
    "w_1": [
        [1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -1.0],
    ],
    "b_1": [0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
    "w_2": [
        [0.5, 0.0, 0.0, 0.0],
        [0.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 0.5, 0.0],
        [0.0, 0.0, 0.0, 0.5],
        [-0.25, 0.0, 0.0, 0.0],
        [0.0, -0.25, 0.0, 0.0],
        [0.0, 0.0, -0.25, 0.0],
        [0.0, 0.0, 0.0, -0.25],
    ],
    "b_2": [0.0, 0.0, 0.0, 0.0],
}


def given_x() -> list[list[float]]:
    """Return the given inputs X (3 tokens x d_model)."""
    return copy.deepcopy(_X)


def given_weights() -> dict:
    """Return the given weights (see the module docstring for the shapes)."""
    return copy.deepcopy(_WEIGHTS)


def example() -> dict:
    """Return what "Reset" restores: the inputs, weights and default options."""
    return {
        "labels": list(LABELS),
        "x": given_x(),
        "weights": given_weights(),
        "norm": "pre",
        "positions": "none",
        "heads_on": [True, True],
        "eps": EPS,
        "d_model": D_MODEL,
        "n_head": N_HEAD,
        "d_k": D_HEAD,
        "d_ff": D_FF,
        "max_magnitude": MAX_MAGNITUDE,
    }
