"""Synthetic SmolLM2 runs for the speculative-decoding lab's tests: the numbers a real run records.

A "target" is a greedy output drawn from a small vocabulary (so the text repeats and drafts are
found); the steps follow from the rule on it (``draft.replay``), each verified row's argmax is the
greedy token up to the first rejected draft and anything after it, and the times grow at random.
"""

from __future__ import annotations

from hypothesis import strategies as st

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.speculate import CONTROLS
from attnlab.lab.connections.speculate.draft import replay

STOP = [0, 2]
VOCAB = 6  # ids 0..5: 0 and 2 end the text


def run_data(draw, prompt, target, *, tokens, ngram, draft) -> dict:
    steps = replay(prompt, target, ngram=ngram, draft=draft, max_new_tokens=tokens, stop_ids=set(STOP))
    at, out, recorded = 0.0, 0, []
    spec_times, plain_times = [], []
    prefill = draw(st.floats(0.01, 0.5))
    plain_t = prefill
    for _ in target:
        plain_times.append(plain_t)
        plain_t += draw(st.floats(0.005, 0.05))
    at = draw(st.floats(0.01, 0.5))
    for s in steps:
        spec_times.append(at)  # the target's token, read from the last pass
        seconds = draw(st.floats(0.005, 0.1)) if s.passes else 0.0
        argmax = []
        if s.passes:
            rows = len(s.proposed) + 1
            greedy = target[out + 1 : out + 1 + rows]
            argmax = [*greedy[: s.accepted + 1], *draw(st.lists(st.integers(3, VOCAB - 1), min_size=rows,
                                                                 max_size=rows))][:rows]  # fmt: skip
            if len(argmax) < rows:
                argmax += [1] * (rows - len(argmax))
        at += seconds
        spec_times += [at] * s.accepted
        recorded.append({"first": s.first, "proposed": list(s.proposed), "argmax": argmax,
                         "accepted": s.accepted, "seconds": seconds, "passes": s.passes})  # fmt: skip
        out += 1 + s.accepted
    ids = list(target)
    return {
        "prompt_ids": list(prompt),
        "stop_ids": STOP,
        "texts": {str(i): ["", " a", "\n", "b", " c", "dd"][i] for i in range(VOCAB)},
        "plain": {"ids": ids, "times": plain_times, "total_s": plain_times[-1], "first_s": plain_times[0],
                  "passes": len(ids)},
        "speculative": {"ids": ids, "times": spec_times, "total_s": spec_times[-1], "first_s": spec_times[0],
                        "passes": 1 + sum(s.passes for s in steps), "steps": recorded},
    }  # fmt: skip


@st.composite
def runs(draw) -> tuple[dict, dict]:
    """``(values, measured)``: the lab's inputs and a synthetic done run for them."""
    tokens = draw(st.integers(4, 24))
    ngram, draft = draw(st.integers(1, 4)), draw(st.integers(1, 8))
    prompt = draw(st.lists(st.sampled_from([1, 3, 4, 5]), min_size=1, max_size=12))  # no stop id
    body = draw(st.lists(st.integers(3, VOCAB - 1), min_size=tokens, max_size=tokens))
    if draw(st.booleans()):  # the text ends its turn before the cap
        body = [*body[: draw(st.integers(0, tokens - 1))], draw(st.sampled_from(STOP))]
    weights = {f"{w}{i}": draw(st.integers(1, 9)) for w in "pq" for i in range(1, 5)}
    values = read(CONTROLS, {"tokens": tokens, "ngram": ngram, "draft": draft, **weights}, "inputs")
    data = run_data(draw, prompt, body, tokens=tokens, ngram=ngram, draft=draft)
    return values, {"speculate": Measured("done", data=data, title="SmolLM2-135M-Instruct")}
