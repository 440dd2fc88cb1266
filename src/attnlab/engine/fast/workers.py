"""Threads and kept scratch arrays for the NumPy tiled-attention kernel (:mod:`attnlab.engine.fast.tiles`).

``run`` spreads a list of tasks over a kept pool of threads; ``workspace``
hands out scratch arrays that outlive a call, for the one call at a time that
holds them (``kept_scratch``).
"""

from __future__ import annotations

import contextlib
import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_pools_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}

# Fresh memory costs a page fault per 4 KiB page on first touch, which in a VM can cost
# more than the attention itself (docs/performance.md); so the scratch arrays are kept.
_local = threading.local()
_spaces: dict[str, np.ndarray] = {}
_spaces_lock = threading.Lock()
_SPACE_LIMIT = 64 << 20  # keep scratch arrays up to 64 MiB each; allocate bigger ones afresh


def _pool(n: int) -> ThreadPoolExecutor:
    """Return a kept pool of ``n`` worker threads (starting threads each call would cost more)."""
    with _pools_lock:
        if n not in _pools:
            _pools[n] = ThreadPoolExecutor(n, thread_name_prefix="attnlab-attention")
        return _pools[n]


def run(work, tasks, n_threads: int) -> None:
    """Call ``work(task, buffers)`` for every task on up to ``n_threads`` threads.

    Each thread takes the next task when it is free (blocks near a causal
    diagonal are cheap, far ones dear) and keeps its own ``buffers`` dict
    between calls.
    """
    tasks = list(tasks)
    queue, lock = iter(tasks), threading.Lock()

    def worker() -> None:
        buffers = thread_buffers()
        while True:
            with lock:
                task = next(queue, None)
            if task is None:
                return
            work(task, buffers)

    n_threads = min(n_threads, len(tasks))
    helpers = [_pool(n_threads - 1).submit(worker) for _ in range(n_threads - 1)] if n_threads > 1 else []
    try:
        worker()  # the calling thread works too: one thread fewer to wake
    finally:
        for f in helpers:
            f.result()


def thread_buffers() -> dict:
    """Return this thread's scratch buffers (kept between calls)."""
    if not hasattr(_local, "buffers"):
        _local.buffers = {}
    return _local.buffers


@contextlib.contextmanager
def kept_scratch():
    """Let this call's :func:`workspace` reuse the kept arrays, if no other call holds them.

    Taken without waiting: a concurrent call gets fresh arrays instead.
    """
    claimed = _local.claimed = _spaces_lock.acquire(blocking=False)
    try:
        yield
    finally:
        if claimed:
            _local.claimed = False
            _spaces_lock.release()


def workspace(name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """Return a scratch array, reusing the last one of that name when it is big enough.

    Only inside :func:`kept_scratch`, in the call that holds the kept arrays;
    otherwise, and for arrays over 64 MiB, a fresh array.
    """
    size = math.prod(shape)
    if size * dtype.itemsize > _SPACE_LIMIT or not getattr(_local, "claimed", False):
        return np.empty(shape, dtype)
    kept = _spaces.get(name)
    if kept is None or kept.dtype != dtype or kept.size < size:
        kept = _spaces[name] = np.empty(size, dtype)
    return kept[:size].reshape(shape)
