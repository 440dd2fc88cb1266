"""benchmarks/bench_class.py --smoke runs: its table, 0 errors, nothing lost to kill -9, and nothing
left behind in the temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_class.py"


def test_the_class_benchmark_smoke_run(tmp_path):
    command = [sys.executable, str(BENCH), "--smoke"]
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=BENCH.parent, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for row in ("learner action, no class (the peer)", "learner action, class running",
                "teacher view update delay", "machine floor: GET round trip"):
        assert row in out, row
    assert "errors: 0 (without a class 0, with 0) []" in out
    assert "all kept and every class socket back: yes" in out
    assert list(tmp_path.iterdir()) == []  # the class's database and logs went with it
