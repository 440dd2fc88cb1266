"""Answer a lab's asks: ``measure(ask, jobs)`` runs what ``ask.run`` names, or finds it in the job line.

- ``shapes``, ``rope``: facts (``facts.py``), at once;
- ``embeddings``: MiniLM on a few sentences (``embeddings.py``), at once (well under a second);
- ``logits``: a trace job of the text (``Jobs.start``, shared with the Real model view); once done,
  the last position's top logits (``logits.py``);
- ``needle``: one trace job per length (``needle.py``);
- ``kv``: a lab's run in the worker (``Jobs.run`` of ``kv.generation_cache``).
- ``speculate``, ``serving``: timed comparisons in the worker (``Jobs.run`` of
  ``speculate.compare``: plain greedy against speculative decoding; ``serving.compare``: one
  request at a time against continuous batching).
- ``copying``: the circuits lab's run in the worker (``Jobs.run`` of ``circuits.copying``: the
  census on the probe, then the previous-token heads switched off one by one).

A job not done yet is ``waiting`` (its stage, its place in line, what is done of how
much); a job that ended in an error is ``failed`` with the job's message; a text the
model cannot take (too many tokens) raises ``FieldError`` at ``("text",)`` before anything
is queued. A model whose package is missing is ``failed`` with the words that say how to
install it. What is read from finished traces is kept per job (a few, the newest).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from attnlab.engine.errors import FieldError
from attnlab.models import registry
from attnlab.models.files import ModelNotInstalled
from attnlab.models.jobs.line import Busy, Stopping
from attnlab.models.jobs.texts import check_tokens
from attnlab.models.labs import embeddings, facts, logits, needle
from attnlab.models.labs.asks import Ask, Measured

KV_RUN = "attnlab.models.labs.kv:generation_cache"
SPECULATE_RUN = "attnlab.models.labs.speculate:compare"
SERVING_RUN = "attnlab.models.labs.serving:compare"
COPYING_RUN = "attnlab.models.labs.circuits:copying"
KEEP_READ = 32  # numbers read from finished traces, kept by job id

_read: OrderedDict[tuple, object] = OrderedDict()
_lock = threading.Lock()


def _kept(key: tuple, compute: Callable[[], object]) -> object:
    with _lock:
        if key in _read:
            _read.move_to_end(key)
            return _read[key]
    value = compute()  # outside the lock: the same numbers if two threads compute them
    with _lock:
        _read[key] = value
        while len(_read) > KEEP_READ:
            _read.popitem(last=False)
    return value


def _waiting(job, jobs, *, done: int = 0, total: int = 0, unit: str = "") -> Measured:
    stage = job.status if job.status in ("queued", "loading", "running") else "queued"
    if stage == "running" and not total:
        done, total = getattr(job, "layers_done", 0), getattr(job, "n_layer", 0)
        unit = "layer"
    return Measured(
        "waiting", stage=stage, place=jobs.place(job), done=done, total=total, unit=unit,
        title=registry.title(job.model),
    )  # fmt: skip


def _ended(job) -> Measured | None:
    if job.status in ("error", "cancelled"):
        return Measured("failed", message=job.message, title=registry.title(job.model))
    return None


def _logits(ask: Ask, jobs) -> Measured:
    a = ask.args
    job = jobs.start(ask.model, a["text"])
    if job.status != "done":
        return _ended(job) or _waiting(job, jobs)
    data = _kept(("logits", job.id, a["top"]), lambda: logits.next_logits(job.trace, a["top"]))
    return Measured("done", data=data, title=registry.title(ask.model))


def _needle(ask: Ask, jobs) -> Measured:
    a = ask.args
    texts = _kept(
        ("needle-texts", ask.model, a["needle"], a["filler"], a["question"], a["lengths"]),
        lambda: needle.texts(ask.model, a["needle"], a["filler"], a["question"], a["lengths"]),
    )
    found = [jobs.start(ask.model, t) for t in texts]
    for job in found:
        if (failed := _ended(job)) is not None:
            return failed
    unfinished = [job for job in found if job.status != "done"]
    if unfinished:
        done = len(found) - len(unfinished)
        return _waiting(unfinished[0], jobs, done=done, total=len(found), unit="trace")

    def rows() -> list[dict]:
        return [needle.row(j.trace, t, a["word"], a["layer"], a["head"]) for j, t in zip(found, texts)]

    key = ("needle", *(j.id for j in found), a["word"], a["layer"], a["head"])
    data = {"texts": texts, "rows": _kept(key, rows)}
    return Measured("done", data=data, title=registry.title(ask.model))


def _kv(ask: Ask, jobs) -> Measured:
    a = ask.args
    check_tokens(ask.model, a["prompt"])
    job = jobs.run(ask.model, KV_RUN, ask.arguments)
    if job.status != "done":
        return _ended(job) or _waiting(job, jobs, done=job.done_count, total=job.total, unit="step")
    return Measured("done", data=job.result, title=registry.title(ask.model))


def _copying(ask: Ask, jobs) -> Measured:
    check_tokens(ask.model, ask.args["text"])
    job = jobs.run(ask.model, COPYING_RUN, ask.arguments)
    if job.status != "done":
        return _ended(job) or _waiting(job, jobs, done=job.done_count, total=job.total, unit="step")
    return Measured("done", data=job.result, title=registry.title(ask.model))


def _timed(function: str, field: str) -> Callable[[Ask, object], Measured]:
    """A lab's timed comparison in the worker (``speculate.py``, ``serving.py``): its texts checked
    against the token cap first, its progress counted in tokens."""

    def run(ask: Ask, jobs) -> Measured:
        texts = ask.args[field]
        for text in [texts] if isinstance(texts, str) else texts:
            check_tokens(ask.model, text)
        job = jobs.run(ask.model, function, ask.arguments)
        if job.status != "done":
            return _ended(job) or _waiting(job, jobs, done=job.done_count, total=job.total, unit="token")
        return Measured("done", data=job.result, title=registry.title(ask.model))

    return run


def _embeddings(ask: Ask, jobs) -> Measured:
    a = ask.args
    data = embeddings.embed(tuple(a["sentences"]), tuple(a["matches"]))
    return Measured("done", data=data, title=registry.title(ask.model))


RUNS: dict[str, Callable[[Ask, object], Measured]] = {
    "shapes": lambda ask, jobs: Measured("done", data=facts.shapes(ask.model)),
    "rope": lambda ask, jobs: Measured("done", data=facts.rope(ask.model)),
    "embeddings": _embeddings,
    "logits": _logits,
    "needle": _needle,
    "kv": _kv,
    "speculate": _timed(SPECULATE_RUN, "prompt"),
    "serving": _timed(SERVING_RUN, "prompts"),
    "copying": _copying,
}


def measure(ask: Ask, jobs) -> Measured:
    """Answer ``ask`` (see the module docstring); ``jobs`` is the job line (``models.jobs.Jobs``)."""
    try:
        return RUNS[ask.run](ask, jobs)
    except FieldError as error:
        if error.loc[:1] != ("model",):
            raise
        return Measured("failed", problem=error.problem, title=registry.title(ask.model))
    except ModelNotInstalled as error:
        return Measured("failed", message=str(error), title=registry.title(ask.model))
    except Busy as error:
        return Measured("waiting", stage="queued", message=str(error), title=registry.title(ask.model))
    except Stopping as error:
        return Measured("failed", message=str(error), title=registry.title(ask.model))
