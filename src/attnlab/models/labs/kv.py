"""The KV-cache lab's live part: a SmolLM2 generation that measures its own KV caches as they grow.

``generation_cache(model, say, prompt=..., new_tokens=...)`` runs in the model worker (a lab's
run: ``models.jobs.kinds.RunJob``). It fills one ``engine.cache.KVCache`` per layer with the prompt
(``model.prefill``), then appends one greedy token at a time (``model.forward`` with the
caches), and after the prompt and after each new token reads what the caches hold: every
layer's ``keys`` and ``values`` arrays, their shapes, dtype and ``nbytes`` (the bytes of the
filled part: the caches' buffers are allocated ahead, in doublings, and are not counted). Every
new token is forwarded, so after ``new_tokens`` steps the caches hold the prompt and all of them.
"""

from __future__ import annotations

import numpy as np

from attnlab.engine.cache import KVCache


def measure_caches(caches: list[KVCache]) -> dict:
    """What the caches hold now: tokens, each layer's key and value shapes and bytes, the total."""
    keys = [c.keys for c in caches]
    values = [c.values for c in caches]
    per_layer = [int(k.nbytes) + int(v.nbytes) for k, v in zip(keys, values)]
    return {
        "tokens": caches[0].length,
        "key_shape": list(keys[0].shape),
        "value_shape": list(values[0].shape),
        "dtype": str(keys[0].dtype),
        "itemsize": int(keys[0].dtype.itemsize),
        "layers": len(caches),
        "same_every_layer": all(
            k.shape == keys[0].shape and v.shape == values[0].shape for k, v in zip(keys, values)
        ),  # fmt: skip
        "per_layer": per_layer,
        "bytes": sum(per_layer),
    }


def generation_cache(model, say, *, prompt: str, new_tokens: int) -> dict:
    """Generate ``new_tokens`` greedy tokens after ``prompt``, measuring the caches after each step."""
    ids = model.encode(prompt)
    say("running", new_tokens + 1)
    caches = model.new_cache()
    logits = model.prefill(ids, cache=caches)
    steps = [measure_caches(caches)]
    say("progress", 1)
    drawn: list[int] = []
    for step in range(new_tokens):
        token = int(np.argmax(logits))
        drawn.append(token)
        logits = model.forward([token], cache=caches)[-1]
        steps.append(measure_caches(caches))
        say("progress", step + 2)
    return {
        "prompt_ids": list(ids),
        "prompt_tokens": model.token_labels(ids),
        "new_ids": drawn,
        "new_tokens": model.token_labels(drawn),
        "steps": steps,
    }
