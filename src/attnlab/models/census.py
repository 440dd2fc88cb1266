"""The head census over many texts: every head's scores on each text, on a process pool or on Ray.

:func:`score_text` traces one text as the model worker traces it
(:func:`attnlab.models.jobs.kinds.trace_text`: the model's own token count checked against its
cap) and scores every head of every layer with
:func:`attnlab.models.circuits.scores.head_scores` on the trace's weights: for each name in
:data:`attnlab.models.circuits.scores.CENSUS`, an ``(n_layer, n_head)`` float64 array, or
``None`` when no token of the text repeats (induction, duplicate-token).

:func:`score_texts` scores many texts, each alone, in other processes: a local
``concurrent.futures.ProcessPoolExecutor`` (processes started with "spawn"; each loads the
model once), or with ``ray=True`` Ray tasks (``ray.init``: a Ray instance started on this
machine, or the cluster at ``RAY_ADDRESS``; each Ray worker loads the model once). Results
come back in the texts' order, whichever finished first, and a text's numbers do not
depend on the process that made them (one text, one trace, the model's own bits), so both
ways give the same numbers bit for bit. ``progress(done, total)`` is called as texts finish.
The aggregation over texts (means and intervals) is the lab's
(:func:`attnlab.lab.realmodel.census.summary`).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.models import registry
from attnlab.models.circuits.scores import CENSUS as SCORES
from attnlab.models.circuits.scores import head_scores
from attnlab.models.jobs.kinds import trace_text

Progress = Callable[[int, int], None]  # (texts done, texts in all)


class RayDidNotStart(Exception):  # noqa: N818 - a typed reason, worded by the lab
    """``ray.init`` failed; ``reason``: its error's type and first line (Ray's are many lines long)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def score_text(model, name: str, text: str) -> dict:
    """One text's census: ``{"tokens": T, "scores": {score: (L, H) float64 or None}}``."""
    trace = trace_text(name, text, model, lambda *message: None)
    per_layer = [head_scores(trace.layer_weights(layer), trace.allowed, trace.ids)
                 for layer in range(trace.n_layer)]  # fmt: skip
    scores = {}
    for key in SCORES:
        rows = [s[key] for s in per_layer]
        scores[key] = None if rows[0] is None else np.stack(rows).astype(np.float64)  # (L, H)
    return {"tokens": len(trace.tokens), "scores": scores}


def score_in_process(name: str, text: str, weights: str = "auto") -> dict:
    """:func:`score_text` with this process's shared instance of model ``name`` (loaded once).

    A refusal comes back as a plain ``ValueError`` with the same sentence: a ``FieldError``
    does not cross a process boundary (it does not unpickle).
    """
    try:
        return score_text(registry.get_model(name, weights), name, text)
    except FieldError as error:
        raise ValueError(str(error)) from None


def default_workers(n_texts: int) -> int:
    """Processes for ``n_texts`` texts: one a CPU, at most 4 (each holds a model), at most one a text."""
    return max(1, min(n_texts, os.cpu_count() or 1, 4))


def score_texts(
    name: str,
    texts: Sequence[str],
    *,
    ray: bool = False,
    workers: int | None = None,
    progress: Progress | None = None,
    weights: str = "auto",
) -> list[dict]:
    """:func:`score_text` of every text, in the texts' order (see the module); ``weights``: what the
    model's products run on (:func:`attnlab.models.registry.get_model`)."""
    texts = list(texts)
    if not texts:
        return []
    if ray:
        return _on_ray(name, texts, progress, weights)
    return _on_pool(name, texts, workers or default_workers(len(texts)), progress, weights)


def _on_pool(name: str, texts: list[str], workers: int, progress: Progress | None, weights: str) -> list:
    out: list = [None] * len(texts)
    context = multiprocessing.get_context("spawn")  # no forked copy of this process's threads
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(score_in_process, name, text, weights): i for i, text in enumerate(texts)}
        for done, future in enumerate(as_completed(futures), 1):
            out[futures[future]] = future.result()
            if progress is not None:
                progress(done, len(texts))
    return out


def _on_ray(name: str, texts: list[str], progress: Progress | None, weights: str) -> list[dict]:
    import logging

    import ray

    started = not ray.is_initialized()
    if started:  # RAY_ADDRESS: a running cluster; else a Ray instance on this machine, ended after
        try:
            ray.init(address=os.environ.get("RAY_ADDRESS") or None, include_dashboard=False,
                     log_to_driver=False, logging_level=logging.WARNING)  # fmt: skip
        except Exception as error:  # noqa: BLE001 - Ray fails to start in many ways (under load: a timeout)
            first = (str(error).strip().splitlines() or [""])[0][:200]
            reason = f"{type(error).__name__}: {first}" if first else type(error).__name__
            raise RayDidNotStart(reason) from None
    try:
        task = ray.remote(score_in_process)
        refs = [task.remote(name, text, weights) for text in texts]
        index = {ref: i for i, ref in enumerate(refs)}
        out: list = [None] * len(texts)
        waiting, done = list(refs), 0
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            for ref in ready:
                out[index[ref]] = ray.get(ref)
                done += 1
                if progress is not None:
                    progress(done, len(texts))
        return out
    finally:
        if started:
            ray.shutdown()
