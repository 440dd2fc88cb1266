"""Serving several requests on SmolLM2: one at a time against continuous batching, measured in the same run.

Every request arrives at time 0 and is decoded greedily to ``max_new_tokens``
tokens (or to the end of its turn). :func:`one_at_a_time` serves them in order,
each to its end before the next starts: its prompt pass, then one forward pass a
token. :func:`continuous` keeps up to ``batch`` requests running: a waiting
request joins as soon as one leaves (its prompt pass runs between two steps and
gives its first token), and every step decodes the running requests together,
one row each with its own KV cache and position, in one forward pass
(``Decoder.step_rows``: each row the bits of a one-request step). So
each request gets the same tokens either way (tested); only the waiting and the
time differ.

A step is recorded as ``{"start", "end", "kind", "requests"}``: seconds from the
run's start, ``"prefill"`` (one request's prompt pass) or ``"decode"``, and the
requests in it. A request's time to first token is when its prompt pass ends.
:func:`compare` is the serving lab's run in the model worker (``models.jobs.kinds.RunJob``):
both ways, one after the other, after a warm-up.
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

from attnlab.models.labs.speculate import warm_up


class _Clock:
    def __init__(self, tick) -> None:
        self.start = time.perf_counter()
        self.steps: list[dict] = []
        self.tick = tick

    def now(self) -> float:
        return time.perf_counter() - self.start

    def record(self, start: float, kind: str, requests: list[int]) -> float:
        end = self.now()
        self.steps.append({"start": start, "end": end, "kind": kind, "requests": requests})
        for _ in requests:
            if self.tick is not None:
                self.tick()
        return end


def _report(clock: _Clock, tokens: list[list[int]], first: list[float], last: list[float]) -> dict:
    return {"tokens": tokens, "first_s": first, "done_s": last, "total_s": clock.now(), "steps": clock.steps}


def one_at_a_time(model, prompts: list[list[int]], max_new_tokens: int, tick=None) -> dict:
    """Each request to its end, in order: every token its own forward pass."""
    clock = _Clock(tick)
    stop = model.stop_ids
    tokens: list[list[int]] = [[] for _ in prompts]
    first, last = [0.0] * len(prompts), [0.0] * len(prompts)
    for r, ids in enumerate(prompts):
        cache = model.new_cache()
        start = clock.now()
        logits = model.prefill(ids, cache=cache)
        tokens[r].append(int(np.argmax(logits)))
        first[r] = last[r] = clock.record(start, "prefill", [r])
        while tokens[r][-1] not in stop and len(tokens[r]) < max_new_tokens:
            start = clock.now()
            logits = model.forward([tokens[r][-1]], cache=cache)[-1]
            tokens[r].append(int(np.argmax(logits)))
            last[r] = clock.record(start, "decode", [r])
    return _report(clock, tokens, first, last)


def continuous(model, prompts: list[list[int]], max_new_tokens: int, batch: int, tick=None) -> dict:
    """Up to ``batch`` requests at once, a waiting one joining as soon as one finishes."""
    clock = _Clock(tick)
    stop = model.stop_ids
    tokens: list[list[int]] = [[] for _ in prompts]
    first, last = [0.0] * len(prompts), [0.0] * len(prompts)
    caches: dict[int, list] = {}
    waiting, running = deque(range(len(prompts))), []

    def finished(r: int) -> bool:
        return tokens[r][-1] in stop or len(tokens[r]) >= max_new_tokens

    while waiting or running:
        while waiting and len(running) < batch:  # 1) join: the prompt pass gives the first token
            r = waiting.popleft()
            caches[r] = model.new_cache()
            start = clock.now()
            logits = model.prefill(prompts[r], cache=caches[r])
            tokens[r].append(int(np.argmax(logits)))
            first[r] = last[r] = clock.record(start, "prefill", [r])
            if not finished(r):
                running.append(r)
        if not running:
            continue
        start = clock.now()  # 2) one step for every running request, one row each
        rows = model.step_rows([tokens[r][-1] for r in running], [caches[r] for r in running])
        for r, logits in zip(running, rows):
            tokens[r].append(int(np.argmax(logits)))
        end = clock.record(start, "decode", list(running))
        for r in running:
            last[r] = end
        for r in [r for r in running if finished(r)]:  # 3) leave: the place frees at once
            running.remove(r)
            del caches[r]
    return _report(clock, tokens, first, last)


def compare(model, say, *, prompts: tuple[str, ...], max_new_tokens: int, batch: int) -> dict:
    """The lab's run: warm-up, one request at a time, then continuous batching of ``prompts``; progress
    counts the tokens of both (``2 * max_new_tokens * len(prompts)`` at most)."""
    ids = [model.encode(p) for p in prompts]
    n = max_new_tokens
    total = 2 * n * len(ids)
    say("running", total)
    warm_up(model)
    done = [0]

    def tick() -> None:
        done[0] += 1
        say("progress", min(done[0], total))

    one = one_at_a_time(model, ids, n, tick)
    done[0] = total // 2
    batched = continuous(model, ids, n, batch, tick)
    shown = sorted({t for p in ids for t in p} | {t for ts in one["tokens"] for t in ts}
                   | {t for ts in batched["tokens"] for t in ts})  # fmt: skip
    return {
        "prompt_ids": ids,
        "stop_ids": sorted(model.stop_ids),
        "texts": {str(i): t for i, t in zip(shown, model.token_labels(shown))},
        "one": one,
        "batched": batched,
    }
