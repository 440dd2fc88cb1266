"""Serving on SmolLM2 (models/labs/serving.py): continuous batching gives every request one-at-a-time's
tokens, in the scheduling rule's steps."""

from __future__ import annotations

import pytest

from attnlab.lab.connections.serving.schedule import schedule
from attnlab.models.chat import user_turn
from attnlab.models.labs.serving import compare

pytestmark = pytest.mark.models

PROMPTS = ("Hi!", "The capital of France is", user_turn("Hi"), "Three fruits: apple, banana,")


@pytest.mark.parametrize("batch", [1, 3])
def test_batched_requests_get_the_same_tokens_in_the_rules_steps(smollm2, batch):
    said = []
    run = compare(smollm2, lambda *m: said.append(m), prompts=PROMPTS, max_new_tokens=16, batch=batch)
    one, bat = run["one"], run["batched"]
    assert bat["tokens"] == one["tokens"]
    lengths = [len(t) for t in one["tokens"]]
    assert any(n < 16 for n in lengths) and max(lengths) == 16  # one request ends its turn early
    for name, width in (("one", 1), ("batched", batch)):
        got = [(s["kind"], s["requests"]) for s in run[name]["steps"]]
        assert got == schedule(lengths, width)
        steps = run[name]["steps"]
        assert all(a["end"] <= b["start"] for a, b in zip(steps, steps[1:]))
        assert all(0 < f <= d for f, d in zip(run[name]["first_s"], run[name]["done_s"]))
    assert max(len(s["requests"]) for s in bat["steps"]) == batch
    assert said[0] == ("running", 2 * 16 * 4) and said[-1][0] == "progress"
