"""A SmolLM2 generation measuring its own KV caches (models/labs/kv.py): the bytes the caches hold are the
count from the registry's shapes at every step, and the tokens are plain greedy decoding's."""

from __future__ import annotations

import pytest

from attnlab.lab.connections.kv.command import live
from attnlab.models.labs.facts import shapes
from attnlab.models.labs.kv import generation_cache

pytestmark = pytest.mark.models


def test_the_caches_hold_what_the_shapes_say_at_every_step(smollm2):
    said = []
    run = generation_cache(
        smollm2, lambda *m: said.append(m), prompt="The capital of France is", new_tokens=5
    )
    n = len(smollm2.encode("The capital of France is"))
    assert said == [("running", 6), *[("progress", i) for i in range(1, 7)]]
    assert [s["tokens"] for s in run["steps"]] == list(range(n, n + 6))
    for s in run["steps"]:
        # 30 layers × 3 key/value heads × 64 × 2 (K and V) × 4 bytes (float32) per token
        assert s["bytes"] == 30 * 3 * 64 * 2 * 4 * s["tokens"] == sum(s["per_layer"])
        assert s["key_shape"] == s["value_shape"] == [3, s["tokens"], 64] and s["same_every_layer"]
        assert (s["dtype"], s["itemsize"], s["layers"]) == ("float32", 4, 30)
    g = live(shapes("smollm2"), run)
    assert g.equal and g.counted(9)[-1] == 3 * g.measured[-1]  # MHA: 9 heads, 3 times the bytes
    greedy = list(
        smollm2.generate_ids(smollm2.encode("The capital of France is"), max_new_tokens=5, stop=False)
    )
    assert run["new_ids"] == greedy and run["new_tokens"] == smollm2.token_labels(greedy)
