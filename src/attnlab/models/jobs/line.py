"""The model job line: jobs queued by client, served in turn by one worker, estimated, abandoned.

A web request starts a job and gets it back at once; one worker process (:mod:`.worker`,
spawned on the first job; its models are loaded once and kept) runs them, reporting layers
done, generated pieces and the finished result. This process only reads those messages, so
its own requests (the explorer's drags, a job's status) never wait behind a model's work.
Where no process can start, the worker is a thread here, and says so (``worker_mode``;
slower drags while a model runs, but the same answers).

**Fair turns.** Every job is for a :class:`~.turns.Client` (an address and a session on it:
``Jobs.of(client)`` gives the line as that client sees it; a caller in this process is
:data:`~.turns.LOCAL`). Waiting jobs are served in turn (:class:`~.turns.Turns`): addresses by
turn, a new one first, then sessions, then each session's jobs in order, so thirty jobs of one
client do not delay another's first. A patching sweep, while it runs, makes way between two
patches for another learner's job that is not a sweep (:mod:`.work`): a small trace waits for
one patch, not for the sweep.

**Caps.** One address may have at most ``per_address`` jobs in line (waiting or running;
:data:`PER_ADDRESS`); more are refused with :class:`OverCap`, and the whole line holds at most
``max_waiting`` waiting jobs (:data:`MAX_WAITING`), more refused with :class:`Busy`. Both carry
``retry_after``: the estimated seconds until the refusal would pass (the end of that address's
first job in line; the next start), from the jobs ahead and their measured rates
(:mod:`.rates`). A job's ``place``: 0 = the worker has it, 1 = next, ... (``None`` once ended).

**Abandoned jobs.** A job nobody has asked about for ``abandon_s`` seconds (:data:`ABANDON_S`:
no poll of its status, no identical request, no open socket of a client that wants it:
:meth:`Jobs.watching`) is cancelled: out of the line if it waits; stopped at its next check if
it runs and can stop (a sweep keeps its partial result, a generation its pieces); a trace or
a lab's run that cannot stop finishes and is kept. A thread of the line looks every
``reap_every_s`` seconds (:meth:`Jobs.reap`).

**Sharing.** Identical requests get the same job, with the same id: a trace of the same model
and text, a generation of the same prompt and options when it is repeatable (greedy, or
sampled with a seed), identical runs. A queued, running or kept finished job is shared; a
failed or cancelled one is not. Joining a job takes no place in line.

**Memory.** Finished traces stay in this process (:class:`~.kept.TraceShelf`: ``memory_cap``
bytes in memory, spilled to a folder of this process's own beyond it, dropped only past
``spill_cap``); ``was_dropped(id)`` tells a dropped trace's id from one never kept (ids are
random, ``secrets.token_urlsafe``, never reused).

``shutdown()`` (also run at exit) cancels every waiting job and kills the worker without
waiting for a forward pass.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator

from attnlab.models import registry
from attnlab.models.errors import Refusal, worded
from attnlab.models.jobs.kept import SPILL_CAP, TraceShelf
from attnlab.models.jobs.kinds import CircuitJob, GenerationJob, Job, RunJob, TraceJob
from attnlab.models.jobs.rates import Rates
from attnlab.models.jobs.texts import check_model, check_text, check_tokens
from attnlab.models.jobs.turns import LOCAL, Client, Turns
from attnlab.models.jobs.worker import Worker
from attnlab.models.registry import get_model
from attnlab.models.sampling import Sampling

MAX_WAITING = 480  # waiting jobs in all: a class of 60, each with a page's worth in line
PER_ADDRESS = 8  # jobs in line (waiting or running) of one address: a page or two (the needle lab asks 5)
ABANDON_S = 120.0  # a job nobody asked about this long is cancelled (a hidden tab polls once a minute)
REAP_EVERY_S = 5.0  # how often the line looks for abandoned jobs
TRACE_MEMORY_CAP = 512 * 2**20  # in memory: a 256-token SmolLM2 trace keeps ~30 MB (q, k, v, journey)
KEEP_JOBS = 64  # finished generations and runs, failed and cancelled jobs (traces: by memory instead)
RETRY_PROCESS_S = 60.0  # after falling back to a thread, the next job this much later tries a process again
MAX_RETRY_AFTER_S = 3600  # a Retry-After beyond an hour says an hour: the page asks again then
ID_BYTES = 12  # 16 URL-safe characters
MAX_CLIENTS = 64  # clients a shared job keeps (each gets it a turn): a class asking for one text


class Busy(Exception):
    """The line is full: ``ahead`` jobs before this one; ``retry_after`` (seconds) estimates when
    a place frees up. Its message is the lab's (the lab's ``busy``)."""

    def __init__(self, ahead: int, retry_after: int) -> None:
        super().__init__(worded("busy", ahead))
        self.ahead = ahead
        self.retry_after = retry_after


class OverCap(Busy):
    """This address has ``cap`` jobs in line already; ``retry_after`` estimates when its first ends.
    Its message is the lab's (the lab's ``over_cap``)."""

    def __init__(self, cap: int, retry_after: int) -> None:
        Exception.__init__(self, worded("over_cap", cap, retry_after))
        self.ahead = self.cap = cap
        self.retry_after = retry_after


class Stopping(Exception):
    """The jobs were shut down: the server is stopping (the lab's words: ``stopping``)."""

    def __init__(self) -> None:
        super().__init__(worded("stopping", ))


def whole_seconds(seconds: float) -> int:
    """A wait as a Retry-After says it: whole seconds, at least 1, at most :data:`MAX_RETRY_AFTER_S`."""
    return max(1, min(MAX_RETRY_AFTER_S, math.ceil(seconds)))


class Jobs:
    """Jobs by id, run by one worker (a process unless ``process=False``); ``loader(name)`` gives models.

    With a process, ``loader`` must be importable there (a module-level function). ``clock``
    (seconds) and ``rates`` are the real ones unless a test gives its own.
    """

    def __init__(
        self,
        *,
        loader: Callable[[str], object] = get_model,
        count_first: bool | None = None,
        process: bool = True,
        max_waiting: int = MAX_WAITING,
        per_address: int = PER_ADDRESS,
        abandon_s: float = ABANDON_S,
        reap_every_s: float = REAP_EVERY_S,
        memory_cap: int = TRACE_MEMORY_CAP,
        spill_cap: int = SPILL_CAP,
        spill_dir: str | None = None,
        keep_jobs: int = KEEP_JOBS,
        retry_process_s: float = RETRY_PROCESS_S,
        clock: Callable[[], float] = time.monotonic,
        rates: Rates | None = None,
    ) -> None:
        self.max_waiting = max_waiting
        self.per_address = per_address
        self.abandon_s = abandon_s
        self.rates = rates if rates is not None else Rates()
        self.computations = 0  # jobs handed to the worker: shared requests do not add one
        self._clock = clock
        self._reap_every_s = reap_every_s
        self._retry_process_s = retry_process_s
        self._loader = loader
        # count tokens here, before anything is queued or loaded (default: with the real models)
        self._count_first = loader is get_model if count_first is None else count_first
        self._process = process
        self._keep_jobs = keep_jobs
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._by_id: dict[str, Job] = {}
        self._by_key: dict[tuple, Job] = {}  # shareable jobs (queued, running, kept done)
        self._turns = Turns()
        self._running: list[Job] = []  # the job on top runs; one below it makes way (a sweep at its check)
        self._in_line: Counter[str] = Counter()  # jobs in line (waiting or running) by starter's address
        self._watched: Counter[Client] = Counter()  # clients with an open socket (``watching``)
        self._shelf = TraceShelf(memory_cap, spill_cap=spill_cap, spill_dir=spill_dir)
        self._ended: OrderedDict[str, Job] = OrderedDict()  # all but done traces, oldest first
        self._loaded: set[str] = set()
        self._paths: dict[str, str] = {}  # model -> what its products run on, as the worker said
        self._worker: Worker | None = None
        self._reaper: threading.Thread | None = None
        self._stop = threading.Event()
        self._closed = False
        atexit.register(self.shutdown)

    # -- asking -----------------------------------------------------------------

    def of(self, client: Client) -> ClientLine:
        """The line as ``client`` sees it: the jobs it starts are its own (see :class:`ClientLine`)."""
        return ClientLine(self, client)

    def start(self, model: str, text: str, *, client: Client = LOCAL) -> TraceJob:
        """The trace job of ``text`` with ``model``: a new one, or the identical one already here."""
        spec = registry.spec(check_model(model))
        check_text(text, max_chars=spec.max_chars)
        if self._count_first:
            check_tokens(model, text)
        return self._submit(TraceJob(id=self._new_id(), model=model, text=text), client)

    def generate(
        self,
        prompt: str,
        *,
        max_new_tokens: int,
        sampling: Sampling,
        chat: bool = False,
        model: str | None = None,
        client: Client = LOCAL,
    ) -> GenerationJob:
        """A model's continuation of ``prompt``; its pieces arrive in the job as they come.

        ``model``: the first model that generates when ``None``; ``chat``: wrap the
        prompt in the chat template (only when asked: the text is continued as it is otherwise).
        """
        if model is None:
            model = registry.decoders()[0]
        spec = registry.spec(check_model(model))
        if not spec.generates:
            raise Refusal(("model",), "encoder_cannot_write", spec.title)
        check_text(prompt, field="prompt", max_chars=spec.max_chars * 4)
        if self._count_first:  # before: a 4,000-token prompt was accepted and took the worker 27 s
            check_tokens(model, prompt, field="prompt")
        job = GenerationJob(
            id=self._new_id(), model=model, prompt=prompt, max_new_tokens=max_new_tokens, sampling=sampling,
            chat=bool(chat),
        )  # fmt: skip
        return self._submit(job, client)

    def run(self, model: str, function: str, arguments: tuple = (), *, client: Client = LOCAL) -> RunJob:
        """A lab's run of ``function`` on ``model`` (:class:`~.kinds.RunJob`): a new job, or the identical
        one already here (queued, running or kept)."""
        check_model(model)
        return self._submit(RunJob(id=self._new_id(), model=model, function=function, arguments=arguments),
                            client)  # fmt: skip

    def circuit(
        self, model: str, function: str, arguments: tuple = (), *, client: Client = LOCAL
    ) -> CircuitJob:
        """A circuits run of ``function`` on ``model`` (:class:`~.kinds.CircuitJob`): a new job, or the
        identical one already here (queued, running or kept; a cancelled one is not)."""
        check_model(model)
        job = CircuitJob(id=self._new_id(), model=model, function=function, arguments=arguments)
        return self._submit(job, client)

    def cancel(self, job_id: str) -> Job | None:
        """Stop job ``job_id``: out of the line if it waits (ended ``cancelled``, no result), or asked to
        stop at its next check if it runs (a job that cannot stop finishes). ``None`` for an unknown id."""
        with self._lock:
            job = self._by_id.get(job_id)
            if job is not None:
                self._cancel(job, "")
            return job

    @staticmethod
    def _new_id() -> str:
        return secrets.token_urlsafe(ID_BYTES)

    def _submit(self, job: Job, client: Client) -> Job:
        key = job.share_key
        with self._lock:
            if self._closed:
                raise Stopping()
            now = self._clock()
            self._reap(now)
            shared = self._by_key.get(key) if key is not None else None
            if shared is not None:
                if self._want(shared, client, now) and shared in self._turns:
                    self._turns.add(shared, client)  # a place in this client's turn too
                self._shelf.touch(shared.id)
                return shared
            if self._in_line[client.address] >= self.per_address:
                raise OverCap(self.per_address, whole_seconds(self._wait_for(client.address, now)))
            if len(self._turns) >= self.max_waiting:
                ahead = len(self._turns) + len(self._running)
                raise Busy(ahead, whole_seconds(self._next_start(now)))
            self._want(job, client, now)
            self._by_id[job.id] = job
            if key is not None:
                self._by_key[key] = job
            self._in_line[client.address] += 1
            self._turns.add(job, client)
            self._dispatch()
            self._start_reaper()
        return job

    @staticmethod
    def _want(job: Job, client: Client, now: float) -> bool:
        """``client`` wants ``job`` (asked for it now); whether it is a new one of its clients."""
        job.seen = now
        if job.finished or client in job.clients or len(job.clients) >= MAX_CLIENTS:
            return False
        job.clients.append(client)
        return True

    # -- looking ----------------------------------------------------------------

    def _looked_up(self, job_id: str, kind: type) -> Job | None:
        with self._lock:
            job = self._by_id.get(job_id)
            if not isinstance(job, kind):
                return None
            job.seen = self._clock()  # asked about: not abandoned
            return job

    def trace_job(self, job_id: str) -> TraceJob | None:
        """The trace job ``job_id`` (marked as just used), or ``None``; a generation's id gives ``None``."""
        job = self._looked_up(job_id, TraceJob)
        if job is not None:
            with self._lock:
                self._shelf.touch(job_id)
        return job

    def was_dropped(self, job_id: str) -> bool:
        """Whether ``job_id`` was a finished trace dropped to make room (not an id never kept)."""
        with self._lock:
            return self._shelf.was_dropped(job_id)

    def circuit_job(self, job_id: str) -> CircuitJob | None:
        """The circuits job ``job_id``, or ``None``; another kind's id gives ``None``."""
        return self._looked_up(job_id, CircuitJob)

    def generation(self, job_id: str) -> GenerationJob | None:
        """The generation job ``job_id``, or ``None``; a trace's id gives ``None``."""
        return self._looked_up(job_id, GenerationJob)

    def place(self, job: Job) -> int | None:
        """0 when the worker has ``job``, n when n - 1 jobs would be served before it, ``None`` once ended."""
        with self._lock:
            if job in self._running:
                return 0
            if job not in self._turns:
                return None
            return 1 + self._turns.order().index(job)

    def wait_s(self, job: Job) -> float | None:
        """The estimated seconds until ``job`` ends (``None`` once it has)."""
        with self._lock:
            if job.finished:
                return None
            now = self._clock()
            t = 0.0
            for running in reversed(self._running):
                t += self._remaining(running, now)
                if running is job:
                    return t
            for waiting in self._turns.order():
                t += self._estimate(waiting)
                if waiting is job:
                    return t
            return None

    def wait(self, job: Job, timeout: float | None = None) -> bool:
        """Block until ``job`` ends (or ``timeout`` seconds pass); return whether it ended.

        While someone waits here, the job is wanted: it is never abandoned.
        """
        with self._changed:
            job.watchers += 1
            try:
                return self._changed.wait_for(lambda: job.finished, timeout)
            finally:
                job.watchers -= 1
                job.seen = self._clock()

    @contextlib.contextmanager
    def watching(self, client: Client) -> Iterator[None]:
        """While the block runs (a socket of ``client`` is open), ``client``'s jobs are wanted: never
        abandoned. After it, the time without anyone asking counts from its end."""
        with self._lock:
            self._watched[client] += 1
        try:
            yield
        finally:
            with self._lock:
                self._watched[client] -= 1
                if not self._watched[client]:
                    del self._watched[client]
                now = self._clock()
                for job in self._line():
                    if client in job.clients:
                        job.seen = max(job.seen, now)

    def is_loaded(self, name: str) -> bool:
        """Whether the worker holds model ``name`` already (a job on it starts at once)."""
        return name in self._loaded

    def weights_path(self, name: str) -> str | None:
        """What model ``name``'s products run on in the worker ("q4_1", "float32"), once it is loaded."""
        return self._paths.get(name)

    def in_line(self, address: str) -> int:
        """Jobs in line (waiting or running) started from ``address``."""
        with self._lock:
            return self._in_line[address]

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

    # -- estimates (the lock is held) -----------------------------------------------

    def _estimate(self, job: Job) -> float:
        return self.rates.seconds(job.rate_key, job.units())

    def _active(self, job: Job, now: float) -> float:
        return job.active_s + (now - job.active_since if job.active_since is not None else 0.0)

    def _remaining(self, job: Job, now: float) -> float:
        """The estimated seconds a running job still needs: from its own pace once it has made
        progress, else from its kind's rate."""
        active = self._active(job, now)
        progress = job.progress_units()
        if progress is not None and progress[0] > 0:
            done, total = progress
            return active / done * max(0.0, total - done)
        return max(0.0, self._estimate(job) - active)

    def _next_start(self, now: float) -> float:
        """Seconds until the next waiting job starts: the running job on top ends (or makes way)."""
        if not self._running:
            return 0.0
        return self._remaining(self._running[-1], now)

    def _wait_for(self, address: str, now: float) -> float:
        """Seconds until the first of ``address``'s jobs in line ends: the jobs ahead of it at their rates."""
        t = 0.0
        for job in reversed(self._running):
            t += self._remaining(job, now)
            if job.owner.address == address:
                return t
        for job in self._turns.order():
            t += self._estimate(job)
            if job.owner.address == address:
                return t
        return t

    # -- abandoned jobs (the lock is held in _reap) --------------------------------------

    def reap(self) -> list[Job]:
        """Cancel the jobs nobody has asked about for ``abandon_s`` seconds; return them."""
        with self._lock:
            return self._reap(self._clock())

    def _line(self) -> list[Job]:
        return [*self._running, *self._turns]

    def _reap(self, now: float) -> list[Job]:
        gone = []
        for job in self._line():
            wanted = job.watchers or any(c in self._watched for c in job.clients)
            if job.cancel_asked or wanted or now - job.seen < self.abandon_s:
                continue
            self._cancel(job, worded("abandoned", self.abandon_s))
            gone.append(job)
        return gone

    def _start_reaper(self) -> None:
        if self._reaper is None and self._reap_every_s > 0:
            self._reaper = threading.Thread(target=self._reap_now_and_then, name="attnlab-jobs-reaper",
                                            daemon=True)  # fmt: skip
            self._reaper.start()

    def _reap_now_and_then(self) -> None:
        while not self._stop.wait(self._reap_every_s):
            self.reap()

    # -- running (the lock is held in every method below but shutdown) -----------

    def _cancel(self, job: Job, message: str) -> None:
        if job.finished or job.cancel_asked:
            return
        job.cancel_asked = True
        if job in self._turns:
            self._turns.remove(job)
            job.apply("cancelled", None)
            job.message = message
            self._end(job)
            self._changed.notify_all()
        elif job in self._running and job.stoppable and self._worker is not None:
            job.message = message  # why, kept when the worker says it stopped
            self._worker.cancel([j.id for j in self._running if j.cancel_asked])

    def _dispatch(self) -> None:
        if self._closed:
            return
        if not self._running:
            job = self._turns.take()
        elif len(self._running) == 1 and self._running[0].yields and self._running[0].status == "running":
            busy = {c.address for c in self._running[0].clients}  # a client's own jobs wait for its sweep
            job = self._turns.take(lambda j, c: not j.yields and c.address not in busy)
        else:
            return
        if job is None:
            return
        now = self._clock()
        if self._running:  # the sweep makes way: its time stops while the other job runs
            below = self._running[-1]
            below.active_s = self._active(below, now)
            below.active_since = None
        job.active_since = now
        self._running.append(job)
        worker = self._worker
        if worker is not None and worker.mode == "thread" and self._process and worker.fallback is not None:
            if len(self._running) == 1 and now - worker.fallback_since >= self._retry_process_s:
                worker.stop()  # idle (nothing runs between jobs): try a process again
                self._worker = None
        if self._worker is None:
            self._worker = Worker(self._loader, self._on_message, self._on_lost, process=self._process)
        self.computations += 1
        self._worker.send(job)

    def _on_message(self, worker: Worker, message: tuple) -> None:
        with self._lock:
            job = next((j for j in self._running if j.id == message[0]), None)
            if worker is not self._worker or job is None:
                return  # from a worker or job already given up
            if message[1] == "weights":
                self._paths[job.model] = message[2]
                return
            was = job.status
            job.apply(*message[1:])
            if job.status == "running":
                self._loaded.add(job.model)
            if job.finished:
                self._end(job)
                self._dispatch()
            elif job.status == "running" and was != "running" and job.yields:
                self._dispatch()  # a sweep under way: another learner's job may go at its next check
            self._changed.notify_all()

    def _on_lost(self, worker: Worker) -> None:
        with self._lock:
            if worker is not self._worker:
                return
            self._worker = None
            self._loaded.clear()
            self._paths.clear()
            for job in list(reversed(self._running)):
                job.apply("error", None, worded("worker_lost", ))
                self._end(job)
            self._dispatch()  # the next job starts a new worker
            self._changed.notify_all()
        worker.stop()

    def _end(self, job: Job) -> None:
        now = self._clock()
        if job in self._running:
            if job.status == "done":  # its measured pace: the next estimates of its kind
                self.rates.add(job.rate_key, self._active(job, now), job.units_done())
            self._running.remove(job)
            job.active_s, job.active_since = self._active(job, now), None
            if self._running and self._running[-1].active_since is None:
                self._running[-1].active_since = now  # the sweep that made way goes on
        if job.clients:
            address = job.owner.address
            self._in_line[address] -= 1
            if self._in_line[address] <= 0:
                del self._in_line[address]
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
            self._stop.set()
            worker, self._worker = self._worker, None
            for job in list(reversed(self._running)):
                job.cancel(worded("cancelled", running=True))
                self._end(job)
            for job in self._turns.order():
                self._turns.remove(job)
                job.cancel(worded("cancelled", running=False))
                self._end(job)
            self._loaded.clear()
            self._paths.clear()
            self._changed.notify_all()
        if worker is not None:
            worker.stop()
        self._shelf.close()


class ClientLine:
    """The line as one client sees it (``Jobs.of(client)``): ``start``, ``generate``, ``run`` and
    ``circuit`` are that client's requests; everything else is the line's own."""

    def __init__(self, jobs: Jobs, client: Client) -> None:
        self.jobs, self.client = jobs, client

    def start(self, model: str, text: str) -> TraceJob:
        return self.jobs.start(model, text, client=self.client)

    def generate(self, prompt: str, **options) -> GenerationJob:
        return self.jobs.generate(prompt, client=self.client, **options)

    def run(self, model: str, function: str, arguments: tuple = ()) -> RunJob:
        return self.jobs.run(model, function, arguments, client=self.client)

    def circuit(self, model: str, function: str, arguments: tuple = ()) -> CircuitJob:
        return self.jobs.circuit(model, function, arguments, client=self.client)

    def __getattr__(self, name: str):
        return getattr(self.jobs, name)


JOBS = Jobs()
