"""How long SmolLM2's float32 weight cache takes to check and map, in a fresh process.

The cache verifies before it trusts (``models/weight_cache.py``): the manifest's
schema, the names and shapes against the GGUF file's tensor table, the CRC-32
of the ``.bin`` and a keyed BLAKE2b digest of every array. This prints the time
of a first map in a new process (every check) and of a second map in the same
process (the digests skipped), beside the floor: reading the same bytes once
with ``zlib.crc32`` alone, which is what the cache did before it checked digests.

Usage: ``python benchmarks/bench_weight_cache.py`` (builds the cache in a
temporary folder first: ~10-15 s). ``--smoke``: one timed run instead of three.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

from smoke import add_flag

NEEDS = ("models",)  # what its smoke run needs beyond the test extra (tests/benchmarks)

CHILD = r"""
import json, sys, time, zlib, mmap
from pathlib import Path
from attnlab.models import files
from attnlab.models.families import gguf_weights, llama
from attnlab.models.gguf_file import GGUFFile
folder = Path(sys.argv[1])
g = GGUFFile(files.smollm2_gguf())
arch = llama.architecture(g.metadata, set(g.tensors))
t0 = time.perf_counter()
_, how = gguf_weights.float32_weights(g, arch, cache_dir=folder)
t1 = time.perf_counter()
gguf_weights.float32_weights(g, arch, cache_dir=folder)
t2 = time.perf_counter()
(data,) = folder.glob("*.bin")
with open(data, "rb") as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    t3 = time.perf_counter(); zlib.crc32(m); t4 = time.perf_counter()
size = data.stat().st_size
print(json.dumps({"how": how, "first": t1 - t0, "again": t2 - t1, "crc": t4 - t3, "bytes": size}))
"""


def run(command: list[str]) -> str:
    """The child's output; its error output, and a failure, when it fails."""
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the child process failed:\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_flag(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-c", CHILD, folder]
        run(command)  # build
        time.sleep(3.5)  # older than the cache's settling time, as a real cache is
        rows = [json.loads(run(command)) for _ in range(1 if args.smoke else 3)]
    mb = rows[0]["bytes"] / 1e6
    print(f"SmolLM2 float32 weight cache: {mb:.0f} MB, served as {rows[0]['how']!r}")
    print("| run | first map, every check | second map, same process | floor: CRC-32 pass alone |")
    print("|---|---:|---:|---:|")
    for i, r in enumerate(rows, 1):
        print(f"| {i} | {r['first'] * 1e3:.0f} ms | {r['again'] * 1e3:.0f} ms | {r['crc'] * 1e3:.0f} ms |")


if __name__ == "__main__":
    main()
