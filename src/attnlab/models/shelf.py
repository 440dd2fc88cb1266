"""Finished trace jobs: kept in memory, spilled to disk beyond a byte cap, dropped only past a second.

Memory: a trace's size is the ``nbytes`` of the arrays it holds in this process's
memory (:meth:`~attnlab.models.traces.ModelTrace.arrays`: q, k, v, allowed, the
journey; its lists and strings are small beside them); ``kept_bytes`` is their sum,
at most ``cap``. Beyond it, the least recently used traces are *spilled*: their
arrays written to one raw file each in a folder of this process's own (a
``tempfile.TemporaryDirectory`` under ``TMPDIR``, removed at exit) and memory-mapped
back (``np.memmap``, read-only), so they answer exactly as before, from the disk and
the operating system's page cache instead of this process's memory. A trace's
``logits`` ``(T, vocab)`` (50 MB at 256 SmolLM2 tokens, read one row per request)
go there at once. The newest trace always stays in memory, even alone over the cap.

Disk: the folder holds at most ``spill_cap`` bytes (:data:`SPILL_CAP`). A trace is
*dropped* only when the folder is over that cap (the least recently used spilled
traces go first) or cannot be written; the ids of the last :data:`DROPPED_IDS`
dropped traces are remembered, so that their routes can say the trace was dropped
to make room rather than that it never was.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from attnlab.models.jobkinds import TraceJob
from attnlab.models.traces import ModelTrace

SPILL_CAP = 4 * 2**30  # bytes of spilled traces on disk: ~50 256-token SmolLM2 traces with their logits
DROPPED_IDS = 4096  # dropped traces' ids remembered (~60 bytes each)
COLD = ("logits",)  # spilled as soon as a trace is kept: read a row at a time
_ALIGN = 64  # each array's offset in a spill file


def trace_nbytes(trace: ModelTrace) -> int:
    """The bytes of ``trace``'s arrays in memory (memory-mapped ones live on disk: not counted)."""
    return sum(int(a.nbytes) for a in trace.arrays().values() if not isinstance(a, np.memmap))


