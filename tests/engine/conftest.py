"""Engine test helpers: every test that takes ``xp`` runs on each array namespace.

NumPy and array-api-strict always run; torch runs where installed and its
parameter is skipped with a visible reason where it is not.
"""

from __future__ import annotations

import numpy as np
import pytest


def _namespaces():
    import array_api_strict

    params = [pytest.param(np, id="numpy"), pytest.param(array_api_strict, id="array_api_strict")]
    try:
        import torch
    except ImportError:
        params.append(pytest.param(None, id="torch", marks=pytest.mark.skip("torch not installed")))
    else:
        params.append(pytest.param(torch, id="torch"))
    return params


def pytest_generate_tests(metafunc):
    if "xp" in metafunc.fixturenames:
        metafunc.parametrize("xp", _namespaces())


def _to_np(a):
    if isinstance(a, np.ndarray):
        return a
    if type(a).__module__.startswith("torch"):
        return a.detach().cpu().numpy()
    return np.from_dlpack(a)


@pytest.fixture
def to_xp(xp):
    """Return a function moving NumPy arrays into namespace ``xp``."""

    def convert(a):
        if xp is np:
            return a
        if xp.__name__ == "torch":
            return xp.from_numpy(np.ascontiguousarray(a))
        return xp.asarray(a)

    return convert


@pytest.fixture
def to_np():
    """Return a function bringing an array of any namespace back to NumPy."""
    return _to_np


@pytest.fixture
def rng():
    return np.random.default_rng(20240613)
