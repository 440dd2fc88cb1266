"""The KV-cache lab's live part: a recorded generation's caches beside their count from the registry's
shapes, every claim recomputed (hypothesis, on synthetic recorded runs), and where the lab shows it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from labtools import assert_page_words
from synthetic import kv_run, shapes_measured

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.kv import CONTROLS, LAB
from attnlab.lab.connections.kv.generation import Generation
from attnlab.lab.connections.kv.walk import shapes_of
from attnlab.lab.connections.live import Measured
from shipped_shapes import SHAPES


def shapes(model: str) -> dict:
    """The model's shapes as ``models.labs.facts.shapes`` gives them (recorded: no model package)."""
    return dict(SHAPES[model])


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["smollm2", "minilm"]),
    st.integers(1, 256),
    st.integers(1, 16),
    st.sampled_from([2, 4, 8]),
    st.sampled_from([0, 0, 4, -64]),
)
def test_every_claim_of_a_recorded_run(model, prompt, new, itemsize, extra):
    facts = shapes(model)
    g = Generation(shapes_of(facts), kv_run(prompt, new, facts, itemsize, extra))
    L, kv, q, d = facts["layers"], facts["kv_heads"], facts["query_heads"], facts["head_dim"]
    tokens = list(range(prompt, prompt + new + 1))
    assert g.tokens == tokens
    assert g.counted() == [2 * L * kv * d * itemsize * n for n in tokens]
    assert g.counted(q) == [2 * L * q * d * itemsize * n for n in tokens]
    assert g.equal == (extra == 0) and g.data()["equal"] == (g.measured == g.counted())
    wrote, measured = g.sentences()
    for s in (wrote, measured):
        assert_page_words(s["text"])
    assert wrote["claims"] == {"prompt_tokens": prompt, "new_tokens": new, "layers": L}
    c = measured["claims"]
    assert c["tokens"] == prompt + new and c["bytes"] == g.measured[-1] and c["counted"] == g.counted()[-1]
    assert c["equal"] == (extra == 0) and c["steps"] == new + 1 and c["itemsize"] == itemsize
    assert c["mha"] == 2 * L * q * d * itemsize * (prompt + new)
    assert ("equal to the count at every one" in measured["text"]) == c["equal"]
    assert f"{c['bytes']:,}" in measured["text"] and f"{c['mha']:,}" in measured["text"]
    json.dumps([g.picture(), g.table(), g.data()], allow_nan=False)
    assert [row[5] for row in g.table()["rows"]] == [f"{b:,}" for b in g.measured]


def test_the_live_part_in_the_labs_answer():
    v = read(CONTROLS, {"live": "on", "new": 6}, "inputs")
    run = kv_run(5, 6, shapes("smollm2"))
    answer = LAB.answer(v, shapes_measured() | {"kv": Measured("done", data=run)})
    assert [p["id"] for p in answer["pictures"]] == ["sizes", "growth", "live", "pool", "waste"]
    assert answer["numbers"][1]["title"] == "SmolLM2's caches, step by step"
    texts = [w["text"] for w in answer["words"]]
    assert texts[2].startswith("Live: SmolLM2 read your prompt (5 tokens) and, greedily, wrote 6 more: “")
    assert texts[3].startswith(
        "After the last token the caches hold 11 tokens: keys and values of shape 3 × 11 × 64 in every "
        "layer, float32 (4 bytes a number). Their arrays' bytes add up to 506,880: "
        "2 × 30 × 3 × 64 × 4 × 11, equal to the count at every one of the 7 steps."
    )
    waiting = LAB.answer(v, shapes_measured() | {"kv": Measured("waiting", stage="running", done=2, total=7,
                                                                 unit="step")})  # fmt: skip
    assert waiting["words"][0]["text"] == (
        "SmolLM2 generates after your prompt, measuring its caches: running, 2 of 7 steps done…"
    )
    assert "live" not in waiting["data"] and "live" not in [p["id"] for p in waiting["pictures"]]
