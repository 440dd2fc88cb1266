"""The kinds of model job the server keeps: a trace, a generation, a lab's run and a circuits run.

Each starts ``queued``, becomes ``loading`` (the worker loads the model, once
per worker) and ``running``, and ends ``done``, ``error`` or ``cancelled``
(the server stopped; or, for a circuits run, the learner pressed Cancel: it then
keeps what it had done as its ``result``). An error's ``loc`` is the field to fix, as a
``FieldError``'s (``("text",)``); ``None`` when nothing the learner typed is at
fault. ``apply`` takes the worker's messages (their shapes: ``work.py``).
The view's caps on text live here too: the API and the worker both use them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from attnlab.engine.errors import FieldError, Loc
from attnlab.lab.fields import half_character
from attnlab.lab.realmodel import problems
from attnlab.models import registry
from attnlab.models.registry import DEFAULT_MAX_CHARS, DEFAULT_MAX_TOKENS
from attnlab.models.sampling import Sampling
from attnlab.models.traces import ModelTrace

MAX_CHARS = DEFAULT_MAX_CHARS  # what the Real model view accepts (a bound on the body; tokens are the cap)
MAX_TOKENS = DEFAULT_MAX_TOKENS  # the default cap in tokens; each ModelSpec says its own
FINAL = ("done", "error", "cancelled")


def token_cap_message(model: str, n_tokens: int, cap: int = MAX_TOKENS) -> str:
    """The problem with a text over the token cap (a ``FieldError``'s: it does not name the field).

    The model is named by its registry title, as the page's model choice reads.
    """
    return problems.over_token_cap(n_tokens, cap, registry.title(model))


def check_chars(text: str, *, field: str = "text", max_chars: int | None = None) -> str:
    """Return ``text`` unless it holds a lone surrogate (half a character: no tokenizer takes it)
    or, with ``max_chars``, more characters than that."""
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise FieldError((field,), half_character())
    if max_chars is not None and len(text) > max_chars:
        raise FieldError((field,), problems.too_many_chars(len(text), max_chars))
    return text


def check_text(text: object, *, field: str = "text", max_chars: int = MAX_CHARS) -> str:
    """Return ``text``, or raise ``FieldError((field,), problem)`` with the problem the learner sees."""
    if not isinstance(text, str) or not text.strip():
        raise FieldError((field,), problems.empty_text())
    return check_chars(text, field=field, max_chars=max_chars)


@dataclass(kw_only=True, eq=False)
class _Job:
    id: str
    status: str = "queued"
    message: str = ""
    loc: Loc | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    def apply(self, kind: str, *payload) -> None:
        """Take one of the worker's messages about this job (without its job id)."""
        if kind == "loading":
            self.status = "loading"
        elif kind == "error":
            loc, self.message = payload
            self.loc = tuple(loc) if loc is not None else None
            self.status = "error"
        else:
            self._apply(kind, *payload)

    def _apply(self, kind: str, *payload) -> None:  # pragma: no cover - each kind has its own
        raise NotImplementedError

    def cancel(self, message: str) -> None:
        self.status, self.message = "cancelled", message


@dataclass(kw_only=True, eq=False)
class TraceJob(_Job):
    """Every layer's and head's attention of ``model`` on ``text``; ``trace`` once done."""

    model: str
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

    def _apply(self, kind: str, *payload) -> None:
        if kind == "running":
            (self.n_layer,) = payload
            self.status = "running"
        elif kind == "layers":
            (self.layers_done,) = payload
        elif kind == "done":
            (trace,) = payload
            self.trace = trace  # before the status: a reader that sees "done" finds the trace
            self.n_layer = self.layers_done = trace.n_layer
            self.status = "done"


@dataclass(kw_only=True, eq=False)
class GenerationJob(_Job):
    """SmolLM2 continuing ``prompt``: ``pieces`` (one per token) grow as they come."""

    prompt: str
    max_new_tokens: int
    sampling: Sampling
    chat: bool
    model: str = "smollm2"  # Jobs.generate names it (the registry's first decoder by default)
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
    def tokens(self) -> int:
        return len(self.pieces)

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


@dataclass(kw_only=True, eq=False)
class _Run(_Job):
    """A run of ``function(model, say, ...)`` in the worker; ``result`` once done.

    ``function`` is ``"module:attribute"`` of a function in ``attnlab.models`` (the worker
    refuses others); ``arguments`` are ``(name, value)`` pairs of plain, hashable values and the
    run is deterministic, so identical runs share one job. The function may report
    ``say("running", total)`` and ``say("progress", done)``; ``result`` is what it returns
    (plain data: it crosses the pipe).
    """

    shared_as: ClassVar[str]  # the kind's word in its share key
    model: str
    function: str
    arguments: tuple = ()
    done_count: int = 0
    total: int = 0
    result: object = field(default=None, repr=False)

    @property
    def share_key(self) -> tuple:
        return (self.shared_as, self.model, self.function, self.arguments)

    def _apply(self, kind: str, *payload) -> None:
        if kind == "running":
            (self.total,) = payload
            self.status = "running"
        elif kind == "progress":
            (self.done_count,) = payload
        elif kind == "done":
            (self.result,) = payload  # before the status: a reader that sees "done" finds the result
            self.status = "done"


@dataclass(kw_only=True, eq=False)
class RunJob(_Run):
    """A lab's model run: ``function(model, say, **arguments)`` in the worker (see :class:`_Run`)."""

    shared_as: ClassVar[str] = "run"


@dataclass(kw_only=True, eq=False)
class CircuitJob(_Run):
    """A circuits run: ``function(model, say, cancelled, job=id, **arguments)`` in the worker.

    A run as a lab's (:class:`_Run`), and it can be stopped: ``cancelled()`` turns True in the
    worker once the learner asks (``Jobs.cancel``), the run stops at its next check and ends
    ``cancelled`` with what it had done as ``result`` (a partial sweep). A cancelled job is never
    shared: the next identical request runs in full.
    """

    shared_as: ClassVar[str] = "circuit"
    cancel_asked: bool = False

    def _apply(self, kind: str, *payload) -> None:
        if kind == "cancelled":
            (self.result,) = payload  # what the run had done when it stopped (None: it never started)
            self.status = "cancelled"
        else:
            super()._apply(kind, *payload)
