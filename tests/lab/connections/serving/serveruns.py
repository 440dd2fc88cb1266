"""Synthetic SmolLM2 runs for the serving lab's tests: the numbers a real run records.

Each request's length (its tokens: the cap, or fewer ending in a stop id) decides both ways'
steps by the scheduling rule; every step takes a random time, and each request's first token
comes when its prompt pass ends, its last when its last step does.
"""

from __future__ import annotations

from hypothesis import strategies as st

from attnlab.lab.connections.controls import read
from attnlab.lab.connections.live import Measured
from attnlab.lab.connections.serving import CONTROLS
from attnlab.lab.connections.serving.schedule import schedule

STOP = [0, 2]


def way(draw, tokens: list[list[int]], batch: int) -> dict:
    at, steps = 0.0, []
    first, done = [0.0] * len(tokens), [0.0] * len(tokens)
    for kind, requests in schedule([len(t) for t in tokens], batch):
        end = at + draw(st.floats(0.001, 0.2))
        steps.append({"start": at, "end": end, "kind": kind, "requests": requests})
        for r in requests:
            if kind == "prefill":
                first[r] = end
            done[r] = end
        at = end + draw(st.floats(0.0, 0.001))
    return {"tokens": tokens, "first_s": first, "done_s": done, "total_s": at, "steps": steps}


@st.composite
def runs(draw) -> tuple[dict, dict]:
    """``(values, measured)``: the lab's inputs and a synthetic done run for them."""
    n = draw(st.integers(2, 8))
    cap, batch = draw(st.integers(4, 32)), draw(st.integers(1, 8))
    tokens = []
    for _ in range(n):
        length = draw(st.integers(1, cap)) if draw(st.booleans()) else cap
        body = draw(st.lists(st.integers(3, 9), min_size=length, max_size=length))
        if length < cap:
            body[-1] = draw(st.sampled_from(STOP))
        tokens.append(body)
    prompts = "\n".join(f"prompt {i}" for i in range(n))
    values = read(CONTROLS, {"prompts": prompts, "tokens": cap, "batch": batch}, "inputs")
    data = {
        "prompt_ids": [draw(st.lists(st.integers(3, 9), min_size=1, max_size=30)) for _ in range(n)],
        "stop_ids": STOP,
        "texts": {str(i): f" t{i}" for i in range(10)},
        "one": way(draw, tokens, 1),
        "batched": way(draw, tokens, batch),
    }
    return values, {"serving": Measured("done", data=data, title="SmolLM2-135M-Instruct")}
