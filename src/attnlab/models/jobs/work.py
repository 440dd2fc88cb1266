"""The model work as the worker does it: jobs in, messages out.

``main(tasks, out, loader, cancel)`` is the worker process's entry point (it also runs in a
thread where no process can start). ``tasks.recv()`` gives a job (a copy of one of
:mod:`.kinds`' classes: the request; ``None`` or a closed pipe: stop); ``loader(name)`` gives
a model, kept for the next jobs. ``READY`` is sent once, first. Then each job's messages are
tuples that start with its id:

- ``(id, "loading")``: the model is being loaded (once per worker);
- ``(id, "weights", path)``: the model is loaded; ``path`` says what its products run on
  ("q4_1": the file's blocks, "float32": float weights), when the model says;
- ``(id, "running", n)``: ``n`` layers (trace), at most ``n`` tokens (generation), ``n`` steps
  or patches (a run: 0 when it does not count);
- ``(id, "layers", done)``, ``(id, "progress", done)``: a trace's layers, a run's steps done;
- ``(id, "step", step)`` then ``(id, "piece", text, finish)``: a generation's next token;
- ``(id, "views", {name: json_body})``: a trace's views computed once with it;
- exactly one end: ``(id, "done", result)`` (the trace; ``None`` for a generation; a run's
  result), ``(id, "cancelled", result)`` (stopped at its check: what it had done) or
  ``(id, "error", loc, message)`` (``loc``: a ``FieldError``'s, or ``None``).

A job's ``check()`` (:data:`.kinds.Check`) is where it may stop or make way. ``cancel`` is the
server's channel into running jobs: an object whose ``value`` holds the ids (ASCII, separated
by spaces) of the jobs asked to stop (a ``multiprocessing.Array`` of chars shared with a
worker process, or :class:`CancelCell` in a thread); ids are never reused, so a request to
stop one job never stops the next. A job that makes way (``Job.yields``: a patching sweep)
also runs, inside its check, a job the server sent while it ran (another learner's, never one
that makes way itself): to its end, messages and all, before its own next step.

Exceptions never cross the pipe (a ``FieldError`` does not unpickle); their field and message do.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

from attnlab.engine.errors import FieldError
from attnlab.models.errors import Refusal, worded
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobs.kinds import Check, Job, Stopped

READY = "ready"

Send = Callable[[tuple], None]


class CancelCell:
    """The thread worker's cancel channel: ``value``, the ids of the jobs asked to stop (b"": none)."""

    def __init__(self) -> None:
        self.value = b""


def _model(name: str, models: dict, loader, say) -> object:
    if name not in models:
        say("loading")
        try:
            models[name] = loader(name)
        except ModelNotInstalled as error:
            raise Refusal(("model",), "cannot_load", str(error)) from None
        path = getattr(models[name], "path", None)
        if isinstance(path, str):
            say("weights", path)
    return models[name]


class Runner:
    """What one worker does: its models, its pipes, and the job (or two: one making way) it runs."""

    def __init__(self, tasks, out, loader, cancel=None) -> None:
        self.tasks, self.out, self.loader, self.cancel = tasks, out, loader, cancel
        self.models: dict = {}
        self.stopping = False  # the server said stop while a job made way: end after it

    def check_of(self, job: Job) -> Check:
        """``job``'s check: True once the server asked it to stop; a job that makes way first runs
        the job the server sent meanwhile, if any."""
        mine = job.id.encode("ascii")

        def check() -> bool:
            if job.yields and not self.stopping and _ready(self.tasks):
                try:
                    other = self.tasks.recv()
                except (EOFError, OSError):
                    other = None
                if other is None:
                    self.stopping = True
                    return True
                self.run(other, nested=True)
            return self.cancel is not None and mine in bytes(self.cancel.value).split()

        return check

    def run(self, job: Job, *, nested: bool = False) -> None:
        """Do one job, sending its messages; a failure ends it with an "error" message."""

        def say(*message) -> None:
            self.out.send((job.id, *message))

        check = self.check_of(job) if not nested else _never_stop(self, job)
        try:
            model = _model(job.model, self.models, self.loader, say)
            result = job.work(model, say, check)
        except Stopped as stop:
            say("cancelled", stop.result)
        except FieldError as error:
            say("error", error.loc, str(error))
        except Exception as error:  # noqa: BLE001 - report it; the worker goes on with the next job
            say("error", None, worded("model_failed", type(error).__name__, str(error)))
        else:
            say("done", result)


def _never_stop(worker: Runner, job: Job) -> Check:
    """A job run while another made way: it may be cancelled, but it makes way for none."""
    mine = job.id.encode("ascii")
    return lambda: worker.cancel is not None and mine in bytes(worker.cancel.value).split()


def _ready(tasks) -> bool:
    """Whether a job (or the end) waits in ``tasks``, without waiting for one."""
    try:
        return bool(tasks.poll())
    except (EOFError, OSError):
        return True  # a closed pipe: recv says so


def main(tasks, out, loader, cancel=None) -> None:
    """Run jobs until told to stop; the server kills the process rather than wait for a job."""
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C reaches the whole process group; the server stops this process itself.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    worker = Runner(tasks, out, loader, cancel)
    try:
        out.send(READY)
        while not worker.stopping:
            try:
                job = tasks.recv()
            except (EOFError, OSError):
                return
            if job is None:
                return
            worker.run(job)
    except OSError:  # the server is gone: nobody to tell
        return
    finally:
        out.close()
