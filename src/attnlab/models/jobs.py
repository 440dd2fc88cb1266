"""Model traces and generations, queued and run one at a time by one worker process.

A web request starts a job and gets it back at once. Jobs wait in line (at
most ``MAX_WAITING`` besides the one running; more are refused with ``Busy``,
which carries an estimate of when to try again) and one worker process
(``worker.py``, spawned on the first job; its models are loaded once and kept)
runs them in order, reporting layers done, generated pieces and the finished
trace. This process only reads those messages, so its own requests (the
explorer's drags, a job's status) never wait behind a model's Python work.
Where no process can start, the worker is a thread here, and says so
(``worker_mode``; slower drags while a model runs, but the same answers).
A job's ``place``: 0 = the worker has it, 1 = next, ... (``None`` once ended).

Sharing: identical requests get the same job, with the same id (so they
follow one computation): a trace of the same model and text, or a generation
of the same prompt and options when it is repeatable (greedy, or sampled
with a seed; an unseeded draw is each learner's own). A queued, running or
kept finished job is shared; a failed or cancelled one is not.

Memory: finished traces stay in this process, so layers and rows are answered
without the worker. They are capped at ``TRACE_MEMORY_CAP`` bytes (512 MiB,
their arrays' ``nbytes`` in memory; a 256-token SmolLM2 trace keeps q, k, v and its
journey, about 30 MB, its logits go to disk): beyond it the least recently used are
spilled to a temporary folder and memory-mapped, and dropped only past ``spill_cap``
(:mod:`attnlab.models.shelf`; ``kept_bytes`` says how much is in memory).
``was_dropped(id)`` tells a dropped trace's id from one never kept: an id from an earlier
run of the server is unknown (ids are random, ``secrets.token_urlsafe``, never reused).

``shutdown()`` (also run at exit) cancels every waiting job and kills the
worker without waiting for a forward pass.

Circuits runs (``circuit()``, ``jobkinds.CircuitJob``) can be stopped by the learner:
``cancel(id)`` takes a waiting one out of the line, and asks the worker to stop a running
one at its next check (the worker's cancel cell, ``worker.Worker.cancel``); it then ends
``cancelled`` with what it had done.
"""

from __future__ import annotations

import atexit
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel import problems
from attnlab.models import registry
from attnlab.models.jobkinds import (
    MAX_CHARS,
    MAX_TOKENS,
    CircuitJob,
    GenerationJob,
    RunJob,
    TraceJob,
    check_chars,
    check_text,
    token_cap_message,
)
from attnlab.models.registry import get_model
from attnlab.models.sampling import Sampling
from attnlab.models.shelf import SPILL_CAP, TraceShelf
from attnlab.models.work import CircuitTask, GenerationTask, RunTask, TraceTask
from attnlab.models.worker import Worker

__all__ = [
    "JOBS", "MAX_CHARS", "MAX_TOKENS", "Busy", "GenerationJob", "Jobs", "Stopping", "TraceJob",
    "check_tokens", "count_text",
]

MAX_WAITING = 32  # queued jobs besides the running one: a class pressing "Look inside" at once
TRACE_MEMORY_CAP = 512 * 2**20  # in memory: a 256-token SmolLM2 trace keeps ~30 MB (q, k, v, journey)
KEEP_JOBS = 64  # finished generations, failed and cancelled jobs (traces: by memory instead)
RETRY_PROCESS_S = 60.0  # after falling back to a thread, the next job this much later tries a process again
RETRY_AFTER_S = 5  # the estimate before any job has finished
MAX_RETRY_AFTER_S = 60
ID_BYTES = 12  # 16 URL-safe characters

Job = TraceJob | GenerationJob | RunJob | CircuitJob


class Busy(Exception):
    """The line is full: ``ahead`` requests before this one; ``retry_after`` (seconds) estimates when
    a place frees up. Its message is the lab's (:func:`attnlab.lab.realmodel.problems.busy`)."""

    def __init__(self, ahead: int, retry_after: int) -> None:
        super().__init__(problems.busy(ahead))
        self.ahead = ahead
        self.retry_after = retry_after


class Stopping(Exception):
    """The jobs were shut down: the server is stopping (the lab's words: ``problems.stopping``)."""

    def __init__(self) -> None:
        super().__init__(problems.stopping())


def check_model(model: object) -> str:
    """Return ``model`` if the registry knows it, else raise ``FieldError(("model",), ...)``."""
    return registry.check_name(model)


