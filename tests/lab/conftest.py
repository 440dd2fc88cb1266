"""Lab test helpers (and ``sharekit.py`` beside this file: what a shown set of percents must satisfy).

``random_block(seed)`` gives a random block input ``(x, weights)``: every weight
of the given block's shapes drawn from a standard normal (NumPy's generator
seeded with ``seed``), so the walk is compared with the engine and with PyTorch
away from the hand-picked example.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.lab.block.data import given_weights

# pytest runs with --import-mode=importlib, which leaves sys.path alone: put this folder on it so
# the tests can ``from sharekit import ...`` (what a shown set of percents must satisfy).
sys.path.insert(0, str(Path(__file__).parent))


def _random_block(seed: int) -> tuple[list[list[float]], dict]:
    rng = np.random.default_rng(seed)
    w = given_weights()
    for h in w["heads"]:
        for n in ("w_q", "w_k", "w_v"):
            h[n] = rng.normal(size=(4, 2)).tolist()
    for n, shape in (("w_o", (4, 4)), ("w_1", (4, 8)), ("w_2", (8, 4))):
        w[n] = rng.normal(size=shape).tolist()
    w["b_1"], w["b_2"] = rng.normal(size=8).tolist(), rng.normal(size=4).tolist()
    for n in ("norm_1", "norm_2"):
        w[n] = {"gamma": rng.normal(size=4).tolist(), "beta": rng.normal(size=4).tolist()}
    return rng.normal(size=(3, 4)).tolist(), w


@pytest.fixture
def random_block():
    """``random_block(seed) -> (x, weights)``: a random block input, the same for the same seed."""
    return _random_block
