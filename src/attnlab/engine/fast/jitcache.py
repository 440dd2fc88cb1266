"""numba's on-disk cache of machine code, made safe for processes that compile at the same time.

numba saves a compiled signature of a function in three steps: it reads the
function's index (``<name>.nbi``, signature -> data file), names the first free
data file (``<name>.1.nbc``, ``.2``, ...), writes the index, then writes the
data. Two processes compiling two signatures of one function at once (the
lab's server and its model worker, or a test run's workers, on a fresh
checkout) both read an index without either and both name ``.1.nbc``; when
their writes interleave as index A, index B, data B, data A, the index says
that B's signature is in a file that holds A's machine code. Every process
after that runs A's code for B's arguments: float64 arithmetic on float32
arrays, or C-contiguous indexing of strided ones, which gives wrong numbers and
writes past the ends of arrays (a test run saw both: results that differed in
their bits, then a worker aborted by a corrupted heap). numba's issue tracker
has this family of races open (numba#4807, numba#10128).

Here each function's saves take an exclusive ``flock`` on a lock file beside its
index, held from reading the index to writing the data, and its loads a shared
one, so an index never names a data file that another save is about to fill.
Where no lock can be taken (no ``fcntl``; a numba whose cache keeps its files
elsewhere), the function is compiled in each process instead: slower to start,
never wrong.
"""

from __future__ import annotations

import functools
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, so no shared cache
    fcntl = None


def locked(cache_file) -> bool:
    """Make ``cache_file`` (numba's ``IndexDataCacheFile``) save under an exclusive lock and load
    under a shared one; False (nothing changed) when that cannot be done here."""
    if fcntl is None or not all(hasattr(cache_file, n) for n in ("save", "load", "_index_path")):
        return False
    lock_path = cache_file._index_path + ".lock"
    save, load = cache_file.save, cache_file.load

    @functools.wraps(save)
    def save_locked(key, data):
        with open(lock_path, "ab") as lock:  # numba made the folder just before it saves
            fcntl.flock(lock, fcntl.LOCK_EX)
            return save(key, data)  # closing the file lets the lock go

    @functools.wraps(load)
    def load_locked(key):
        try:
            lock = open(lock_path, "ab")
        except OSError:  # no cache folder yet (nothing to load), or one we may not write in (nor
            return load(key)  # may anyone who would race us: numba writes where the user can)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            return load(key)

    cache_file.save, cache_file.load = save_locked, load_locked
    return True


def cached_jit(njit, func, **options):
    """``njit(cache=True, **options)(func)`` with its cache locked (see the module docstring), or
    without a cache where numba has no folder to write it in or the lock cannot be taken. The cache
    is also stale once any module of engine/fast changes (:func:`code_stamp`)."""
    try:
        dispatcher = njit(cache=True, **options)(func)
    except RuntimeError:  # no writable cache directory
        return njit(**options)(func)
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp") and locked(cache_file):
        cache_file._source_stamp = (cache_file._source_stamp, code_stamp())
        return dispatcher
    return njit(**options)(func)


@functools.cache
def code_stamp() -> tuple:
    """(path, modification time, size) of every module of engine/fast. numba keeps a kernel's cache
    while the file that defines the kernel is unchanged, but a kernel also holds code generated
    elsewhere: the LLVM IR of quant/ir.py's and decode/kernels.py's intrinsics, the steps it calls in
    other modules. An edit to any of them makes every cached kernel stale (compiled again at first
    use); a kernel's machine code never outlives the code it was made from."""
    root = Path(__file__).resolve().parent
    files = sorted(root.rglob("*.py"))
    return tuple((str(f.relative_to(root)), f.stat().st_mtime, f.stat().st_size) for f in files)
