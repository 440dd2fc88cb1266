"""Speculative decoding on SmolLM2 (models/labs/speculate.py): plain greedy decoding's tokens exactly,
its steps the rule's on those tokens."""

from __future__ import annotations

import pytest

from attnlab.lab.connections.speculate.draft import accepted, replay
from attnlab.models.chat import user_turn
from attnlab.models.labs.speculate import compare

pytestmark = pytest.mark.models

PROMPTS = [
    # repeats itself: most drafts are accepted
    "Monday: wake up, eat breakfast, go to work, come home. Tuesday: wake up, eat breakfast, go to work, "
    "come home. Wednesday:",
    "Alice: I like tea. Bob: I like tea. Carol: I like",  # drafts accepted and rejected
    "Once upon a time, there was a little",  # nothing to look up at n = 2
    user_turn("What is 2+2? Answer with a number only."),  # ends its turn before the cap: a stop token
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_speculative_decoding_gives_plain_greedy_tokens_and_the_rules_steps(smollm2, prompt):
    said = []
    run = compare(smollm2, lambda *m: said.append(m), prompt=prompt, max_new_tokens=20, ngram=2, draft=4)
    plain, spec = run["plain"], run["speculative"]
    assert spec["ids"] == plain["ids"] and len(plain["ids"]) <= 20
    stop = set(run["stop_ids"])
    steps = replay(run["prompt_ids"], plain["ids"], ngram=2, draft=4, max_new_tokens=20, stop_ids=stop)
    assert [(s["first"], tuple(s["proposed"]), s["accepted"], s["passes"]) for s in spec["steps"]] == [
        (s.first, s.proposed, s.accepted, s.passes) for s in steps
    ]
    assert all(accepted(s["proposed"], s["argmax"], stop) == s["accepted"] for s in spec["steps"])
    assert spec["passes"] == 1 + sum(s["passes"] for s in spec["steps"])
    assert plain["passes"] == len(plain["ids"])
    assert said[0] == ("running", 40) and said[-1] == ("progress", 20 + len(spec["ids"]))
    assert set(run["texts"]) >= {str(t) for t in (*run["prompt_ids"], *plain["ids"])}


def test_a_repeating_prompt_gets_drafts_accepted_and_saves_passes(smollm2):
    run = compare(smollm2, lambda *m: None, prompt=PROMPTS[0], max_new_tokens=20, ngram=2, draft=4)
    spec = run["speculative"]
    assert sum(s["accepted"] for s in spec["steps"]) >= 10  # the week repeats: most drafts are right
    assert spec["passes"] < run["plain"]["passes"]


def test_the_last_prompt_stops_at_the_end_of_its_turn(smollm2):
    run = compare(smollm2, lambda *m: None, prompt=PROMPTS[3], max_new_tokens=20, ngram=2, draft=4)
    assert run["plain"]["ids"][-1] in run["stop_ids"] and len(run["plain"]["ids"]) < 20
