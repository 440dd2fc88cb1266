"""The model work as the worker does it: tasks in, messages out, one task at a time.

``main(tasks, out, loader, cancel)`` is the worker process's entry point (it also runs
in a thread where no process can start). ``tasks.recv()`` gives a
``TraceTask``, ``GenerationTask``, ``RunTask`` or ``CircuitTask`` (``None`` or a closed pipe: stop);
``loader(name)`` gives a model, kept for the next tasks. ``READY`` is sent
once, first. Then each task's messages are tuples that start with its job id:

- ``(id, "loading")``: the model is being loaded (once per worker);
- ``(id, "weights", path)``: the model is loaded; ``path`` says what its products run on
  ("q4_1": the file's blocks, "float32": float weights), when the model says;
- ``(id, "running", n)``: ``n`` layers (trace) or at most ``n`` tokens (generation);
- ``(id, "layers", done)``: a trace's layers done so far;
- ``(id, "progress", done)``: a lab's run (``RunTask``): its steps done so far (``running`` gave the total);
- ``(id, "step", step)``: a generation's next token with the distribution it was drawn from
  (sent just before its piece; a dict, see :func:`step_of`);
- ``(id, "piece", text, finish)``: a generation's next piece;
- ``(id, "views", {name: json_body})``: a trace's views computed once with it
  (the model view, and the head census of each score from its scores), sent just before its "done";
- ``(id, "done", trace)`` (``None`` for a generation, the result for a lab's or a circuits run),
  ``(id, "cancelled", result)`` (a circuits run stopped by its cancel check: what it had done) or
  ``(id, "error", loc, message)``: exactly one of these ends each task. ``loc`` is a
  ``FieldError``'s, or ``None``.

``cancel`` is the server's channel into a running task: an object whose ``value`` is the
id (ASCII bytes) of the job to stop (a ``multiprocessing.Array`` of chars shared with a
worker process, or :class:`CancelCell` in a thread). A circuits run checks it between its
steps (``cancelled()``); ids are never reused, so a request to stop one job never stops the next.

Exceptions never cross the pipe (a ``FieldError`` does not unpickle); their
field and message do.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel import problems
from attnlab.lab.realmodel.modelview import kept_views
from attnlab.models.circuitviews.census import census_bodies
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobkinds import MAX_TOKENS, token_cap_message
from attnlab.models.sampling import Sampling, cut

STEP_TOP = 5  # tokens shown for each generation step

READY = "ready"

Send = Callable[[tuple], None]


@dataclass(frozen=True)
class TraceTask:
    job_id: str
    model: str
    text: str


@dataclass(frozen=True)
class RunTask:
    """A lab's run (``jobkinds.RunJob``): ``function(model, say, **dict(arguments))``."""

    job_id: str
    model: str
    function: str
    arguments: tuple


@dataclass(frozen=True)
class CircuitTask:
    """A circuits run (``jobkinds.CircuitJob``): ``function(model, say, cancelled, job=id, **arguments)``."""

    job_id: str
    model: str
    function: str
    arguments: tuple


class CancelCell:
    """The thread worker's cancel channel: ``value``, the id of the job asked to stop (b"": none)."""

    def __init__(self) -> None:
        self.value = b""


class Stopped(Exception):  # noqa: N818 - a run that stopped when asked, not a failure
    """Raised by a circuits run that stopped at its cancel check; ``result``: what it had done."""

    def __init__(self, result) -> None:
        super().__init__("stopped when asked")
        self.result = result


@dataclass(frozen=True)
class GenerationTask:
    job_id: str
    model: str
    prompt: str
    max_new_tokens: int
    sampling: Sampling
    chat: bool


def count_tokens(model, text: str) -> int:
    if hasattr(model, "tokenize"):  # MiniLM: [CLS] and [SEP] count too
        return int(model.tokenize([text], max_length=512).mask.sum())
    return len(model.encode(text))


def _model(name: str, models: dict, loader, say) -> object:
    if name not in models:
        say("loading")
        try:
            models[name] = loader(name)
        except ModelNotInstalled as error:
            raise FieldError(("model",), problems.cannot_load(str(error))) from None
        path = getattr(models[name], "path", None)
        if isinstance(path, str):
            say("weights", path)
    return models[name]


