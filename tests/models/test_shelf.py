"""The trace shelf (models/shelf.py): in memory within a cap, spilled to disk beyond it, dropped last.

Toy traces (the toy model's arrays, with logits for a decoder); a real folder under
``tmp_path`` for the spills. No timing.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from attnlab.models import toy
from attnlab.models.jobkinds import TraceJob
from attnlab.models.shelf import DROPPED_IDS, TraceShelf, spill_trace, trace_nbytes

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
