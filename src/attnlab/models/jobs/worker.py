"""The model worker as the server sees it: start it, hand it tasks, read what it says.

``Worker`` spawns one process (the 'spawn' context: a fresh interpreter that
shares no threads, locks or GIL with the server) running ``work.main``, and a
thread here reads its messages, calling ``on_message(worker, message)`` for
each. Models are loaded in that process and kept there. ``mode`` says where
the work runs: "process", or "thread" when no process could start, or when it
died before saying ``READY`` ``RESPAWNS + 1`` times in a row (each early death
is followed by a new process after a doubling wait, ``BACKOFF_S`` first); then
a line on stderr says so, ``fallback`` says why (as data), and the server's
own requests slow down while a model runs, but nothing fails. The server tries
a process again later (:mod:`.line`). ``on_lost(worker)``
is called when a working process dies. ``stop()`` ends the process at once
(SIGTERM, then SIGKILL): it never waits for a forward pass. ``cancel(ids)``
asks the running jobs ``ids`` to stop at their next check: the ids go into a
cell the worker reads (shared memory with a process, an attribute in a
thread; ``work.main``'s ``cancel``). ``send(job)`` hands a job over: the next
one after the last ended, or, while a job that makes way runs, one for it to
run at its next check (:mod:`.work`).
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import threading
import time
from collections.abc import Callable

from attnlab.models.jobs import work

STOP_GRACE_S = 0.5  # after SIGTERM, before SIGKILL
KILLED_WAIT_S = 5.0  # a bound, in case the kernel is slow to end it
RESPAWNS = 3  # new processes after an early death, before falling back to a thread
CANCEL_BYTES = 128  # the cancel cell: the ids (16 characters each) of the jobs running, and room to spare
BACKOFF_S = 0.25  # the wait before the first of them; each next one waits twice as long

_CLOSED = object()


class ThreadPipe:
    """A pipe between two threads with a ``Connection``'s send, recv and close."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue = queue.SimpleQueue()

    def send(self, obj) -> None:
        self._queue.put(obj)

    def poll(self) -> bool:
        return not self._queue.empty()

    def recv(self):
        obj = self._queue.get()
        if obj is _CLOSED:
            self._queue.put(_CLOSED)  # every later recv sees the end too
            raise EOFError
        return obj

    def close(self) -> None:
        self._queue.put(_CLOSED)