def trace_text(task: TraceTask, model, say):
    """Trace ``task.text`` with ``model`` (all layers, details kept), after the model's own token count."""
    from attnlab.models import registry

    cap = registry.SPECS[task.model].max_tokens if task.model in registry.SPECS else MAX_TOKENS
    n_tokens = count_tokens(model, task.text)
    if n_tokens > cap:  # the server checks first with the tokenizer alone; this is the model's own count
        raise FieldError(("text",), token_cap_message(task.model, n_tokens, cap))
    say("running", model.config.n_layer)
    return model.trace(task.text, details=True, progress=lambda done, total: say("layers", done))


def _generate(task: GenerationTask, model, say) -> None:
    from attnlab.models.chat import user_turn

    prompt = user_turn(task.prompt) if task.chat else task.prompt
    say("running", task.max_new_tokens)
    rows: list = []
    pieces = model.generate(
        prompt, max_new_tokens=task.max_new_tokens, sampling=task.sampling, on_logits=rows.append
    )
    for index, piece in enumerate(pieces):
        if rows:
            say("step", step_of(model, index, rows.pop(), piece.id, task.sampling))
        say("piece", piece.text, piece.finish)


def _named(function: str):
    """A function of ``attnlab.models`` named ``"module:attribute"``, never another."""
    import importlib

    module, _, attribute = function.partition(":")
    if not module.startswith("attnlab.models."):
        raise ValueError(f"{function!r} is not a model run")
    return getattr(importlib.import_module(module), attribute)


def run_function(task: RunTask, model, say):
    """Call a lab's run: a function of ``attnlab.models`` named ``"module:attribute"``, never another."""
    return _named(task.function)(model, say, **dict(task.arguments))


def run_circuit(task: CircuitTask, model, say, cancel=None):
    """Call a circuits run with its cancel check: True once the server asked to stop this job."""
    mine = task.job_id.encode("ascii")

    def cancelled() -> bool:
        return cancel is not None and cancel.value == mine

    return _named(task.function)(model, say, cancelled, job=task.job_id, **dict(task.arguments))


def step_of(model, index: int, logits, drawn: int, sampling: Sampling) -> dict:
    """One generation step: the token drawn and the top of the distribution it was drawn from.

    Greedy steps show the model's own distribution (temperature 1).
    """
    c = cut(logits, Sampling(temperature=1.0) if sampling.greedy else sampling)
    order = np.argsort(-c.p, kind="stable")[:STEP_TOP]
    label = model.token_labels if hasattr(model, "token_labels") else lambda ids: [str(i) for i in ids]

    def entry(i: int) -> dict:  # numbers only: the lab prints them (lab.realmodel.nexttoken.step_display)
        return {"id": i, "token": label([i])[0], "logit": float(logits[i]), "p": float(c.p[i])}

    return {"index": index, **entry(int(drawn)), "top": [entry(int(i)) for i in order]}


def run(task: TraceTask | GenerationTask | RunTask | CircuitTask, models: dict, loader, send: Send,
        cancel=None) -> None:  # fmt: skip
    """Do one task, sending its messages; a failure ends it with an "error" message."""

    def say(*message) -> None:
        send((task.job_id, *message))

    try:
        model = _model(task.model, models, loader, say)
        if isinstance(task, RunTask):
            result = run_function(task, model, say)
        elif isinstance(task, CircuitTask):
            result = run_circuit(task, model, say, cancel)
        elif isinstance(task, TraceTask):
            result = trace_text(task, model, say)
        else:
            result = _generate(task, model, say)
        if isinstance(task, TraceTask):
            # here, not in the server: its first model-view request is then answered from the kept body
            views = kept_views(task.job_id, result)
            views.update(census_bodies(task.job_id, result, views["model-view"]))
            say("views", views)
    except Stopped as stop:
        say("cancelled", stop.result)
    except FieldError as error:
        say("error", error.loc, str(error))
    except Exception as error:  # noqa: BLE001 - report it; the worker goes on with the next task
        say("error", None, problems.model_failed(type(error).__name__, str(error)))
    else:
        say("done", result)


def main(tasks, out, loader, cancel=None) -> None:
    """Run tasks until told to stop; the server kills the process rather than wait for a task."""
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C reaches the whole process group; the server stops this process itself.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    models: dict = {}
    try:
        out.send(READY)
        while True:
            try:
                task = tasks.recv()
            except (EOFError, OSError):
                return
            if task is None:
                return
            run(task, models, loader, out.send, cancel)
    except OSError:  # the server is gone: nobody to tell
        return
    finally:
        out.close()
