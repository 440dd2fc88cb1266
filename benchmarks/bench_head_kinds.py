"""Every head's five scores and kind at once: SmolLM2's 270 heads at 256 tokens, and MiniLM's 72.

    python benchmarks/bench_head_kinds.py [--repeats 7] [--tokens 256]
    python benchmarks/bench_head_kinds.py --smoke   # tiny: one repeat at 32 tokens

Made-up weights of SmolLM2's and MiniLM's shapes (float32, rows softmaxed over
the keys each query may see, causal for SmolLM2), token ids with repeats (a run
of 16 ids written over and over, as the repeated-run probe writes words). Times
``kinds.head_scores`` (the five scores plus self, vectorised) and
``kinds.profiles`` (the scores, each head's kind and its sentence): median and
best of ``--repeats`` runs. Target: well under a second for 270 heads at 256
tokens. The model view calls ``profiles`` once per trace.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from attnlab.lab.realmodel.kinds import head_scores, profiles
from smoke import add_flag

NEEDS = ()  # what its smoke run needs beyond the test extra (tests/benchmarks)

SHAPES = {"SmolLM2 (30 x 9, causal)": (30, 9, True), "MiniLM (6 x 12)": (6, 12, False)}


def _weights(n_layer: int, n_head: int, n: int, causal: bool, rng) -> tuple[np.ndarray, np.ndarray]:
    allowed = np.tril(np.ones((n, n), dtype=bool)) if causal else np.ones((n, n), dtype=bool)
    scores = rng.standard_normal((n_layer, n_head, n, n)).astype(np.float32) * 3
    scores = np.where(allowed, scores, -np.inf)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (w / w.sum(axis=-1, keepdims=True)).astype(np.float32), allowed  # (L, H, T, T)


def _time(fn, repeats: int) -> tuple[float, float]:
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), min(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--tokens", type=int, default=256)
    add_flag(parser)
    args = parser.parse_args()
    if args.smoke:
        args.repeats, args.tokens = 1, 32
    rng = np.random.default_rng(0)
    n = args.tokens
    ids = np.arange(n) % 16  # every token from the 17th on repeats an earlier one
    print("| model | heads | tokens | head_scores median (best) | profiles median (best) |")
    print("|---|---:|---:|---:|---:|")
    for name, (n_layer, n_head, causal) in SHAPES.items():
        w, allowed = _weights(n_layer, n_head, n, causal, rng)
        scores = _time(lambda: head_scores(w, allowed, ids), args.repeats)  # noqa: B023
        named = _time(lambda: profiles(w, allowed, ids), args.repeats)  # noqa: B023
        print(
            f"| {name} | {n_layer * n_head} | {n} | {scores[0] * 1e3:.0f} ms ({scores[1] * 1e3:.0f}) "
            f"| {named[0] * 1e3:.0f} ms ({named[1] * 1e3:.0f}) |"
        )


if __name__ == "__main__":
    main()
