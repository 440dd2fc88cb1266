"""What the jobs keep (models/jobs/kept.py): finished traces in memory within a cap, spilled to disk
beyond it (a folder of the process's own, those of processes gone removed), dropped last; and the
runs a worker reuses.

Toy traces (the toy model's arrays, with logits for a decoder); a real folder under
``tmp_path`` for the spills. No timing.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnlab.models import toy
from attnlab.models.jobs.kept import (
    DROPPED_IDS,
    Kept,
    TraceShelf,
    cache_of,
    process_start,
    remove_leftovers,
    spill_prefix,
    spill_trace,
    trace_nbytes,
)
from attnlab.models.jobs.kinds import TraceJob

N_WORDS = 12


def job(i: int, model: str = "smollm2") -> TraceJob:
    """A done trace job of the toy ``model`` on a text of its own (``N_WORDS`` words)."""
    text = " ".join(f"t{i}w{j}" for j in range(N_WORDS))
    j = TraceJob(id=f"job{i}", model=model, text=text)
    j.trace = toy.load(model).trace(text, details=True)
    j.status = "done"
    return j


def same_arrays(a, b) -> bool:
    xa, xb = a.arrays(), b.arrays()
    return xa.keys() == xb.keys() and all(
        np.array_equal(xa[k], xb[k]) and xa[k].dtype == xb[k].dtype for k in xa
    )


def sizes(model: str = "smollm2") -> tuple[int, int]:
    """(bytes in memory once kept: all but the logits, the logits' bytes)."""
    t = job(0, model).trace
    cold = 0 if t.logits is None else t.logits.nbytes
    return trace_nbytes(t) - cold, cold


def spill_files(folder) -> list[str]:
    return sorted(name for d in folder.iterdir() for name in os.listdir(d))


def test_spilling_writes_one_file_and_maps_back_the_same_arrays(tmp_path):
    t = toy.load("smollm2").trace("one two three four", details=True)
    t = type(t)(**{**t.__dict__, "journey": {"norm": np.arange(12.0).reshape(3, 4)}})
    mapped = spill_trace(t, tmp_path / "t.bin")
    assert os.listdir(tmp_path) == ["t.bin"]
    assert same_arrays(mapped, t) and mapped.journey.keys() == {"norm"}
    assert all(isinstance(a, np.memmap) and not a.flags.writeable for a in mapped.arrays().values())
    assert trace_nbytes(mapped) == 0 and mapped.key == t.key
    assert mapped.head_weights(1, 1).tolist() == t.head_weights(1, 1).tolist()


def test_a_kept_traces_logits_go_to_disk_at_once(tmp_path):
    memory, cold = sizes()
    shelf = TraceShelf(10**9, spill_dir=tmp_path)
    a = job(1)
    before = a.trace
    assert shelf.add(a) == []
    assert isinstance(a.trace.logits, np.memmap) and not isinstance(a.trace.q, np.memmap)
    assert (shelf.kept_bytes, shelf.spilled_bytes) == (memory, cold)
    assert same_arrays(a.trace, before)


def test_a_spilled_trace_keeps_the_path_it_ran_on(tmp_path):
    """The path ("q4_1" or "float32") travels with the trace: its logits spilled at once, then the rest."""
    shelf = TraceShelf(1, spill_dir=tmp_path)
    a, b = job(1), job(2)
    a.trace = dataclasses.replace(a.trace, path="q4_1")
    b.trace = dataclasses.replace(b.trace, path="float32")
    shelf.add(a)
    assert isinstance(a.trace.logits, np.memmap) and a.trace.path == "q4_1"
    shelf.add(b)  # a goes to disk whole
    assert isinstance(a.trace.q, np.memmap) and (a.trace.path, b.trace.path) == ("q4_1", "float32")
    assert spill_trace(b.trace, tmp_path / "b.bin").path == "float32"
    assert job(3).trace.path is None  # the toy model does not say


def test_beyond_the_memory_cap_the_least_recently_used_are_spilled_not_dropped(tmp_path):
    memory, cold = sizes()
    shelf = TraceShelf(2 * memory, spill_dir=tmp_path)
    jobs = [job(i) for i in range(5)]
    before = [j.trace for j in jobs]
    for j in jobs[:2]:
        assert shelf.add(j) == []
    shelf.touch("job0")  # job1 is now the least recently used
    for j in jobs[2:]:
        assert shelf.add(j) == []
    assert len(shelf) == 5 and shelf.spilled == 5  # every one's logits, and three whole traces
    assert shelf.kept_bytes == 2 * memory <= shelf.cap
    assert shelf.spilled_bytes == 5 * cold + 3 * memory
    in_memory = [j.id for j in jobs if not isinstance(j.trace.q, np.memmap)]
    assert in_memory == ["job3", "job4"]  # job0 was touched, but before job2..job4 came
    for j, t in zip(jobs, before):
        assert same_arrays(j.trace, t)
        assert np.array_equal(j.trace.head_weights(1, 0), t.head_weights(1, 0))


def test_the_spill_folder_cap_drops_the_least_recently_used_spilled_traces(tmp_path):
    memory, cold = sizes()
    shelf = TraceShelf(memory, spill_cap=2 * (memory + cold) + cold, spill_dir=tmp_path)
    jobs = [job(i) for i in range(5)]
    dropped = [d.id for j in jobs for d in shelf.add(j)]
    # on disk: job4's logits and two whole traces at most; the oldest go first
    assert dropped == ["job0", "job1"]
    assert all(shelf.was_dropped(i) for i in dropped) and not shelf.was_dropped("job2")
    assert shelf.spilled_bytes <= shelf.spill_cap and shelf.kept_bytes == memory
    assert not any(name.startswith(("job0.", "job1.")) for name in spill_files(tmp_path))
    assert len(shelf) == 3


def test_an_unwritable_folder_drops_instead_of_spilling(tmp_path):
    memory, _ = sizes()
    shelf = TraceShelf(memory, spill_dir=tmp_path / "missing")
    a, b = job(1), job(2)
    assert shelf.add(a) == []
    assert a.trace.logits is not None and not isinstance(a.trace.logits, np.memmap)  # kept in memory
    assert shelf.add(b) == [a]  # a could not be spilled: dropped, the newest stays
    assert shelf.was_dropped("job1") and len(shelf) == 1 and shelf.spilled_bytes == 0


def test_the_newest_trace_stays_in_memory_even_alone_over_the_cap(tmp_path):
    shelf = TraceShelf(1, spill_dir=tmp_path)
    a, b = job(1, "minilm"), job(2, "minilm")  # an encoder's toy trace: no logits
    shelf.add(a)
    shelf.add(b)
    assert isinstance(a.trace.q, np.memmap) and not isinstance(b.trace.q, np.memmap)
    assert shelf.kept_bytes == trace_nbytes(b.trace) > shelf.cap


def test_close_removes_the_spill_folder(tmp_path):
    shelf = TraceShelf(1, spill_dir=tmp_path)
    for i in range(3):
        shelf.add(job(i))
    assert len(list(tmp_path.iterdir())) == 1 and spill_files(tmp_path)
    shelf.close()
    assert list(tmp_path.iterdir()) == []
    shelf.close()  # again: nothing to do


# A server killed with kill -9 (its spill folder left behind), in a process of its own.
KILLED_SERVER = """
import os, signal, sys
sys.path[:0] = [sys.argv[2]]
from test_kept import job
from attnlab.models.jobs.kept import TraceShelf
shelf = TraceShelf(1, spill_dir=sys.argv[1])
for i in range(2):
    shelf.add(job(i))
print(next(os.scandir(sys.argv[1])).name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_spill_folder_is_named_with_its_process(tmp_path):
    shelf = TraceShelf(1, spill_dir=tmp_path)
    shelf.add(job(1))
    shelf.add(job(2))
    [folder] = tmp_path.iterdir()
    assert folder.name.startswith(f"attnlab-traces-{os.getpid()}-{process_start(os.getpid())}-")
    shelf.close()


def test_a_start_removes_the_folders_a_killed_server_left_and_no_other(tmp_path):
    # Before: a server killed with kill -9 left its spill folder in /tmp (1.8 GB in the probe) for good.
    done = subprocess.run([sys.executable, "-c", KILLED_SERVER, str(tmp_path), str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = tmp_path / done.stdout.strip()
    assert left.is_dir() and any(left.iterdir())  # what the killed server left
    alive = tmp_path / f"{spill_prefix()}alive"  # this process's own (it is running)
    alive.mkdir()
    other = tmp_path / "attnlab-traces-abc"  # not a name the shelf makes: not ours to remove
    other.mkdir()
    link = tmp_path / "attnlab-traces-1-2-link"  # a link named like a leftover: never followed or removed
    link.symlink_to(other)
    shelf = TraceShelf(1, spill_dir=tmp_path)
    shelf.add(job(1))
    shelf.add(job(2))  # the first spill: the folder is made, and the leftovers go first
    assert not left.exists()
    assert alive.is_dir() and other.is_dir() and link.is_symlink()
    mine = [p for p in tmp_path.iterdir() if p.name.startswith(spill_prefix()) and p != alive]
    assert len(mine) == 1 and spill_files(tmp_path)
    shelf.close()


def test_remove_leftovers_asks_whether_each_folders_process_is_alive(tmp_path):
    for name in ("attnlab-traces-10-5-a", "attnlab-traces-11-6-b", "attnlab-traces-10-7-c"):
        (tmp_path / name).mkdir()
    gone = remove_leftovers(tmp_path, alive=lambda pid, start: (pid, start) == (10, 5))
    assert sorted(p.name for p in gone) == ["attnlab-traces-10-7-c", "attnlab-traces-11-6-b"]  # 10-7: reused
    assert [p.name for p in tmp_path.iterdir()] == ["attnlab-traces-10-5-a"]
    assert remove_leftovers(tmp_path / "missing") == []


def test_only_the_last_dropped_ids_are_remembered(tmp_path):
    shelf = TraceShelf(1, spill_cap=0, spill_dir=tmp_path)
    first = job(0, "minilm")
    shelf.add(first)
    for i in range(1, DROPPED_IDS + 2):
        j = TraceJob(id=f"job{i}", model="minilm", text="x")
        j.trace, j.status = first.trace, "done"
        shelf.add(j)
    assert (
        not shelf.was_dropped("job0") and shelf.was_dropped("job1") and shelf.was_dropped(f"job{DROPPED_IDS}")
    )


@pytest.mark.parametrize("model", ["minilm", "smollm2"])
def test_trace_nbytes_counts_memory_only(tmp_path, model):
    t = job(1, model).trace
    assert trace_nbytes(t) == sum(a.nbytes for a in t.arrays().values())
    assert trace_nbytes(spill_trace(t, tmp_path / "x.bin", ("q",))) == trace_nbytes(t) - t.q.nbytes


# -- the runs a worker reuses ------------------------------------------------------------------


def test_a_run_is_computed_once_and_the_oldest_leaves_first():
    kept = Kept(cap=10)
    made = []

    def compute(name):
        return lambda: made.append(name) or name

    assert kept.get(("a",), compute("a"), lambda v: 4) == "a"
    assert kept.get(("a",), compute("a again"), lambda v: 4) == "a" and made == ["a"]
    kept.get(("b",), compute("b"), lambda v: 4)
    kept.get(("a",), compute("a"), lambda v: 4)  # a is now the newest
    kept.get(("c",), compute("c"), lambda v: 4)  # 12 bytes: b, the least recently used, leaves
    assert kept.get(("b",), compute("b2"), lambda v: 4) == "b2" and made == ["a", "b", "c", "b2"]
    big = Kept(cap=1)
    big.get(("x",), compute("x"), lambda v: 100)
    assert len(big) == 1 and big.bytes == 100  # the newest stays, even alone over the cap


@pytest.mark.models
def test_the_same_text_on_the_same_model_is_one_run(minilm):
    kept = Kept()
    ids = minilm.tokenize(["A kept run."]).ids[0].tolist()
    first = cache_of(minilm, ids, kept=kept)
    assert cache_of(minilm, ids, kept=kept) is first and len(kept) == 1
    arrays = (first.resid, first.mid, first.z, first.attn_out, first.mlp_out, first.pooled)
    assert kept.bytes == sum(a.nbytes for a in arrays)
