"""benchmarks/bench_quant.py --smoke runs and prints a row for every type and both header readers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).parents[2] / "benchmarks" / "bench_quant.py"
TYPES = ("F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K")


def test_the_smoke_run_prints_every_type_and_the_header_readers():
    done = subprocess.run([sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {line.split("|")[1].strip() for line in done.stdout.splitlines() if line.startswith("| ")}
    assert set(TYPES) <= rows
    assert "attnlab GGUFFile (memory map)" in rows and "gguf.GGUFReader" in rows
    assert "llama.cpp" in done.stdout  # compared, or said why not
