"""Sliding-window attention's mask: each query sees only the most recent keys.

Query i may attend to key j when ``i - window < j <= i`` (``True`` = may attend,
top-left aligned, L == S): the causal mask cut to a band of ``window`` keys,
the token itself included, as in Longformer's local attention and Mistral.
``window >= n`` is the plain causal mask. Unlike tiling, which computes the
same numbers in another order, a window changes what is computed: query i
no longer sees keys ``j <= i - window``.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.errors import FieldError


def sliding_window_mask(n: int, window: int) -> np.ndarray:
    """Return the boolean (n, n) mask, ``True`` where ``i - window < j <= i``."""
    for name, value in (("n", n), ("window", window)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise FieldError(name, f"must be a whole number of at least 1, not {value!r}")
    i = np.arange(n)[:, None]  # (n, 1) query positions
    j = np.arange(n)[None, :]  # (1, n) key positions
    return (j <= i) & (j > i - window)


def window_start(i: int, window: int) -> int:
    """The first key query ``i`` may attend to under a window of ``window`` keys."""
    return max(0, i - window + 1)
