"""Every sentence of the serving lab is true of its numbers (hypothesis, on synthetic runs)."""

from __future__ import annotations

from hypothesis import given, settings
from labtools import page_claims
from serveruns import runs

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.serving import CONTROLS, LAB
from attnlab.lab.connections.serving.walk import LETTERS


@settings(max_examples=60, deadline=None)
@given(runs())
def test_every_claim_of_a_done_run(case):
    values, measured = case
    answer = LAB.answer_for(values, measured)
    same, rate, first, steps, again = page_claims(answer)
    data = measured["serving"].data
    one, bat = data["one"], data["batched"]
    n = len(one["tokens"])
    assert same == {"same": [True] * n, "requests": n}
    made = sum(len(t) for t in one["tokens"])
    assert rate["tokens"] == {"one": made, "batched": made}
    assert rate["seconds"] == {"one": one["total_s"], "batched": bat["total_s"]}
    assert rate["throughput"] == {"one": made / one["total_s"], "batched": made / bat["total_s"]}
    assert rate["ratio"] == rate["throughput"]["batched"] / rate["throughput"]["one"]
    assert ("times the throughput" in answer["words"][1]["text"]) == (rate["ratio"] >= 1)
    waited = max(range(n), key=lambda r: (one["first_s"][r], -r))
    assert first["longest"] == {"request": LETTERS[waited], "one": one["first_s"][waited],
                                "batched": max(bat["first_s"])}  # fmt: skip
    assert first["mean"] == {"one": sum(one["first_s"]) / n, "batched": sum(bat["first_s"]) / n}
    decode = {w: [s for s in data[w]["steps"] if s["kind"] == "decode"] for w in ("one", "batched")}
    assert steps["steps"] == {w: len(d) for w, d in decode.items()}
    assert steps["widest"] == max((len(s["requests"]) for s in decode["batched"]), default=0)
    assert steps["widest"] <= values["batch"]
    if steps["together"] is not None:
        wide = [s["end"] - s["start"] for s in decode["batched"] if len(s["requests"]) == steps["widest"]]
        assert steps["together"] == sum(wide) / len(wide)
    assert again == {"one": True, "batched": True}


def test_different_tokens_are_said():
    values = read(CONTROLS, {}, "inputs")
    tokens = [[5, 6], [7, 8]]
    one = {"tokens": tokens, "first_s": [0.1, 0.3], "done_s": [0.2, 0.4], "total_s": 0.4,
           "steps": [{"start": 0.0, "end": 0.1, "kind": "prefill", "requests": [0]}]}  # fmt: skip
    batched = one | {"tokens": [[5, 6], [7, 9]]}
    texts = {str(i): f" t{i}" for i in range(10)}
    data = {"prompt_ids": [[1], [1]], "stop_ids": [0], "texts": texts, "one": one, "batched": batched}
    words = LAB.answer_for(values, {"serving": Measured("done", data=data)})["words"]
    assert words[0]["claims"] == {"same": [True, False], "requests": 2}
    assert words[0]["text"] == "The tokens differ between the two ways for request B."


def test_a_run_not_in_is_said_and_nothing_is_drawn():
    values = read(CONTROLS, {}, "inputs")
    waiting = {"serving": Measured("waiting", stage="queued", place=2, title="SmolLM2-135M-Instruct")}
    answer = LAB.answer_for(values, waiting)
    assert answer["pictures"] == [] and answer["numbers"] == [] and answer["data"] == {"run": None}
    (line,) = answer["words"]
    assert line["text"] == (
        "SmolLM2 serves your prompts twice, one at a time and in a continuous batch: waiting, 2nd in line…"
    )
