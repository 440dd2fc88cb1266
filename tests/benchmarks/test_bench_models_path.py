"""``bench_models.py --model PATH`` runs any model attnlab opens against HF transformers on the same file:
a decoder's folder, its GGUF file and an encoder's folder (the tiny family models), in its smoke run.

No figure is checked (timing never goes in a test): the rows are there, each with a number for attnlab
and for HF, and the floors beside them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_models.py"
NUMBER = r"\s+\d+\.\d\d"


def test_any_model_path_runs_against_hf(families, tmp_path):
    paths = [families.folder("qwen2"), families.gguf("qwen2", "Q4_0"), families.folder("bert")]
    args = [arg for p in paths for arg in ("--model", str(p))]
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    out = done.stdout
    def row(name: str, tail: str):  # the row's name, its numbers (attnlab, then HF), then ``tail``
        return re.search(re.escape(name) + tail, out)

    for title in ("qwen2 (float32)", "qwen2-Q4_0.gguf (stored)"):
        for kind in ("prefill 22 (ms)", "decode (ms/token)"):
            assert row(f"{title} {kind}", NUMBER + NUMBER + r"\s+attnlab/HF \d"), (kind, out)
        assert row(f"{title} decode floor (ms/token)", NUMBER + r"\s+[\d.]+ MB of weights"), out
    assert row("bert (float32) forward 22 (ms)", NUMBER + NUMBER + r"\s+attnlab/HF"), out
    assert "bert (float32) decode" not in out  # an encoder has no decoding step
    assert "llama.cpp" in out  # named as a peer, run or skipped with why
