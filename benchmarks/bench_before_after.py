"""SmolLM2 decode and prefill, this tree against an older attnlab, in alternating fresh processes.

    git worktree add /tmp/before 1eb1dad   # the commit to compare with
    python benchmarks/bench_before_after.py --before /tmp/before [--pairs 3]
    python benchmarks/bench_before_after.py --smoke   # this tree only, tiny (tests/benchmarks)

Each process loads SmolLM2 on its Q4_1 blocks (``attnlab.models.load.smollm2`` here, or
``SmolLM2.load`` where an older tree has it), then times what generation does: the prefill of
256 tokens (median of 5, after 2 warm-up runs) and one decoding step after a 19-token prompt
(median of 64 steps, after 8). The two trees run in turn, ``--pairs`` times, so both see the
same machine; each line is one process. ``--before`` is the older tree's folder (its ``src``
goes first on ``PYTHONPATH``): ``bench_models.py`` itself cannot run on a tree from before the
one forward, whose modules it no longer finds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from smoke import add_flag

NEEDS = ("models",)

CHILD = r"""
import statistics, sys, time
import attnlab
try:
    from attnlab.models.load import smollm2
    m = smollm2(weights="q4_1")
except ImportError:  # a tree from before the one forward
    from attnlab.models.smollm import SmolLM2
    m = SmolLM2.load(weights="q4_1")
n_long, runs, steps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ids = m.encode("The quick brown fox jumps over the lazy dog, and then it runs into the forest to find")
long_ids = (ids * (n_long // len(ids) + 1))[:n_long]

def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start

for _ in range(2):
    m.prefill(long_ids, cache=m.new_cache())
prefill = statistics.median(timed(lambda: m.prefill(long_ids, cache=m.new_cache())) for _ in range(runs))
cache = m.new_cache()
m.forward(ids, cache=cache)
for _ in range(8):
    m.forward([ids[-1]], cache=cache)
cache = m.new_cache()
m.forward(ids, cache=cache)
decode = statistics.median(timed(lambda: m.forward([ids[-1]], cache=cache)) for _ in range(steps))
print(attnlab.__file__, f"{decode * 1e3:.2f}", f"{prefill * 1e3:.0f}")
"""


def run(tree: Path | None, smoke: bool) -> tuple[str, float, float]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), env.get("PYTHONPATH", "")])
    sizes = ("32", "1", "2") if smoke else ("256", "5", "64")
    done = subprocess.run([sys.executable, "-c", CHILD, *sizes], capture_output=True, text=True, env=env,
                          timeout=600, check=True)  # fmt: skip
    where, decode, prefill = done.stdout.split()[-3:]
    return where, float(decode), float(prefill)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--before", type=Path, help="an older attnlab tree (a git worktree's folder)")
    parser.add_argument("--pairs", type=int, default=3)
    add_flag(parser)
    args = parser.parse_args()
    trees = [("after", None)] + ([("before", args.before.resolve())] if args.before else [])
    pairs = 1 if args.smoke else args.pairs
    n_long = 32 if args.smoke else 256
    print(f"{'tree':8}{'decode ms/token':>17}{f'prefill {n_long} ms':>17}  attnlab imported from")
    for _ in range(pairs):
        for name, tree in trees:
            where, decode, prefill = run(tree, args.smoke)
            print(f"{name:8}{decode:17.2f}{prefill:17.0f}  {Path(where).parent}")


if __name__ == "__main__":
    main()
