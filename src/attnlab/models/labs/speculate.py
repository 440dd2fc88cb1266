"""Speculative decoding on SmolLM2, against plain greedy decoding, measured in the same run.

:func:`compare` (a lab's run in the model worker, ``models.jobs.kinds.RunJob``) decodes the prompt
twice: plain greedy decoding (``SmolLM2.generate_ids``: the prompt pass, then one
forward pass a token) and speculative decoding with a prompt-lookup draft
(``lab.connections.speculate.draft``: the rule), whose step puts the target's
token and the k drafts through one forward pass of k + 1 rows on the KV cache
(``Decoder.step_rows``: each row the bits a one-token pass gives) and
rolls the cache back past the first rejected draft (``KVCache.truncate``).

Both start from the same prompt pass, so every logit speculative decoding reads
is, bit for bit, one plain decoding computed: the tokens are the same (tested),
and only the time differs. Timings are ``time.perf_counter`` seconds from
before the prompt pass; a warm-up first compiles what the runs call, so neither
pays for it.
"""

from __future__ import annotations

import time

import numpy as np

from attnlab.models.labs.draft import accepted, propose
from attnlab.models.sampling import Sampling


def warm_up(model) -> None:
    """Run each path once on a scrap cache (numba compiles a kernel on its first call)."""
    cache = model.new_cache()
    model.prefill([1, 2], cache=cache)
    model.forward([3], cache=cache)
    model.step_rows([4, 5], [cache, cache])


def plain(model, ids: list[int], max_new_tokens: int, tick=None) -> dict:
    """Plain greedy decoding: the tokens and the time at each (seconds from the start)."""
    start = time.perf_counter()
    tokens, times = [], []
    for token in model.generate_ids(ids, max_new_tokens=max_new_tokens, sampling=Sampling()):
        tokens.append(token)
        times.append(time.perf_counter() - start)
        if tick is not None:
            tick()
    return {"ids": tokens, "times": times, "total_s": times[-1], "first_s": times[0], "passes": len(tokens)}


def speculative(model, ids: list[int], max_new_tokens: int, ngram: int, draft: int, tick=None) -> dict:
    """Speculative decoding with a prompt-lookup draft: its tokens and each step's numbers."""
    stop = model.stop_ids
    start = time.perf_counter()
    cache = model.new_cache()
    logits = model.prefill(ids, cache=cache)  # the same prompt pass as plain decoding
    first_s = time.perf_counter() - start
    out: list[int] = []
    times: list[float] = []
    steps: list[dict] = []
    passes = 1
    while True:
        first = int(np.argmax(logits))
        out.append(first)
        times.append(time.perf_counter() - start)
        if tick is not None:
            tick()
        if first in stop or len(out) >= max_new_tokens:
            steps.append({"first": first, "proposed": [], "argmax": [], "accepted": 0, "seconds": 0.0,
                          "passes": 0})  # fmt: skip
            break
        proposed = propose([*ids, *out], ngram, min(draft, max_new_tokens - len(out)))
        t0 = time.perf_counter()
        if proposed:
            rows = model.step_rows([first, *proposed], [cache] * (len(proposed) + 1))
        else:
            rows = model.forward([first], cache=cache)  # nothing to verify: a plain step
        seconds = time.perf_counter() - t0
        passes += 1
        argmax = [int(np.argmax(r)) for r in rows]
        kept = accepted(proposed, argmax, stop)
        for c in cache:
            c.truncate(len(ids) + len(out) + kept)  # the rejected drafts' keys and values go
        steps.append({"first": first, "proposed": proposed, "argmax": argmax, "accepted": kept,
                      "seconds": seconds, "passes": 1})  # fmt: skip
        for token in proposed[:kept]:
            out.append(token)
            times.append(time.perf_counter() - start)
            if tick is not None:
                tick()
        if out[-1] in stop or len(out) >= max_new_tokens:
            break
        logits = rows[kept]
    return {"ids": out, "times": times, "total_s": times[-1], "first_s": first_s, "passes": passes,
            "steps": steps}  # fmt: skip


def compare(model, say, *, prompt: str, max_new_tokens: int, ngram: int, draft: int) -> dict:
    """The lab's run: warm-up, plain greedy, then speculative decoding of ``prompt``; progress counts
    the tokens of both (``2 * max_new_tokens`` at most)."""
    ids = model.encode(prompt)
    n = max_new_tokens
    say("running", 2 * n)
    warm_up(model)
    done = [0]

    def tick() -> None:
        done[0] += 1
        say("progress", done[0])

    greedy = plain(model, ids, n, tick)
    done[0] = n  # the plain run may stop early, at the end of a turn
    spec = speculative(model, ids, n, ngram, draft, tick)
    shown = sorted({*ids, *greedy["ids"], *spec["ids"], *(t for s in spec["steps"] for t in s["proposed"])})
    return {
        "prompt_ids": ids,
        "stop_ids": sorted(model.stop_ids),
        "texts": {str(i): t for i, t in zip(shown, model.token_labels(shown))},
        "plain": greedy,
        "speculative": spec,
    }
