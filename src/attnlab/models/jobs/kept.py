"""What the model jobs keep: finished traces (the server's) and the runs a worker reuses (the worker's).

**Finished traces** (:class:`TraceShelf`): kept in memory, spilled to disk beyond a byte cap,
dropped only past a second. Memory: a trace's size is the ``nbytes`` of the arrays it holds in
this process's memory (:meth:`~attnlab.models.traces.ModelTrace.arrays`: q, k, v, allowed, the
journey; its lists and strings are small beside them); ``kept_bytes`` is their sum, at most
``cap``. Beyond it, the least recently used traces are *spilled*: their arrays written to one
raw file each in a folder of this process's own and memory-mapped back (``np.memmap``,
read-only), so they answer exactly as before, from the disk and the operating system's page
cache instead of this process's memory. A trace's ``logits`` ``(T, vocab)`` (50 MB at 256
SmolLM2 tokens, read one row per request) go there at once. The newest trace always stays in
memory, even alone over the cap.

The spill folder belongs to its process: it is named ``attnlab-traces-<pid>-<start>-…`` (the
process's id and its start time, so a reused id is told apart) under ``TMPDIR``, removed at exit,
and a process that made one first removes those of processes that are gone
(:func:`remove_leftovers`: a server killed with ``kill -9`` cannot remove its own). Disk: the
folder holds at most ``spill_cap`` bytes (:data:`SPILL_CAP`). A trace is *dropped* only when the
folder is over that cap (the least recently used spilled traces go first) or cannot be written;
the ids of the last :data:`DROPPED_IDS` dropped traces are remembered, so that their routes can
say the trace was dropped to make room rather than that it never was.

**Runs a worker reuses** (:class:`Kept`): a text's :class:`~attnlab.models.circuits.runs.Cache`
and two prompts' :class:`~attnlab.models.circuits.patching.Pair`, keyed by the model (its name
and the path its products run on) and the token ids, so the ablation, the attribution, the lens
and a head of one text share one run, and the sweeps of one pair share its two runs. Least
recently used out first, under ``CAP_BYTES`` of their arrays (a 256-token SmolLM2 run keeps
about 140 MB, logits included; the newest stays even alone over the cap). Nothing of these
crosses the worker's pipe: the views send JSON.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import re
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

import numpy as np

from attnlab.models.jobs.kinds import TraceJob
from attnlab.models.traces import ModelTrace

SPILL_CAP = 4 * 2**30  # bytes of spilled traces on disk: ~50 256-token SmolLM2 traces with their logits
DROPPED_IDS = 4096  # dropped traces' ids remembered (~60 bytes each)
COLD = ("logits",)  # spilled as soon as a trace is kept: read a row at a time
_ALIGN = 64  # each array's offset in a spill file
SPILL_PREFIX = "attnlab-traces-"
_SPILL_NAME = re.compile(r"^attnlab-traces-(\d+)-(\d+)-[A-Za-z0-9_]+$")  # pid, start, tempfile's suffix


def process_start(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc``); ``None``: gone, or no ``/proc``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22 (starttime), after the command's name


def _alive(pid: int, start: int) -> bool:
    """Whether process ``pid`` still runs and is the one that started at ``start``."""
    if Path("/proc").is_dir():
        return process_start(pid) == start
    try:  # no /proc: a signal 0 says whether some process has the id
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def spill_prefix() -> str:
    """This process's spill folders' name prefix: ``attnlab-traces-<pid>-<start>-``."""
    pid = os.getpid()
    return f"{SPILL_PREFIX}{pid}-{process_start(pid) or 0}-"


def remove_leftovers(
    directory: str | os.PathLike | None = None, *, alive: Callable[[int, int], bool] = _alive
) -> list[Path]:
    """Remove the spill folders in ``directory`` (default: ``TMPDIR``'s) of processes that are gone.

    Only this user's folders named as :func:`spill_prefix` names them; never a link. Returns
    the folders removed.
    """
    root = Path(directory if directory is not None else tempfile.gettempdir())
    removed = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for path in entries:
        found = _SPILL_NAME.match(path.name)
        if found is None or alive(int(found[1]), int(found[2])):
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        if not path.is_dir() or path.is_symlink() or info.st_uid != os.getuid():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


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
            remove_leftovers(self._spill_dir)  # the folders of servers that were killed
            self._folder = tempfile.TemporaryDirectory(prefix=spill_prefix(), dir=self._spill_dir)
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


# -- the runs a worker reuses ---------------------------------------------------------------

CAP_BYTES = 512 * 2**20


def cache_bytes(c) -> int:
    """The bytes of a run's arrays (a :class:`~attnlab.models.circuits.runs.Cache`)."""
    arrays = (c.resid, c.mid, c.z, c.attn_out, c.mlp_out, c.final_rms, c.logits, c.pooled)
    return sum(int(a.nbytes) for a in arrays if a is not None)


class Kept:
    """Runs by key, least recently used out first, under ``cap`` bytes."""

    def __init__(self, cap: int = CAP_BYTES) -> None:
        self.cap = cap
        self._lock = threading.Lock()
        self._runs: OrderedDict[tuple, tuple[object, int]] = OrderedDict()

    @property
    def bytes(self) -> int:
        with self._lock:
            return sum(size for _, size in self._runs.values())

    def __len__(self) -> int:
        return len(self._runs)

    def get(self, key: tuple, compute: Callable[[], object], size: Callable[[object], int]):
        with self._lock:
            if key in self._runs:
                self._runs.move_to_end(key)
                return self._runs[key][0]
        value = compute()  # outside the lock: a run takes seconds
        with self._lock:
            self._runs[key] = (value, size(value))
            total = sum(s for _, s in self._runs.values())
            while total > self.cap and len(self._runs) > 1:
                _, (_, s) = self._runs.popitem(last=False)
                total -= s
        return value


KEPT = Kept()


def model_key(model) -> tuple:
    return (model.name, model.path)


def cache_of(model, ids, *, kept: Kept = KEPT):
    """The run of ``model`` on ``ids`` (every activation kept), run once and kept."""
    from attnlab.models.circuits.runs import run

    key = ("run", *model_key(model), tuple(int(i) for i in ids))
    return kept.get(key, lambda: run(model, list(ids)), cache_bytes)


def pair_of(model, clean_ids, corrupt_ids, *, answers=None, position: int = -1, kept: Kept = KEPT):
    """The clean and corrupted runs of two prompts and their metric, run once and kept."""
    from attnlab.models.circuits.patching import pair

    key = ("pair", *model_key(model), tuple(clean_ids), tuple(corrupt_ids), answers, position)
    return kept.get(
        key,
        lambda: pair(model, list(clean_ids), list(corrupt_ids), answers=answers, position=position),
        lambda p: cache_bytes(p.clean) + cache_bytes(p.corrupt),
    )