def check_tokens(model: str, text: str, *, field: str = "text") -> int:
    """The number of tokens of ``text`` for ``model`` (its tokenizer alone), or FieldError over its cap."""
    from attnlab.models.files import ModelNotInstalled

    try:
        n = len(registry.token_strings(model, text))
    except ModelNotInstalled as error:
        raise FieldError(("model",), problems.cannot_load(str(error))) from None
    cap = registry.spec(model).max_tokens
    if n > cap:
        raise FieldError((field,), token_cap_message(model, n, cap))
    return n


def count_text(model: str, text: str) -> list[str]:
    """The tokens ``model``'s trace of ``text`` will have (its tokenizer alone; ``""`` has none).

    ``FieldError`` at ``model`` (unknown, or its package missing) or at ``text`` (half a
    character, or more characters than the model's view takes).
    """
    from attnlab.models.files import ModelNotInstalled

    spec = registry.spec(model)
    check_chars(text, max_chars=spec.max_chars)
    try:
        return registry.token_strings(model, text) if text else []
    except ModelNotInstalled as error:
        raise FieldError(("model",), problems.cannot_load(str(error))) from None


def _task(job: Job) -> TraceTask | GenerationTask | RunTask | CircuitTask:
    if isinstance(job, CircuitJob):
        return CircuitTask(job.id, job.model, job.function, job.arguments)
    if isinstance(job, RunJob):
        return RunTask(job.id, job.model, job.function, job.arguments)
    if isinstance(job, TraceJob):
        return TraceTask(job.id, job.model, job.text)
    return GenerationTask(job.id, job.model, job.prompt, job.max_new_tokens, job.sampling, job.chat)


