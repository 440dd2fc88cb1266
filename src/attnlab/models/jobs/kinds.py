"""The kinds of model job: a trace, a generation, a lab's run and a circuits run, one class each.

A job class holds everything about its kind: the request (its fields), when two requests
are one job (``share_key``), how its work is measured (``rate_key`` and ``units``: see
:mod:`.rates`), what the worker does for it (``work``, run in the worker on a copy of the
job that crossed the pipe) and how the worker's messages change it (``apply``).

Each job starts ``queued``, becomes ``loading`` (the worker loads the model, once per
worker) and ``running``, and ends ``done``, ``error`` or ``cancelled``. A job is cancelled
when the learner asks (a circuits run: Cancel), when nobody has asked about it for
:data:`.line.ABANDON_S` seconds, or when the server stops; a job that can stop between its
steps (a patching sweep between patches, a generation between tokens) then keeps what it had
done (a partial sweep as its ``result``, the pieces so far). An error's ``loc`` is the field
to fix, as a ``FieldError``'s (``("text",)``); ``None`` when nothing the learner typed is at
fault.

The line's own bookkeeping is on the job too: the clients that want it (``clients``, the
first started it), when one last asked about it (``seen``), and its active seconds in the
worker (``active_s``: time a sweep spent making way for another learner's job is not its own).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from attnlab.engine.errors import Loc
from attnlab.models import registry
from attnlab.models.jobs.turns import Client
from attnlab.models.sampling import Sampling, cut
from attnlab.models.traces import ModelTrace

FINAL = ("done", "error", "cancelled")
STEP_TOP = 5  # tokens shown for each generation step

Say = Callable[..., None]  # say(kind, *payload): one message about this job to the server
Check = Callable[[], bool]  # True once the job should stop; between steps it may run another's job first


class Stopped(Exception):  # noqa: N818 - a job that stopped when asked, not a failure
    """Raised by a job's work that stopped at its check; ``result``: what it had done (``None``: nothing)."""

    def __init__(self, result=None) -> None:
        super().__init__("stopped when asked")
        self.result = result


@dataclass(kw_only=True, eq=False)
class Job:
    """What every kind has: its id, status and message, and the line's bookkeeping."""

    kind: ClassVar[str]
    id: str
    model: str
    status: str = "queued"
    message: str = ""
    loc: Loc | None = None
    cancel_asked: bool = False
    clients: list[Client] = field(default_factory=list, repr=False)  # who wants it; the first started it
    seen: float = 0.0  # the line's clock when a client last asked about it
    watchers: int = field(default=0, repr=False)  # callers blocked in Jobs.wait on it
    active_s: float = 0.0  # seconds in the worker as the job on top (not made way for another)
    active_since: float | None = field(default=None, repr=False)

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    @property
    def owner(self) -> Client:
        """The client that started it (a job always has one once in the line)."""
        return self.clients[0]

    @property
    def share_key(self) -> tuple | None:
        """Requests with equal keys get this one job (``None``: never shared)."""
        return None

    @property
    def rate_key(self) -> tuple:
        """What its rate is measured over: its kind on its model."""
        return (self.kind, self.model)

    @property
    def yields(self) -> bool:
        """Whether it makes way between its steps for another learner's job (a patching sweep)."""
        return False

    @property
    def stoppable(self) -> bool:
        """Whether it can stop between its steps when cancelled while it runs."""
        return False

    def units(self) -> float:
        """How much work it is, in its rate's units, as estimated before it runs."""
        return 1.0

    def units_done(self) -> float:
        """The work it did, in its rate's units (measured: its rate learns from it)."""
        return self.units()

    def progress_units(self) -> tuple[float, float] | None:
        """(done, total) in its rate's units once the worker has said, else ``None``."""
        return None

    def apply(self, kind: str, *payload) -> None:
        """Take one of the worker's messages about this job (without its job id)."""
        if kind == "loading":
            self.status = "loading"
        elif kind == "error":
            loc, self.message = payload
            self.loc = tuple(loc) if loc is not None else None
            self.status = "error"
        elif kind == "cancelled":
            (result,) = payload
            self._stopped(result)
            self.status = "cancelled"
        else:
            self._apply(kind, *payload)

    def _apply(self, kind: str, *payload) -> None:  # pragma: no cover - each kind has its own
        raise NotImplementedError

    def _stopped(self, result) -> None:
        """Keep what the work had done when it stopped (``None``: it never started)."""

    def cancel(self, message: str) -> None:
        self.status, self.message = "cancelled", message

    def work(self, model, say: Say, check: Check):  # pragma: no cover - each kind has its own
        """Do the job in the worker with the loaded ``model``; return its result."""
        raise NotImplementedError


def count_tokens(model, text: str) -> int:
    """The model's own count of ``text``'s tokens (MiniLM: ``[CLS]`` and ``[SEP]`` count too)."""
    if hasattr(model, "tokenize"):
        return int(model.tokenize([text], max_length=512).mask.sum())
    return len(model.encode(text))


