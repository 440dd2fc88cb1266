"""Fixtures of the program tests: run a generated program as a learner would, and the texts it runs on.

``run_program(answer_or_text)`` writes a program to a file, checks that its source imports nothing
of attnlab, runs it with ``python -I -X importtime`` (isolated: no PYTHONPATH, no user site; every
import it makes logged) in a subprocess, checks that no attnlab module was imported, and returns
the number it printed (its last line) as a float.

``smollm2_f32``: SmolLM2 on the float32 path (the session's weight cache); ``f32_trace(model)`` /
``source(trace)``: a trace of :data:`TEXT` made with details on the float32 path (MiniLM is float32
anyway) and the :class:`Source` a program of it runs on.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest

from attnlab.lab.realmodel.program.number import Source

TEXT = "The cat sat on the mat. The cat sat on the mat."  # repeats: induction and duplicate exist
TITLES = {"smollm2": "SmolLM2-135M-Instruct", "minilm": "all-MiniLM-L6-v2"}


def imports_of(text: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


@pytest.fixture
def run_program(tmp_path):
    def run(program) -> float:
        text = program["program"] if isinstance(program, dict) else program
        assert not {n for n in imports_of(text) if n.split(".")[0] == "attnlab"}
        path = tmp_path / (program["file_name"] if isinstance(program, dict) else "program.py")
        path.write_text(text)
        done = subprocess.run([sys.executable, "-I", "-X", "importtime", str(path)], capture_output=True,
                              text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
        imported = [
            line.split("|")[-1].strip() for line in done.stderr.splitlines() if "import time:" in line
        ]
        assert imported and not [m for m in imported if m.split(".")[0] == "attnlab"]
        return float(done.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture(scope="session")
def smollm2_f32(smollm2):
    """SmolLM2 on the float32 path (gguf's dequantized values, from the session's weight cache)."""
    return smollm2.with_dtype(np.float32)


@pytest.fixture(scope="session")
def f32_trace(request):
    """``f32_trace(model)``: :data:`TEXT` traced with details on the float32 path, made once."""
    made: dict = {}

    def trace(model: str):
        if model not in made:
            m = request.getfixturevalue("smollm2_f32" if model == "smollm2" else "minilm")
            made[model] = m.trace(TEXT, details=True)
        return made[model]

    return trace


def source_of(trace, *, path: str = "float32", **more) -> Source:
    return Source(model=trace.model, title=TITLES[trace.model], ids=tuple(trace.ids),
                  tokens=tuple(trace.tokens),
                  path=path, n_layer=trace.n_layer, n_head=trace.n_head, d_head=int(trace.q.shape[-1]),
                  vocab=None if trace.logits is None else int(trace.logits.shape[-1]), **more)  # fmt: skip


@pytest.fixture(scope="session")
def source():
    return source_of