class Jobs:
    """Jobs by id, run by one worker (a process unless ``process=False``); ``loader(name)`` gives models.

    With a process, ``loader`` must be importable there (a module-level function).
    """

    def __init__(
        self,
        *,
        loader: Callable[[str], object] = get_model,
        count_first: bool | None = None,
        process: bool = True,
        max_waiting: int = MAX_WAITING,
        memory_cap: int = TRACE_MEMORY_CAP,
        spill_cap: int = SPILL_CAP,
        spill_dir: str | None = None,
        keep_jobs: int = KEEP_JOBS,
        retry_process_s: float = RETRY_PROCESS_S,
    ) -> None:
        self.max_waiting = max_waiting
        self._retry_process_s = retry_process_s
        self.computations = 0  # tasks handed to the worker: shared requests do not add one
        self._loader = loader
        # count tokens here, before anything is queued or loaded (default: with the real models)
        self._count_first = loader is get_model if count_first is None else count_first
        self._process = process
        self._keep_jobs = keep_jobs
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._by_id: dict[str, Job] = {}
        self._by_key: dict[tuple, Job] = {}  # shareable jobs (queued, running, kept done)
        self._waiting: deque[Job] = deque()
        self._running: Job | None = None
        self._started_at = 0.0
        self._durations: deque[float] = deque(maxlen=8)
        self._shelf = TraceShelf(memory_cap, spill_cap=spill_cap, spill_dir=spill_dir)
        self._ended: OrderedDict[str, Job] = OrderedDict()  # all but done traces, oldest first
        self._loaded: set[str] = set()
        self._paths: dict[str, str] = {}  # model -> what its products run on, as the worker said
        self._worker: Worker | None = None
        self._closed = False
        atexit.register(self.shutdown)

    # -- asking -----------------------------------------------------------------

    def start(self, model: str, text: str) -> TraceJob:
        """The trace job of ``text`` with ``model``: a new one, or the identical one already here."""
        spec = registry.spec(check_model(model))
        check_text(text, max_chars=spec.max_chars)
        if self._count_first:
            check_tokens(model, text)
        return self._submit(TraceJob(id=self._new_id(), model=model, text=text))

    def generate(
        self,
        prompt: str,
        *,
        max_new_tokens: int,
        sampling: Sampling,
        chat: bool = False,
        model: str | None = None,
    ) -> GenerationJob:
        """A model's continuation of ``prompt``; its pieces arrive in the job as they come.

        ``model``: the first model that generates when ``None``; ``chat``: wrap the
        prompt in the chat template (only when asked: the text is continued as it is otherwise).
        """
        if model is None:
            model = registry.decoders()[0]
        spec = registry.spec(check_model(model))
        if not spec.generates:
            raise FieldError(("model",), problems.encoder_cannot_write(spec.title))
        check_text(prompt, field="prompt", max_chars=spec.max_chars * 4)
        if self._count_first:  # before: a 4,000-token prompt was accepted and took the worker 27 s
            check_tokens(model, prompt, field="prompt")
        job = GenerationJob(
            id=self._new_id(),
            model=model,
            prompt=prompt,
            max_new_tokens=max_new_tokens,
            sampling=sampling,
            chat=bool(chat),
        )
        return self._submit(job)

    def run(self, model: str, function: str, arguments: tuple = ()) -> RunJob:
        """A lab's run of ``function`` on ``model`` (``jobkinds.RunJob``): a new job, or the identical one
        already here (queued, running or kept)."""
        check_model(model)
        return self._submit(RunJob(id=self._new_id(), model=model, function=function, arguments=arguments))

    def circuit(self, model: str, function: str, arguments: tuple = ()) -> CircuitJob:
        """A circuits run of ``function`` on ``model`` (``jobkinds.CircuitJob``): a new job, or the identical
        one already here (queued, running or kept; a cancelled one is not)."""
        check_model(model)
        job = CircuitJob(id=self._new_id(), model=model, function=function, arguments=arguments)
        return self._submit(job)

    def cancel(self, job_id: str) -> CircuitJob | None:
        """Stop circuits job ``job_id``: out of the line if it waits (ended ``cancelled``, no result), or
        asked to stop at its next check if it runs. ``None`` for an id that is no circuits job here."""
        with self._lock:
            job = self._by_id.get(job_id)
            if not isinstance(job, CircuitJob):
                return None
            if job.finished or job.cancel_asked:
                return job
            job.cancel_asked = True
            if job is self._running:
                if self._worker is not None:
                    self._worker.cancel(job.id)
                return job
            self._waiting.remove(job)
            job.apply("cancelled", None)
            self._end(job)
            self._changed.notify_all()
            return job

    @staticmethod
    def _new_id() -> str:
        return secrets.token_urlsafe(ID_BYTES)

    def _submit(self, job: Job) -> Job:
        key = job.share_key
        with self._lock:
            if self._closed:
                raise Stopping()
            shared = self._by_key.get(key) if key is not None else None
            if shared is not None:
                self._shelf.touch(shared.id)
                return shared
            if len(self._waiting) >= self.max_waiting:
                raise Busy(len(self._waiting) + (self._running is not None), self._retry_after())
            self._by_id[job.id] = job
            if key is not None:
                self._by_key[key] = job
            self._waiting.append(job)
            self._dispatch()
        return job

    def _retry_after(self) -> int:
        # A place frees when the running job ends: about one job's time.
        if not self._durations:
            return RETRY_AFTER_S
        mean = sum(self._durations) / len(self._durations)
        return max(1, min(MAX_RETRY_AFTER_S, math.ceil(mean)))

    # -- looking ----------------------------------------------------------------

    def trace_job(self, job_id: str) -> TraceJob | None:
        """The trace job ``job_id`` (marked as just used), or ``None``; a generation's id gives ``None``."""
        with self._lock:
            job = self._by_id.get(job_id)
            if not isinstance(job, TraceJob):
                return None
            self._shelf.touch(job_id)
            return job

    def was_dropped(self, job_id: str) -> bool:
        """Whether ``job_id`` was a finished trace dropped to make room (not an id never kept)."""
        with self._lock:
            return self._shelf.was_dropped(job_id)

    def circuit_job(self, job_id: str) -> CircuitJob | None:
        """The circuits job ``job_id``, or ``None``; another kind's id gives ``None``."""
        with self._lock:
            job = self._by_id.get(job_id)
            return job if isinstance(job, CircuitJob) else None

    def generation(self, job_id: str) -> GenerationJob | None:
        """The generation job ``job_id``, or ``None``; a trace's id gives ``None``."""
        with self._lock:
            job = self._by_id.get(job_id)
            return job if isinstance(job, GenerationJob) else None

    def place(self, job: Job) -> int | None:
        """0 when the worker has ``job``, n when n - 1 jobs wait before it, ``None`` once it ended."""
        with self._lock:
            if job is self._running:
                return 0
            for n, waiting in enumerate(self._waiting, start=1):
                if waiting is job:
                    return n
            return None

    def wait(self, job: Job, timeout: float | None = None) -> bool:
        """Block until ``job`` ends (or ``timeout`` seconds pass); return whether it ended."""
        with self._changed:
            return self._changed.wait_for(lambda: job.finished, timeout)

    def is_loaded(self, name: str) -> bool:
        """Whether the worker holds model ``name`` already (a job on it starts at once)."""
        return name in self._loaded

    def weights_path(self, name: str) -> str | None:
        """What model ``name``'s products run on in the worker ("q4_1", "float32"), once it is loaded."""
        return self._paths.get(name)

    @property
    def kept_bytes(self) -> int:
        """Bytes of the finished traces kept (at most ``memory_cap``, or the newest alone)."""
        return self._shelf.kept_bytes

    @property
    def memory_cap(self) -> int:
        return self._shelf.cap

    @property
    def worker_mode(self) -> str:
        """Where model work runs: "process", "thread" (no process could start) or "" (not yet)."""
        worker = self._worker
        return worker.mode if worker is not None else ""

    @property
    def worker_fallback(self) -> dict | None:
        """Why model work runs in a thread (``Worker.fallback``), or None when it does not."""
        worker = self._worker
        return worker.fallback if worker is not None and worker.mode == "thread" else None

    @property
    def worker_pid(self) -> int | None:
        worker = self._worker
        return worker.pid if worker is not None else None

    # -- running (the lock is held in every method below but shutdown) -----------

    def _dispatch(self) -> None:
        if self._running is not None or not self._waiting or self._closed:
            return
        job = self._running = self._waiting.popleft()
        self._started_at = time.monotonic()
        worker = self._worker
        if worker is not None and worker.mode == "thread" and self._process and worker.fallback is not None:
            if time.monotonic() - worker.fallback_since >= self._retry_process_s:
                worker.stop()  # idle (nothing runs between jobs): try a process again
                self._worker = None
        if self._worker is None:
            self._worker = Worker(self._loader, self._on_message, self._on_lost, process=self._process)
        self.computations += 1
        self._worker.send(_task(job))

    def _on_message(self, worker: Worker, message: tuple) -> None:
        with self._lock:
            job = self._running
            if worker is not self._worker or job is None or message[0] != job.id:
                return  # from a worker or job already given up
            if message[1] == "weights":
                self._paths[job.model] = message[2]
                return
            if message[1] == "views" and isinstance(job, TraceJob):
                job.views.update(message[2])  # kept JSON bodies: their first request costs nothing
                return
            job.apply(*message[1:])
            if job.status == "running":
                self._loaded.add(job.model)
            if job.finished:
                self._durations.append(time.monotonic() - self._started_at)
                self._end(job)
                self._dispatch()
            self._changed.notify_all()

    def _on_lost(self, worker: Worker) -> None:
        with self._lock:
            if worker is not self._worker:
                return
            self._worker = None
            self._loaded.clear()
            self._paths.clear()
            job = self._running
            if job is not None:
                job.apply("error", None, problems.worker_lost())
                self._end(job)
            self._dispatch()  # the next job starts a new worker
            self._changed.notify_all()
        worker.stop()

    def _end(self, job: Job) -> None:
        if job is self._running:
            self._running = None
        if job.status == "done" and isinstance(job, TraceJob):
            for old in self._shelf.add(job):
                self._forget(old)
            return
        if job.status != "done":
            self._unshare(job)
        self._ended[job.id] = job
        while len(self._ended) > self._keep_jobs:
            _, old = self._ended.popitem(last=False)
            self._forget(old)

    def _unshare(self, job: Job) -> None:
        key = job.share_key
        if key is not None and self._by_key.get(key) is job:
            del self._by_key[key]

    def _forget(self, job: Job) -> None:
        self._by_id.pop(job.id, None)
        self._unshare(job)

    # -- stopping ---------------------------------------------------------------

    def shutdown(self) -> None:
        """Cancel every waiting job and kill the worker now (no forward pass is waited for). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            worker, self._worker = self._worker, None
            if self._running is not None:
                self._running.cancel(problems.cancelled(running=True))
                self._end(self._running)
            while self._waiting:
                job = self._waiting.popleft()
                job.cancel(problems.cancelled(running=False))
                self._end(job)
            self._loaded.clear()
            self._paths.clear()
            self._changed.notify_all()
        if worker is not None:
            worker.stop()
        self._shelf.close()


JOBS = Jobs()
