"""Holding NumPy's BLAS to a number of threads, for the code that runs its own.

One ``threadpoolctl`` controller for the process (building one scans the
loaded libraries, ~1 ms), shared by the tiled attention kernel (its threads
split the work, so BLAS threads would only contend; its compiled part finds
NumPy's sgemm through it) and SmolLM2's decoding
(one BLAS thread when the cores are oversubscribed).
"""

from __future__ import annotations

import contextlib
import threading

_controller = None
_lock = threading.Lock()


def blas_limit(n: int):
    """Return a context manager holding NumPy's BLAS to ``n`` threads (a no-op without threadpoolctl)."""
    controller = _get_controller()
    if controller is None:  # pragma: no cover - threadpoolctl is a dependency
        return contextlib.nullcontext()
    return controller.limit(limits=n, user_api="blas")


def blas_libraries() -> list[dict]:
    """threadpoolctl's description of each loaded BLAS (``filepath``, ``internal_api``, ...)."""
    controller = _get_controller()
    return [] if controller is None else controller.info()


def _get_controller():
    global _controller
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        return None
    with _lock:
        if _controller is None:
            _controller = ThreadpoolController()
    return _controller
