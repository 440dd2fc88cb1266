"""The two connection labs that run SmolLM2, timed: speculative decoding and continuous batching.

    python benchmarks/bench_connections.py [--repeats 3] [--tokens 48] [--batch 4]
    python benchmarks/bench_connections.py --smoke   # tiny: checks that it runs (tests/benchmarks)

- Speculative decoding (``models.labs.speculate``): plain greedy decoding against
  speculative decoding with a prompt-lookup draft (n = 2, k = 4), the same prompt,
  in the same run; tokens a second (the prompt pass included), the ratio, the
  acceptance rate and the forward passes. Three prompts: one that repeats itself
  (most drafts accepted), one that half repeats, one with nothing to look up.
- Continuous batching (``models.labs.serving``): four requests of different
  lengths, one at a time against continuous batching (``--batch`` at once), in
  the same run: tokens a second over the whole run, the ratio, and the mean and
  longest time to first token (every request arriving at 0).
- The floor: the bytes a decoding pass must read (the q4_1 path's blocks: every
  block's product matrices and the output layer, as the model stores them) over
  the read bandwidth this machine shows (a NumPy reduction over 512 MB): no pass
  can take less. A verification or a batched step reads them once for all its
  rows, so its floor per token is that time over the tokens the pass makes.

Each repeat runs the two ways in alternating order (plain first, then speculative
first, ...) so both see the same machine load; the figures are medians. Every
repeat also checks that the two ways give the same tokens (they do: each row of a
shared pass is, bit for bit, a one-token pass; ``tests/models/test_smollm2_rows.py``).
``--smoke``: one repeat, 4 new tokens (2 a request when serving), a 16 MB floor read.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

from smoke import add_flag

os.environ.setdefault("HF_HUB_OFFLINE", "1")

NEEDS = ("models",)  # what its smoke run needs beyond the test extra (tests/benchmarks)

SPECULATE_PROMPTS = {
    "repeats": "Monday: wake up, eat breakfast, go to work, come home. Tuesday: wake up, eat breakfast, "
    "go to work, come home. Wednesday:",
    "half repeats": "Alice: I like tea. Bob: I like tea. Carol: I like",
    "no repeats": "Once upon a time, there was a little",
}
SERVING_PROMPTS = (
    "Hi!",
    "The capital of France is",
    "Write a short poem about the sea, the wind over the waves and the boats that come home at night:",
    "Three fruits: apple, banana,",
)
NGRAM, DRAFT = 2, 4


def read_bandwidth(np, smoke: bool = False) -> float:
    """Bytes per second one thread reads here: a NumPy reduction over 512 MB (median of 5; smoke: 16 MB)."""
    a = np.ones(1 << (21 if smoke else 26), dtype=np.uint64)
    np.bitwise_or.reduce(a)
    times = []
    for _ in range(1 if smoke else 5):
        t = time.perf_counter()
        np.bitwise_or.reduce(a)
        times.append(time.perf_counter() - t)
    return a.nbytes / statistics.median(times)


def block_bytes(model) -> int:
    """The bytes of weight blocks one decoding pass reads (every layer's products and the output layer),
    counted as ``bench_models.decode_bytes`` counts them."""
    from bench_models import decode_bytes

    return decode_bytes(model)


def speculate_rows(model, repeats: int, tokens: int) -> list[tuple]:
    from attnlab.models.labs.speculate import plain, speculative

    out = []
    for name, prompt in SPECULATE_PROMPTS.items():
        ids = model.encode(prompt)
        a, b, runs = [], [], []
        for i in range(repeats):
            order = ("plain", "spec") if i % 2 == 0 else ("spec", "plain")
            got = {}
            for way in order:
                if way == "plain":
                    got[way] = plain(model, ids, tokens)
                else:
                    got[way] = speculative(model, ids, tokens, NGRAM, DRAFT)
            assert got["plain"]["ids"] == got["spec"]["ids"], f"{name}: the tokens differ"
            a.append(len(got["plain"]["ids"]) / got["plain"]["total_s"])
            b.append(len(got["spec"]["ids"]) / got["spec"]["total_s"])
            runs.append(got["spec"])
        steps = runs[0]["steps"]
        proposed = sum(len(s["proposed"]) for s in steps)
        accepted = sum(s["accepted"] for s in steps)
        plain_rate, spec_rate = statistics.median(a), statistics.median(b)
        out.append((name, len(runs[0]["ids"]), plain_rate, spec_rate, accepted, proposed, runs[0]["passes"]))
    return out


def serving_rows(model, repeats: int, tokens: int, batch: int) -> dict:
    from attnlab.models.labs.serving import continuous, one_at_a_time

    prompts = [model.encode(p) for p in SERVING_PROMPTS]
    rate = {"one": [], "batched": []}
    mean_first = {"one": [], "batched": []}
    last_first = {"one": [], "batched": []}
    made = 0
    for i in range(repeats):
        order = ("one", "batched") if i % 2 == 0 else ("batched", "one")
        got = {}
        for way in order:
            got[way] = one_at_a_time(model, prompts, tokens) if way == "one" else continuous(
                model, prompts, tokens, batch
            )
        assert got["one"]["tokens"] == got["batched"]["tokens"], "the tokens differ"
        made = sum(len(t) for t in got["one"]["tokens"])
        for way, run in got.items():
            rate[way].append(made / run["total_s"])
            mean_first[way].append(sum(run["first_s"]) / len(prompts))
            last_first[way].append(max(run["first_s"]))
    med = statistics.median
    return {
        "made": made,
        "rate": {w: med(v) for w, v in rate.items()},
        "mean_first": {w: med(v) for w, v in mean_first.items()},
        "last_first": {w: med(v) for w, v in last_first.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=48, help="new tokens (speculative decoding)")
    parser.add_argument("--serve-tokens", type=int, default=32, help="new tokens a request (serving)")
    parser.add_argument("--batch", type=int, default=4)
    add_flag(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.repeats, args.tokens, args.serve_tokens = 1, 4, 2

    import numpy as np

    from attnlab.engine.threads import CORES
    from attnlab.models.labs.speculate import warm_up
    from attnlab.models.registry import get_model

    model = get_model("smollm2")
    if model.path != "q4_1":
        print(f"SmolLM2 runs on {model.path} here; the floor counts q4_1 blocks", file=sys.stderr)
    warm_up(model)
    bandwidth = read_bandwidth(np, args.smoke)
    floor_ms = block_bytes(model) / bandwidth * 1e3
    print(f"# bench_connections: {platform.machine()}, {CORES} cores, Python {platform.python_version()}, "
          f"SmolLM2 on {model.path}, {args.repeats} repeats (medians)")  # fmt: skip
    print(f"floor: {block_bytes(model) / 1e6:.0f} MB of blocks a pass at {bandwidth / 1e9:.1f} GB/s = "
          f"{floor_ms:.1f} ms a pass ({1e3 / floor_ms:.0f} tokens/s at one token a pass)")  # fmt: skip
    print()
    print(f"Speculative decoding, {args.tokens} new tokens, n = {NGRAM}, k = {DRAFT} (same run, same tokens)")
    print(f"{'prompt':<14}{'tokens':>7}{'plain tok/s':>13}{'spec tok/s':>12}{'ratio':>7}"
          f"{'accepted':>10}{'passes':>8}{'floor tok/s':>13}")  # fmt: skip
    for name, n, plain_rate, spec_rate, accepted, proposed, passes in speculate_rows(
        model, args.repeats, args.tokens
    ):
        floor = n / (passes * floor_ms / 1e3)  # the speculative run's passes at the floor
        print(f"{name:<14}{n:>7}{plain_rate:>13.1f}{spec_rate:>12.1f}{spec_rate / plain_rate:>7.2f}"
              f"{f'{accepted}/{proposed}':>10}{passes:>8}{floor:>13.0f}")  # fmt: skip
    print()
    s = serving_rows(model, args.repeats, args.serve_tokens, args.batch)
    print(f"Serving {len(SERVING_PROMPTS)} requests, {args.serve_tokens} new tokens each, batch {args.batch} "
          f"(same run, same tokens: {s['made']} in all)")  # fmt: skip
    print(f"{'way':<22}{'tok/s':>8}{'mean TTFT s':>13}{'last TTFT s':>13}")
    for way, label in (("one", "one at a time"), ("batched", "continuous batching")):
        print(f"{label:<22}{s['rate'][way]:>8.1f}{s['mean_first'][way]:>13.3f}{s['last_first'][way]:>13.3f}")
    print(f"ratio (batched / one at a time): {s['rate']['batched'] / s['rate']['one']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