class Worker:
    """One model worker and the thread that reads its messages."""

    def __init__(
        self,
        loader: Callable[[str], object],
        on_message: Callable[[Worker, tuple], None],
        on_lost: Callable[[Worker], None],
        *,
        process: bool = True,
        respawns: int = RESPAWNS,
        backoff_s: float = BACKOFF_S,
    ) -> None:
        self._loader = loader
        self._respawns, self._backoff_s = respawns, backoff_s
        self.early_deaths = 0  # processes that died before they were ready, in a row
        self.fallback: dict | None = None  # why the work runs in a thread: {"cause", ...}
        self.fallback_since = 0.0  # time.monotonic() when it did
        self._on_message = on_message
        self._on_lost = on_lost
        self._lock = threading.Lock()
        self._pending: dict = {}  # jobs handed over, not yet ended, by id: resent if a process never came up
        self._stopped = False
        self._proc = None
        self._tasks = None
        self._cancel = None  # the cell the running task's cancel check reads
        self.mode = ""
        if not process:
            self._start_thread()
            return
        try:
            self._start_process()
        except Exception as error:  # noqa: BLE001 - any failure to start means: use a thread
            self.fallback = {"cause": "start_failed", "error": f"{type(error).__name__}: {error}"}
            self._start_thread(f"{type(error).__name__}: {error}")

    @property
    def pid(self) -> int | None:
        """The worker process's id (``None`` in thread mode)."""
        return self._proc.pid if self._proc is not None else None

    def _start_process(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        cancel = ctx.Array("c", CANCEL_BYTES)  # shared memory: read by the process, written here
        tasks_in, tasks = ctx.Pipe(duplex=False)
        out, out_end = ctx.Pipe(duplex=False)
        args = (tasks_in, out_end, self._loader, cancel)
        proc = ctx.Process(target=work.main, args=args, name="attnlab-model", daemon=True)
        try:
            proc.start()
        finally:
            # our copies of the child's ends: closed, so each side sees EOF when the other goes
            tasks_in.close()
            out_end.close()
        self._proc, self._tasks, self._cancel, self.mode = proc, tasks, cancel, "process"
        self._start_reader(out, proc)

    def _start_thread(self, reason: str | None = None) -> None:
        self.fallback_since = time.monotonic()
        if reason is not None:
            print(
                f"attnlab: model work runs in a thread of the server (no worker process: {reason}); "
                "other requests may slow down while a model runs.",
                file=sys.stderr,
            )
        tasks, out, cancel = ThreadPipe(), ThreadPipe(), work.CancelCell()
        threading.Thread(
            target=work.main, args=(tasks, out, self._loader, cancel), name="attnlab-model", daemon=True
        ).start()
        self._proc, self._tasks, self._cancel, self.mode = None, tasks, cancel, "thread"
        self._start_reader(out, None)

    def _start_reader(self, conn, proc) -> None:
        name = "attnlab-model-reader"
        threading.Thread(target=self._read, args=(conn, proc), name=name, daemon=True).start()

    def send(self, job) -> None:
        """Hand ``job`` over (see the module)."""
        with self._lock:
            self._pending[job.id] = job
            try:
                self._tasks.send(job)
            except OSError:
                pass  # the process is gone: its reader reports it

    def cancel(self, job_ids) -> None:
        """Ask the running jobs ``job_ids`` to stop at their next check (a job that never checks goes on)."""
        with self._lock:
            cell = self._cancel
        if cell is not None:
            cell.value = " ".join(job_ids).encode("ascii")[: CANCEL_BYTES - 1]

    def _read(self, conn, proc) -> None:
        ready = False
        while True:
            try:
                message = conn.recv()
            except Exception:  # noqa: BLE001 - EOF, a closed pipe or a message that does not unpickle
                break
            if message == work.READY:
                ready = True
                self.early_deaths = 0
                continue
            if message[1] in ("done", "error", "cancelled"):
                with self._lock:
                    self._pending.pop(message[0], None)
            self._on_message(self, message)
        conn.close()
        if proc is not None and not ready:
            proc.join(STOP_GRACE_S)
            self.early_deaths += 1
            if self.early_deaths <= self._respawns:
                # a new process after a doubling wait (a machine short of memory, a slow disk at start)
                time.sleep(self._backoff_s * 2 ** (self.early_deaths - 1))
                with self._lock:
                    if self._stopped:
                        return
                    try:
                        self._start_process()
                    except Exception as error:  # noqa: BLE001 - as at the first start
                        self.fallback = {"cause": "start_failed", "error": f"{type(error).__name__}: {error}"}
                        self._start_thread(f"{type(error).__name__}: {error}")
                    for job in self._pending.values():
                        self._tasks.send(job)
                return
        with self._lock:
            if self._stopped:
                return
            if proc is not None and not ready:
                tries = self.early_deaths
                self.fallback = {"cause": "died_early", "exit_code": proc.exitcode, "tries": tries}
                self._start_thread(
                    f"the worker process exited with code {proc.exitcode} before it was ready, "
                    f"{self.early_deaths} times in a row"
                )
                for job in self._pending.values():
                    self._tasks.send(job)
                return
        self.early_deaths = 0
        self._on_lost(self)

    def stop(self) -> None:
        """End the worker now; a running task is abandoned. Safe to call twice."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            proc, tasks = self._proc, self._tasks
        if tasks is not None:
            tasks.close()  # a thread worker stops after its task; it cannot be killed
        if proc is not None:
            proc.terminate()
            proc.join(STOP_GRACE_S)
            if proc.is_alive():
                proc.kill()
                proc.join(KILLED_WAIT_S)  # SIGKILL cannot be refused: this only reaps it
