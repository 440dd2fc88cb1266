"""Run a computation in fresh processes under different BLAS thread counts, beside a busy core.

A *program* is Python source that defines ``results() -> dict[str, np.ndarray]``.
:func:`results_in_processes` runs it once per thread count in a fresh interpreter
with ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS`` and
``NUMBA_NUM_THREADS`` set to that count, while a CPU burner it starts (and always
kills) keeps a core busy; the arrays come back through ``.npy`` files. :func:`results_here` runs the same
program in the test's own process. :func:`assert_same_bits` compares bytes.

The test modules import this file with ``tests/`` put on ``sys.path`` (pytest
runs with ``--import-mode=importlib``, which leaves ``sys.path`` alone).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

# runs the program in the child, saves its arrays, and the BLAS thread counts it started with
_MAIN = """
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

_out = Path(sys.argv[1])
_threads = sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
np.save(_out / "_blas_threads.npy", np.array(_threads))
for _name, _array in results().items():
    np.save(_out / f"{_name}.npy", np.asarray(_array), allow_pickle=False)
"""


@contextlib.contextmanager
def busy_core():
    """Keep one core busy with a spinning process for the duration; it is killed on the way out."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield burner
    finally:
        burner.kill()
        burner.wait()


def results_in_processes(program: str, folder: Path, thread_counts=(1, 2), timeout: float = 600) -> dict:
    """``{n: {name: array}}`` from running ``program`` in a fresh process per thread count n.

    Asserts that each child started with BLAS at n threads (the premise) and that
    the burner was still spinning when the last child ended.
    """
    out = {}
    with busy_core() as burner:
        for n in thread_counts:
            where = folder / f"threads-{n}"
            where.mkdir(parents=True)
            env = {**os.environ, "OPENBLAS_NUM_THREADS": str(n), "OMP_NUM_THREADS": str(n),
                   "MKL_NUM_THREADS": str(n), "NUMBA_NUM_THREADS": str(n)}  # fmt: skip
            done = subprocess.run(
                [sys.executable, "-c", program + _MAIN, str(where)],
                env=env, capture_output=True, text=True, timeout=timeout,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr[-4000:]
            arrays = {p.stem: np.load(p, allow_pickle=False) for p in sorted(where.glob("*.npy"))}
            started = arrays.pop("_blas_threads").tolist()  # [] where threadpoolctl finds no BLAS
            assert started in ([n], []), f"the child started with BLAS at {started} threads, not {n}"
            out[n] = arrays
        assert burner.poll() is None, "the burner stopped early: the core was not busy throughout"
    return out


def results_here(program: str) -> dict:
    """The program's ``results()`` computed in this process."""
    namespace: dict = {"__name__": "busy_program"}
    exec(compile(program, "<busy program>", "exec"), namespace)  # the test's own source text
    return namespace["results"]()


def assert_same_bits(a: np.ndarray, b: np.ndarray, what: str) -> None:
    """Equal dtype, shape and bytes (stricter than ==: -0.0 and 0.0 differ, NaNs must match too)."""
    a, b = np.asarray(a), np.asarray(b)
    assert (a.dtype, a.shape) == (b.dtype, b.shape), (what, a.dtype, a.shape, b.dtype, b.shape)
    if a.tobytes() != b.tobytes():
        differ = np.flatnonzero(a.ravel() != b.ravel())
        gap = np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))) if a.dtype.kind == "f" else None
        raise AssertionError(f"{what}: {differ.size} of {a.size} numbers differ (largest gap {gap})")