def trace_text(name: str, text: str, model, say: Say):
    """Trace ``text`` with ``model`` (registry name ``name``; all layers, details kept), after the
    model's own token count (the line counted with the tokenizer alone: this is the model's)."""
    from attnlab.models.jobs.texts import too_many_tokens

    cap = registry.token_cap(name, model)  # the lab's cap, or the model's own context where smaller
    n_tokens = count_tokens(model, text)
    if n_tokens > cap:
        raise too_many_tokens("text", name, n_tokens, cap)
    say("running", model.arch.n_layer)
    return model.trace(text, details=True, progress=lambda done, total: say("layers", done))


@dataclass(kw_only=True, eq=False)
class TraceJob(Job):
    """Every layer's and head's attention of ``model`` on ``text``; ``trace`` once done.

    Its work also makes the numbers of the trace's model view once (every head's thumbnail and
    scores: :func:`attnlab.models.traces.overview`), sent just before "done": the server's first
    request of the model view (and of each score's census) only words them.
    """

    kind: ClassVar[str] = "trace"
    text: str
    n_layer: int = 0  # known once the worker has the model
    layers_done: int = 0
    trace: ModelTrace | None = field(default=None, repr=False)
    views: dict = field(default_factory=dict, repr=False)  # views computed once from the trace

    @property
    def share_key(self) -> tuple:
        return ("trace", self.model, self.text)

    @property
    def progress(self) -> float:
        if self.status == "done":
            return 1.0
        return self.layers_done / self.n_layer if self.n_layer else 0.0

    def units(self) -> float:
        return float(max(1, len(self.text)))  # characters: a trace's time grows with its text

    def progress_units(self) -> tuple[float, float] | None:
        if not self.n_layer:
            return None
        per_layer = self.units() / self.n_layer
        return self.layers_done * per_layer, self.units()

    def _apply(self, kind: str, *payload) -> None:
        if kind == "running":
            (self.n_layer,) = payload
            self.status = "running"
        elif kind == "layers":
            (self.layers_done,) = payload
        elif kind == "views":
            (views,) = payload
            self.views.update(views)
        elif kind == "done":
            (trace,) = payload
            self.trace = trace  # before the status: a reader that sees "done" finds the trace
            self.n_layer = self.layers_done = trace.n_layer
            self.status = "done"

    def work(self, model, say: Say, check: Check):
        from attnlab.models.traces import overview

        trace = trace_text(self.model, self.text, model, say)
        say("views", {"overview": overview(trace)})  # the model view's numbers, here: the server words them
        return trace


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


@dataclass(kw_only=True, eq=False)
class GenerationJob(Job):
    """A model continuing ``prompt``: ``pieces`` (one per token) grow as they come.

    Cancelled while it runs, it stops before its next token and keeps the pieces it has.
    """

    kind: ClassVar[str] = "generate"
    model: str = "smollm2"  # Jobs.generate names it (the registry's first decoder by default)
    prompt: str
    max_new_tokens: int
    sampling: Sampling
    chat: bool
    pieces: list[str] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)  # each token's distribution and the one drawn
    finish: str | None = None  # "end_of_turn" or "length" once done

    @property
    def share_key(self) -> tuple | None:
        """Equal for requests that give the same text; ``None`` (never shared) for unseeded sampling."""
        if self.sampling.greedy:
            sampling = Sampling()  # greedy ignores top_k, top_p and seed
        elif self.sampling.seed is not None:
            sampling = self.sampling
        else:
            return None
        return ("generate", self.model, self.prompt, self.max_new_tokens, self.chat, sampling)

    @property
    def stoppable(self) -> bool:
        return True

    @property
    def tokens(self) -> int:
        return len(self.pieces)

    def units(self) -> float:
        return float(max(1, self.max_new_tokens))

    def units_done(self) -> float:
        return float(max(1, len(self.pieces)))

    def progress_units(self) -> tuple[float, float] | None:
        return (float(len(self.pieces)), self.units()) if self.status == "running" else None

    def _apply(self, kind: str, *payload) -> None:
        if kind == "running":
            self.status = "running"
        elif kind == "piece":
            text, self.finish = payload
            self.pieces.append(text)
        elif kind == "step":
            (step,) = payload
            self.steps.append(step)
        elif kind == "done":
            self.status = "done"

    def work(self, model, say: Say, check: Check):
        # the model's own chat template (SmolLM2's for SmolLM2, a found model's its own; the toy has none)
        chat = getattr(model, "chat_prompt", None) if self.chat else None
        prompt = chat([{"role": "user", "content": self.prompt}]) if chat is not None else self.prompt
        say("running", self.max_new_tokens)
        rows: list = []
        pieces = model.generate(
            prompt, max_new_tokens=self.max_new_tokens, sampling=self.sampling, on_logits=rows.append
        )
        for index, piece in enumerate(pieces):
            if rows:
                say("step", step_of(model, index, rows.pop(), piece.id, self.sampling))
            say("piece", piece.text, piece.finish)
            if piece.finish is None and check():
                raise Stopped(None)  # its pieces are sent: nothing more to keep


