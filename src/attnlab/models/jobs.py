"""Run model traces and generations off the caller's thread, one at a time, with progress.

A web request starts a job and returns at once; a single worker thread loads
the model (the first time) and runs the forward pass, reporting layers done,
so requests that only read (the explorer's own, a job's status) are never
stuck behind a model. Finished traces are kept, newest first, so looking at
another layer or head of the same text costs nothing.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from attnlab.models.files import ModelNotInstalled
from attnlab.models.registry import check_name, get_model, is_loaded
from attnlab.models.sampling import Sampling
from attnlab.models.traces import ModelTrace

MAX_CHARS = 400  # what the Real model view accepts
MAX_TOKENS = 64  # = the explorer's MAX_SOURCES, so every query row fits the explorer
MAX_PENDING = 4  # queued or running jobs; more are refused until one finishes
KEEP_JOBS = 32
KEEP_TRACES = 8


class Busy(Exception):
    """Too many jobs are waiting: try again when one has finished."""


@dataclass(kw_only=True)
class Job:
    """One trace request. ``status``: queued, loading, running, done or error."""

    id: str
    model: str
    text: str
    status: str = "queued"
    layers_done: int = 0
    n_layer: int = 0
    message: str = ""
    error_field: str | None = None
    trace: ModelTrace | None = field(default=None, repr=False)
    pieces: list[str] = field(default_factory=list)  # generation: the text, token by token
    finish: str | None = None  # generation: "end_of_turn" or "length" once done

    @property
    def progress(self) -> float:
        if self.status == "done":
            return 1.0
        return self.layers_done / self.n_layer if self.n_layer else 0.0


def token_cap_message(model: str, n_tokens: int) -> str:
    return (
        f"text is {n_tokens} tokens long for {model}; the Real model view takes at most "
        f"{MAX_TOKENS} tokens (about {MAX_TOKENS * 3 // 4} words). Shorten it."
    )


def check_text(text: object, *, field: str = "text") -> str:
    """Refuse text the view cannot take, with the message the learner sees."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{field} is empty: type a sentence to look at")
    if len(text) > MAX_CHARS:
        raise ValueError(
            f"{field} has {len(text)} characters; the Real model view takes at most {MAX_CHARS}. Shorten it."
        )
    return text


def count_tokens(model, text: str) -> int:
    if model.name == "minilm":
        return int(model.tokenize([text], max_length=512).mask.sum())
    return len(model.encode(text))


class Jobs:
    """Jobs by id, run by one worker thread."""

    def __init__(self) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._traces: OrderedDict[tuple[str, str], ModelTrace] = OrderedDict()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="attnlab-model")

    def start(self, model: str, text: str) -> Job:
        """Queue a trace of ``text`` with ``model``; a known text is done at once."""
        check_name(model)
        check_text(text)
        with self._lock:
            job = Job(id=f"j{next(self._ids)}", model=model, text=text)
            cached = self._traces.get((model, text))
            if cached is not None:
                self._traces.move_to_end((model, text))
                job.status, job.trace = "done", cached
                job.n_layer = job.layers_done = cached.n_layer
            else:
                self._check_room()
            self._remember(job)
        if job.status == "queued":
            self._worker.submit(self._run, job)
        return job

    def generate(self, prompt: str, *, max_new_tokens: int, sampling: Sampling, chat: bool) -> Job:
        """Queue SmolLM2's continuation of ``prompt``; its pieces arrive in the job as they come."""
        check_text(prompt, field="prompt")
        with self._lock:
            self._check_room()
            job = Job(id=f"g{next(self._ids)}", model="smollm2", text=prompt, n_layer=max_new_tokens)
            self._remember(job)
        self._worker.submit(self._run_generation, job, max_new_tokens, sampling, chat)
        return job

    def _check_room(self) -> None:
        pending = sum(j.status in ("queued", "loading", "running") for j in self._jobs.values())
        if pending >= MAX_PENDING:
            raise Busy(f"{pending} jobs are already waiting; try again in a moment")

    def _remember(self, job: Job) -> None:
        self._jobs[job.id] = job
        while len(self._jobs) > KEEP_JOBS:
            oldest = next(iter(self._jobs))
            if self._jobs[oldest].status in ("queued", "loading", "running"):
                break
            self._jobs.popitem(last=False)

    def _run_generation(self, job: Job, max_new_tokens: int, sampling: Sampling, chat: bool) -> None:
        from attnlab.models.chat import user_turn

        try:
            if not is_loaded(job.model):
                job.status = "loading"
            model = get_model(job.model)
            job.status = "running"
            prompt = user_turn(job.text) if chat else job.text
            for piece in model.generate(prompt, max_new_tokens=max_new_tokens, sampling=sampling):
                job.pieces.append(piece.text)
                job.layers_done += 1  # here: tokens generated
                job.finish = piece.finish
            job.status = "done"
        except ModelNotInstalled as error:
            job.status, job.message, job.error_field = "error", str(error), "model"
        except ValueError as error:
            job.status, job.message, job.error_field = "error", str(error), "prompt"
        except Exception as error:  # noqa: BLE001 - report, never kill the worker
            job.status, job.message = "error", f"the model failed: {type(error).__name__}: {error}"

    def get(self, job_id: str) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def _run(self, job: Job) -> None:
        try:
            if not is_loaded(job.model):
                job.status = "loading"
            model = get_model(job.model)
            n_tokens = count_tokens(model, job.text)
            if n_tokens > MAX_TOKENS:
                job.error_field = "text"
                raise ValueError(token_cap_message(job.model, n_tokens))
            job.n_layer = model.config.n_layer
            job.status = "running"

            def progress(done: int, total: int) -> None:
                job.layers_done = done

            trace = model.trace(job.text, details=True, progress=progress)
            with self._lock:
                self._traces[(job.model, job.text)] = trace
                while len(self._traces) > KEEP_TRACES:
                    self._traces.popitem(last=False)
            job.trace = trace
            job.status = "done"
        except ModelNotInstalled as error:
            job.status, job.message, job.error_field = "error", str(error), "model"
        except ValueError as error:
            job.status, job.message = "error", str(error)
            job.error_field = job.error_field or "text"
        except Exception as error:  # noqa: BLE001 - report, never kill the worker
            job.status, job.message = "error", f"the model failed: {type(error).__name__}: {error}"


JOBS = Jobs()
