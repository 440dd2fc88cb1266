"""Holding NumPy's BLAS to one thread, so that a product's numbers never depend on the thread count.

OpenBLAS splits a product differently for different thread counts (and
forwards a one-row gemm to gemv, whose threaded form can split the sums), so
the same product can round differently under ``OPENBLAS_NUM_THREADS=1`` and
``=2``. The engine's own threads (:mod:`attnlab.engine.fast.workers`) share out
fixed pieces of work instead, each a whole single-threaded BLAS call.

:func:`one_blas_thread` is reference-counted and thread-safe: the first holder
in sets BLAS to one thread, the last one out restores what was there, so two
threads entering and leaving in any order never see multi-threading while
either is inside. (threadpoolctl's ``limit()`` alone saves and restores a
global: interleaved, the first one out restores threads under the second; and
it obeys only one "controlling" thread, see :func:`_process_wide_setter`.)
Code outside every hold that calls BLAS meanwhile is held to one thread too.

One ``threadpoolctl`` controller serves the process (building one scans the
loaded libraries: docs/performance.md); the compiled attention kernel finds NumPy's sgemm
through it, so the hold covers its direct calls as well.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading

# the cores this process may run on: how many of our own threads share fixed pieces of work
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

_controller = None
_lock = threading.Lock()
_hold_lock = threading.Lock()
_holders = 0  # threads (or nested calls) inside one_blas_thread
_restore: list = []  # (setter, thread count) per BLAS library, from before the first holder came in


@contextlib.contextmanager
def one_blas_thread():
    """Hold NumPy's BLAS to one thread while any caller is inside (nestable, thread-safe)."""
    global _holders
    with _hold_lock:
        if _holders == 0:
            for lib in _blas_controllers():
                setter = _process_wide_setter(lib)
                _restore.append((setter, lib.num_threads))
                setter(1)
        _holders += 1
    try:
        yield
    finally:
        with _hold_lock:
            _holders -= 1
            if _holders == 0:
                while _restore:
                    setter, n = _restore.pop()
                    setter(n)


def holding_one_blas_thread() -> bool:
    """True while some caller is inside :func:`one_blas_thread` (BLAS runs on one thread)."""
    return _holders > 0


def holds_one_blas_thread(fn):
    """Decorate an engine entry point so its products run inside :func:`one_blas_thread`.

    The public functions that multiply arrays (attention, heads, blocks, stacks,
    feed-forward layers) wear it, so a user's call gives the same bits whatever
    ``OPENBLAS_NUM_THREADS`` says. Nested calls only count the hold.
    """

    @functools.wraps(fn)
    def held(*args, **kwargs):
        with one_blas_thread():
            return fn(*args, **kwargs)

    return held


def _process_wide_setter(lib):
    """The function that sets ``lib``'s thread count, called from any thread.

    threadpoolctl lets only one "controlling" thread set OpenBLAS's (process-wide)
    count and silently ignores the others, so a hold taken in a web server's or a
    worker's thread would do nothing: call OpenBLAS's own setter instead. (Where
    OpenBLAS runs on OpenMP its limits are per calling thread, and threadpoolctl's
    setter is the right one; our worker threads then keep their own.)
    """
    if lib.internal_api == "openblas" and getattr(lib, "threading_layer", "") != "openmp":
        for prefix in ("", "scipy_"):
            for suffix in ("", "64_", "_64"):
                setter = getattr(lib.dynlib, f"{prefix}openblas_set_num_threads{suffix}", None)
                if setter is not None:
                    return setter
    return lib.set_num_threads


def _blas_controllers() -> list:
    controller = _get_controller()
    if controller is None:  # pragma: no cover - threadpoolctl is a dependency
        return []
    return [lib for lib in controller.lib_controllers if lib.user_api == "blas"]


def blas_threads() -> set[int]:
    """The thread counts NumPy's BLAS libraries are set to now (for tests and diagnostics)."""
    return {lib.num_threads for lib in _blas_controllers()}


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