def named(function: str):
    """A function of ``attnlab.models`` named ``"module:attribute"``, never another."""
    module, _, attribute = function.partition(":")
    if not module.startswith("attnlab.models."):
        raise ValueError(f"{function!r} is not a model run")
    return getattr(importlib.import_module(module), attribute)


def marked(function: str, mark: str) -> bool:
    """Whether the run ``function`` says ``mark`` of itself (``makes_way``, ``stops``: an attribute)."""
    try:
        return bool(getattr(named(function), mark, False))
    except (ValueError, ImportError, AttributeError):
        return False


@dataclass(kw_only=True, eq=False)
class RunJob(Job):
    """A lab's model run: ``function(model, say, **arguments)`` in the worker; ``result`` once done.

    ``function`` is ``"module:attribute"`` of a function in ``attnlab.models`` (the worker
    refuses others); ``arguments`` are ``(name, value)`` pairs of plain, hashable values and the
    run is deterministic, so identical runs share one job. The function may report
    ``say("running", total)`` and ``say("progress", done)``; ``result`` is what it returns
    (plain data: it crosses the pipe).
    """

    kind: ClassVar[str] = "run"
    function: str
    arguments: tuple = ()
    done_count: int = 0
    total: int = 0
    result: object = field(default=None, repr=False)

    @property
    def share_key(self) -> tuple:
        return (self.kind, self.model, self.function, self.arguments)

    @property
    def rate_key(self) -> tuple:
        return (self.kind, self.model, self.function)

    def progress_units(self) -> tuple[float, float] | None:
        return (float(self.done_count), float(self.total)) if self.total else None

    def units(self) -> float:
        return float(self.total) if self.total else 1.0

    def _apply(self, kind: str, *payload) -> None:
        if kind == "running":
            (self.total,) = payload
            self.status = "running"
        elif kind == "progress":
            (self.done_count,) = payload
        elif kind == "done":
            (self.result,) = payload  # before the status: a reader that sees "done" finds the result
            self.status = "done"

    def work(self, model, say: Say, check: Check):
        return named(self.function)(model, say, **dict(self.arguments))


PATCHING = "attnlab.models.jobs.circuits:patching"


@dataclass(kw_only=True, eq=False)
class CircuitJob(RunJob):
    """A circuits run: ``function(model, say, check, job=id, **arguments)`` in the worker.

    The functions are :data:`attnlab.models.jobs.circuits.FUNCTIONS`. A patching sweep reports
    ``say("running", patches)`` and ``say("progress", done)``, and calls ``check()`` before each
    patch: there it makes way for other learners' jobs, and it stops once cancelled, ending
    ``cancelled`` with the partial sweep as ``result`` (a function says so of itself: its
    ``makes_way`` and ``stops`` attributes). A cancelled job is never shared: the next
    identical request runs in full. Its rate is seconds per patch (a sweep's time grows with them).
    Its progress and result arrive as a lab's run's do (:class:`RunJob`).
    """

    kind: ClassVar[str] = "circuit"

    @property
    def yields(self) -> bool:
        return marked(self.function, "makes_way")

    @property
    def stoppable(self) -> bool:
        return marked(self.function, "stops")

    def units(self) -> float:
        if self.total:
            return float(self.total)
        return float(patches(self.model, dict(self.arguments))) if self.function == PATCHING else 1.0

    def units_done(self) -> float:
        return float(max(1, self.done_count)) if self.total else 1.0

    def _stopped(self, result) -> None:
        self.result = result  # the partial sweep (None: it never started)

    def work(self, model, say: Say, check: Check):
        return named(self.function)(model, say, check, job=self.id, **dict(self.arguments))


def patches(model: str, arguments: dict) -> int:
    """How many patches a patching sweep's arguments ask for, before it runs (its tokens by the
    tokenizer alone; a word a token where the tokenizer is missing): the line's estimate."""
    spec = registry.SPECS.get(model)
    if spec is None:
        return 1
    first = arguments.get("first_layer") or 0
    last = arguments.get("last_layer")
    layers = (spec.n_layer - 1 if last is None else last) - first + 1
    try:
        n_tokens = len(registry.token_strings(model, arguments.get("clean") or ""))
    except Exception:  # noqa: BLE001 - an estimate: a missing tokenizer is the worker's to report
        n_tokens = len(str(arguments.get("clean") or "").split())
    sweep = arguments.get("sweep")
    by_kind = {"residual": n_tokens, "heads": spec.n_head, "pattern": spec.n_head, "keys": spec.n_kv_head,
               "values": spec.n_kv_head}  # fmt: skip
    columns = by_kind.get(sweep, n_tokens if arguments.get("per_position") else 1)  # "mlp"
    return max(1, layers * max(1, columns))