def _offsets(arrays: dict[str, np.ndarray]) -> tuple[dict[str, int], int]:
    at, offsets = 0, {}
    for name, a in arrays.items():
        offsets[name] = at
        at += -(-int(a.nbytes) // _ALIGN) * _ALIGN
    return offsets, at


def spill_trace(trace: ModelTrace, path: Path, names: tuple[str, ...] | None = None) -> ModelTrace:
    """``trace`` with its arrays (``names`` of :meth:`~ModelTrace.arrays`, default all) written to
    the raw file ``path`` and memory-mapped back read-only: the same values, dtypes and shapes.

    One file and one map per call (a map holds a file descriptor). Raises ``OSError``
    when the file cannot be written; a half-written file is removed.
    """
    arrays = {
        n: a
        for n, a in trace.arrays().items()
        if (names is None or n in names) and not isinstance(a, np.memmap)
    }
    if not arrays:
        return trace
    offsets, total = _offsets(arrays)
    try:
        with open(path, "xb") as f:
            for name, a in arrays.items():
                f.seek(offsets[name])
                f.write(np.ascontiguousarray(a).tobytes())
            f.truncate(max(total, 1))
        whole = np.memmap(path, dtype=np.uint8, mode="r")
    except OSError:
        path.unlink(missing_ok=True)
        raise
    mapped = {}
    for name, a in arrays.items():
        part = whole[offsets[name] : offsets[name] + a.nbytes]
        mapped[name] = part.view(a.dtype).reshape(a.shape)  # an np.memmap view of the one map
    journey = {k[len("journey.") :]: m for k, m in mapped.items() if k.startswith("journey.")}
    fields = {k: m for k, m in mapped.items() if not k.startswith("journey.")}
    if journey:
        fields["journey"] = {**(trace.journey or {}), **journey}
    return dataclasses.replace(trace, **fields)


@dataclasses.dataclass
class _Kept:
    job: TraceJob
    memory: int  # bytes in this process's memory
    disk: int = 0  # bytes in the spill folder
    files: list[Path] = dataclasses.field(default_factory=list)


class TraceShelf:
    """Done trace jobs by id, oldest use first: ``cap`` bytes in memory, ``spill_cap`` on disk.

    Not thread-safe by itself: the jobs call it under their lock.
    """

    def __init__(self, cap: int, *, spill_cap: int = SPILL_CAP, spill_dir: str | os.PathLike | None = None):
        self.cap = cap
        self.spill_cap = spill_cap
        self.kept_bytes = 0  # in memory
        self.spilled_bytes = 0  # on disk
        self._spill_dir = spill_dir  # where the folder goes (default: tempfile's, i.e. TMPDIR)
        self._folder: tempfile.TemporaryDirectory | None = None
        self._files = 0
        self._jobs: OrderedDict[str, _Kept] = OrderedDict()
        self._dropped: OrderedDict[str, None] = OrderedDict()
        self._close_lock = threading.Lock()
        atexit.register(self.close)

    def __len__(self) -> int:
        return len(self._jobs)

    @property
    def spilled(self) -> int:
        """How many kept traces have arrays on disk."""
        return sum(1 for k in self._jobs.values() if k.disk)

    def add(self, job: TraceJob) -> list[TraceJob]:
        """Keep ``job`` (done, with its trace); return the jobs dropped to stay within the caps."""
        kept = _Kept(job, memory=trace_nbytes(job.trace))
        self._jobs[job.id] = kept
        self.kept_bytes += kept.memory
        dropped = self._spill(kept, COLD, keep_if_not=True)
        while self.kept_bytes > self.cap:
            victim = next((k for k in self._jobs.values() if k.memory and k is not kept), None)
            if victim is None:
                break
            dropped += self._spill(victim, None, keep_if_not=False)
        return dropped

    def touch(self, job_id: str) -> None:
        """Mark ``job_id`` as just used (no-op when it is not kept)."""
        if job_id in self._jobs:
            self._jobs.move_to_end(job_id)

    def was_dropped(self, job_id: str) -> bool:
        """Whether ``job_id`` was a kept trace dropped to make room (among the last ``DROPPED_IDS``)."""
        return job_id in self._dropped

    def close(self) -> None:
        """Remove the spill folder (at exit; a mapped trace already handed out keeps its pages)."""
        with self._close_lock:
            folder, self._folder = self._folder, None
        if folder is not None:
            folder.cleanup()

    # -- spilling and dropping ----------------------------------------------------

    def _spill(self, kept: _Kept, names: tuple[str, ...] | None, *, keep_if_not: bool) -> list[TraceJob]:
        """Move ``kept``'s arrays (``names``, default all) to disk, dropping the least recently used
        spilled traces while the folder would be over its cap. Where they still do not fit or
        cannot be written: with ``keep_if_not`` they stay in memory, else ``kept`` is dropped."""
        trace = kept.job.trace
        size = sum(
            int(a.nbytes)
            for n, a in trace.arrays().items()
            if (names is None or n in names) and not isinstance(a, np.memmap)
        )
        if size == 0:
            return []
        dropped = []
        newest = next(reversed(self._jobs.values()))  # never dropped to make room for another
        while self.spilled_bytes + size > self.spill_cap:
            old = next((k for k in self._jobs.values() if k.disk and k is not kept and k is not newest), None)
            if old is None:
                break
            dropped.append(self._drop(old))
        try:
            if self.spilled_bytes + size > self.spill_cap:
                raise OSError("over the spill folder's cap")
            path = self._path(kept.job.id)
            kept.job.trace = spill_trace(trace, path, names)
        except OSError:
            if not keep_if_not:
                dropped.append(self._drop(kept))
            return dropped
        kept.files.append(path)
        kept.memory -= size
        kept.disk += size
        self.kept_bytes -= size
        self.spilled_bytes += size
        return dropped

    def _path(self, job_id: str) -> Path:
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="attnlab-traces-", dir=self._spill_dir)
        self._files += 1
        return Path(self._folder.name) / f"{job_id}.{self._files}.bin"

    def _drop(self, kept: _Kept) -> TraceJob:
        del self._jobs[kept.job.id]
        self.kept_bytes -= kept.memory
        self.spilled_bytes -= kept.disk
        for path in kept.files:
            path.unlink(missing_ok=True)  # a map handed out meanwhile keeps its pages until it goes
        self._dropped[kept.job.id] = None
        while len(self._dropped) > DROPPED_IDS:
            self._dropped.popitem(last=False)
        return kept.job
