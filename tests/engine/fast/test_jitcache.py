"""numba's cache saved by processes compiling at once (engine/fast/jitcache.py): an index never
names another signature's machine code.

The interleaving that breaks numba's own save is forced here with two cache files on one folder
(two processes, as numba sees them) and two threads: both read the empty index, A writes the
index, B writes the index and its data, A writes its data last. Locked, B cannot start its save
until A's is done, so every hold-up below times out instead and the saves run one after the other.
"""

from __future__ import annotations

import threading

import pytest
from numba.core.caching import IndexDataCacheFile

from attnlab.engine.fast import compiled, jitcache
from attnlab.engine.fast.quant import kernels as quant_kernels
from attnlab.engine.fast.quant import share as quant_share

pytestmark = pytest.mark.skipif(jitcache.fcntl is None, reason="no flock here: the cache is not shared")

WAIT = 1.0  # seconds a forced step waits for the other process's step before it goes on


def cache_file(folder) -> IndexDataCacheFile:
    return IndexDataCacheFile(cache_path=str(folder), filename_base="kernel-12.py311", source_stamp=(1.0, 10))


def force(f, name, before=None, after=None) -> None:
    """Run ``before()`` ahead of ``f.name`` and ``after()`` behind it."""
    real = getattr(f, name)

    def forced(*args):
        if before is not None:
            before()
        out = real(*args)
        if after is not None:
            after()
        return out

    setattr(f, name, forced)


def race(a: IndexDataCacheFile, b: IndexDataCacheFile) -> None:
    """A saves key "A", B saves key "B", forced into: A reads, B reads, A indexes, B indexes,
    B writes its data, A writes its data."""
    read = threading.Barrier(2, timeout=WAIT)
    a_indexed, b_wrote = threading.Event(), threading.Event()

    def meet():
        try:
            read.wait()
        except threading.BrokenBarrierError:
            pass  # the other is held at the lock: it reads after this save

    force(a, "_load_index", after=meet)
    force(b, "_load_index", after=meet)
    force(a, "_save_index", after=a_indexed.set)
    force(b, "_save_index", before=lambda: a_indexed.wait(WAIT))
    force(b, "_save_data", after=b_wrote.set)
    force(a, "_save_data", before=lambda: b_wrote.wait(WAIT))
    threads = [threading.Thread(target=a.save, args=("A", "code for A")),
               threading.Thread(target=b.save, args=("B", "code for B"))]  # fmt: skip
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)


def test_two_processes_saving_two_signatures_at_once_keep_each_its_own_code(tmp_path):
    a, b = cache_file(tmp_path), cache_file(tmp_path)
    assert jitcache.locked(a) and jitcache.locked(b)
    race(a, b)
    reader = cache_file(tmp_path)
    assert jitcache.locked(reader)
    assert reader.load("B") == "code for B"
    assert reader.load("A") == "code for A"


def test_every_compiled_kernel_saves_and_loads_its_cache_under_the_lock():
    kernels = (quant_share.run_job, quant_share.helper_wait, quant_kernels.pack_into, compiled.attend_block)
    for kernel in kernels:
        f = kernel._cache._cache_file
        assert f.save.__wrapped__ == type(f).save.__get__(f) and f.load.__wrapped__ == type(f).load.__get__(f)


def test_where_no_lock_can_be_taken_the_kernel_compiles_without_a_cache(monkeypatch):
    monkeypatch.setattr(jitcache, "fcntl", None)

    def double(x):
        return 2 * x

    kernel = compiled._jit()(double)
    assert kernel(21) == 42
    assert type(kernel._cache).__name__ == "NullCache"


def test_a_kernels_cache_goes_stale_when_any_module_of_engine_fast_changes(tmp_path, monkeypatch):
    """A kernel holds code generated in other modules (quant.ir's intrinsics): its cache's stamp names
    every module of engine/fast, so an index saved before an edit to any of them loads nothing."""
    stamp = jitcache.code_stamp()
    names = {name for name, _, _ in stamp}
    assert {"quant/ir.py", "decode/kernels.py", "jitcache.py", "decode/block.py"} <= names
    for kernel in (quant_kernels.matvec_parts, quant_share.run_job):
        assert kernel._cache._cache_file._source_stamp[1] == stamp
    saved = cache_file(tmp_path)
    saved._source_stamp = ((1.0, 10), stamp)
    saved.save("A", "code for A")
    same = cache_file(tmp_path)
    same._source_stamp = ((1.0, 10), stamp)
    assert same.load("A") == "code for A"
    edited = cache_file(tmp_path)  # quant/ir.py one second newer: the kernel file itself unchanged
    edited._source_stamp = ((1.0, 10), tuple((n, t + (n == "quant/ir.py"), z) for n, t, z in stamp))
    assert edited.load("A") is None
