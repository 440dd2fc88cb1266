"""The model work as the worker does it: tasks in, messages out, one task at a time.

``main(tasks, out, loader)`` is the worker process's entry point (it also runs
in a thread where no process can start). ``tasks.recv()`` gives a
``TraceTask`` or ``GenerationTask`` (``None`` or a closed pipe: stop);
``loader(name)`` gives a model, kept for the next tasks. ``READY`` is sent
once, first. Then each task's messages are tuples that start with its job id:

- ``(id, "loading")``: the model is being loaded (once per worker);
- ``(id, "weights", path)``: the model is loaded; ``path`` says what its products run on
  ("q4_1": the file's blocks, "float32": float weights), when the model says;
- ``(id, "running", n)``: ``n`` layers (trace) or at most ``n`` tokens (generation);
- ``(id, "layers", done)``: a trace's layers done so far;
- ``(id, "piece", text, finish)``: a generation's next piece;
- ``(id, "done", trace)`` (``None`` for a generation) or ``(id, "error", loc, message)``:
  exactly one of these ends each task. ``loc`` is a ``FieldError``'s, or ``None``.

Exceptions never cross the pipe (a ``FieldError`` does not unpickle); their
field and message do.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass

from attnlab.engine.errors import FieldError
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobkinds import MAX_TOKENS, token_cap_message
from attnlab.models.sampling import Sampling

READY = "ready"

Send = Callable[[tuple], None]


@dataclass(frozen=True)
class TraceTask:
    job_id: str
    model: str
    text: str


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
            raise FieldError(("model",), str(error)) from None
        path = getattr(models[name], "path", None)
        if isinstance(path, str):
            say("weights", path)
    return models[name]


def _trace(task: TraceTask, model, say):
    n_tokens = count_tokens(model, task.text)
    if n_tokens > MAX_TOKENS:
        raise FieldError(("text",), token_cap_message(task.model, n_tokens))
    say("running", model.config.n_layer)
    return model.trace(task.text, details=True, progress=lambda done, total: say("layers", done))


def _generate(task: GenerationTask, model, say) -> None:
    from attnlab.models.chat import user_turn

    prompt = user_turn(task.prompt) if task.chat else task.prompt
    say("running", task.max_new_tokens)
    for piece in model.generate(prompt, max_new_tokens=task.max_new_tokens, sampling=task.sampling):
        say("piece", piece.text, piece.finish)


def run(task: TraceTask | GenerationTask, models: dict, loader, send: Send) -> None:
    """Do one task, sending its messages; a failure ends it with an "error" message."""

    def say(*message) -> None:
        send((task.job_id, *message))

    try:
        model = _model(task.model, models, loader, say)
        result = _trace(task, model, say) if isinstance(task, TraceTask) else _generate(task, model, say)
    except FieldError as error:
        say("error", error.loc, str(error))
    except Exception as error:  # noqa: BLE001 - report it; the worker goes on with the next task
        say("error", None, f"the model failed: {type(error).__name__}: {error}")
    else:
        say("done", result)


def main(tasks, out, loader) -> None:
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
            run(task, models, loader, out.send)
    except OSError:  # the server is gone: nobody to tell
        return
    finally:
        out.close()
