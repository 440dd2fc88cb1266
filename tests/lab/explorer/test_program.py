"""The generated Python prints exactly the trace's numbers, bit for bit."""

import json
import random
import subprocess
import sys
import textwrap

import pytest

from attnlab.engine.single import MAX_DIM, MAX_SOURCES, trace_query
from attnlab.lab import numbers as fmt
from attnlab.lab.explorer.program import to_python

KEYS = [[-1, 2], [1, 0], [0, 1]]
VALUES = [[2, 0], [0, 2], [-1, -1]]

# Runs each program file in fresh globals inside ONE subprocess and reports its stdout:
# the programs still run as separate Python code, without 500 interpreter start-ups.
DRIVER = textwrap.dedent(
    """
    import contextlib, io, json, runpy, sys
    results = []
    for path in sys.argv[1:]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        results.append(out.getvalue())
    json.dump(results, sys.stdout)
    """
)


def parse_precise(stdout: str) -> dict:
    """Read the program's full-precision section back into floats."""
    lines = stdout.split("Full precision:\n", 1)[1].strip().splitlines()
    sources = []
    for line in lines[:-2]:
        label, rest = line.rsplit(": dot=", 1)
        fields = dict(part.split("=", 1) for part in ("dot=" + rest).split("; "))
        sources.append(
            {
                "label": label,
                "dot": float(fields["dot"]),
                "score": float(fields["score"]),
                "share": float(fields["share"]),
                "carry": [float(x) for x in fields["contribution"].strip("[]").split(", ")],
            }
        )
    m_part, z_part = lines[-2].split("; ")
    return {
        "sources": sources,
        "m": float(m_part.split("=")[1]),
        "z": float(z_part.split("=")[1]),
        "output": [float(x) for x in lines[-1].split("=", 1)[1].strip("[]").split(", ")],
    }


def assert_program_matches(trace, stdout: str) -> None:
    got = parse_precise(stdout)
    assert [s["label"] for s in got["sources"]] == list(trace.labels)
    for i, s in enumerate(got["sources"]):
        for name, expected in (("dot", trace.dots[i]), ("score", trace.scores[i]),
                               ("share", trace.weights[i])):
            assert repr(s[name]) == repr(expected), (i, name)  # repr keeps -0.0 apart
        assert [repr(x) for x in s["carry"]] == [repr(x) for x in trace.carries[i]]
    assert repr(got["m"]) == repr(trace.m) and repr(got["z"]) == repr(trace.z)
    assert [repr(x) for x in got["output"]] == [repr(x) for x in trace.output]
    # The rounded table is the page's display rounding.
    table = stdout.split("\n\nFull precision:", 1)[0].splitlines()
    for i, line in enumerate(table[:-1]):
        share = fmt.rounded(trace.weights[i]) if trace.allowed[i] else "blocked"
        expected = f"{trace.labels[i]} {fmt.rounded(trace.dots[i])} {fmt.rounded(trace.scores[i])} {share}"
        assert line == expected
    assert table[-1] == f"output {fmt.vector(trace.output)}"


def run_programs(tmp_path, traces) -> list[str]:
    paths = []
    for n, trace in enumerate(traces):
        path = tmp_path / f"program_{n}.py"
        path.write_text(to_python(trace), encoding="utf-8")
        paths.append(str(path))
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *paths], capture_output=True, text=True, check=True,
        encoding="utf-8",
    )
    return json.loads(done.stdout)


def random_vector(rng: random.Random, d: int, kind: str) -> list[float]:
    def one() -> float:
        if kind == "huge":
            return rng.choice([-1, 1]) * rng.uniform(1, 9) * 10.0 ** rng.randint(100, 150)
        if kind == "tiny":
            return rng.choice([-1, 1]) * rng.choice([5e-324, 1e-310, rng.uniform(1, 9) * 1e-300])
        if kind == "zeros":
            return rng.choice([0.0, -0.0])
        if kind == "ints":
            return float(rng.randint(-5, 5))
        return rng.uniform(-10, 10) * 10.0 ** rng.randint(-3, 3)

    return [one() for _ in range(d)]


def random_inputs(rng: random.Random) -> dict:
    kind = rng.choice(["plain", "plain", "huge", "tiny", "zeros", "ints"])
    n = rng.choice([1, 2, 3, 3, 5, 8, MAX_SOURCES])
    d_k = rng.choice([1, 2, 2, 3, 7, MAX_DIM])
    d_v = rng.choice([1, 2, 2, 4])
    allowed = [rng.random() > 0.25 for _ in range(n)]
    if not any(allowed):
        allowed[rng.randrange(n)] = True
    if kind == "huge":  # keep products finite: a huge q meets modest keys
        q = random_vector(rng, d_k, "huge")
        keys = [random_vector(rng, d_k, "plain") for _ in range(n)]
    else:
        q = random_vector(rng, d_k, kind)
        keys = [random_vector(rng, d_k, kind) for _ in range(n)]
    values = [random_vector(rng, d_v, rng.choice([kind, "plain"])) for _ in range(n)]
    scale = rng.choice([None, None, None, 1.0, 0.125, 3.7])
    return dict(q=q, keys=keys, values=values, allowed=allowed, scale=scale)


def test_worked_example_program_prints_the_page(tmp_path):
    trace = trace_query([2, 1], KEYS, VALUES)
    (stdout,) = run_programs(tmp_path, [trace])
    assert stdout.startswith("A 0 0 0.14\nB 2 1.414 0.576\nC 1 0.707 0.284\noutput [-0.004, 0.868]\n")
    assert "m=1.414213562373095; stable denominator=1.736185425829454" in stdout
    assert "output=[-0.00393691965450399, 0.8679552806894639]" in stdout
    assert_program_matches(trace, stdout)


def test_program_runs_standalone_without_numpy(tmp_path):
    trace = trace_query([2, 1], KEYS, VALUES, allowed=[True, False, True])
    source = to_python(trace)
    assert "numpy" not in source and "import" in source
    path = tmp_path / "attention.py"
    path.write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, "-I", str(path)], capture_output=True, text=True,
                          check=True)
    assert "B 2 1.414 blocked" in done.stdout
    assert_program_matches(trace, done.stdout)


def test_500_random_and_edge_programs_equal_the_trace(tmp_path):
    rng = random.Random(20261129)
    traces = []
    while len(traces) < 520:
        try:
            traces.append(trace_query(**random_inputs(rng)))
        except ValueError:
            continue  # an input the engine refuses (e.g. overflow) has no program
    kinds = {
        "one source": any(t.n_sources == 1 for t in traces),
        "64 sources": any(t.n_sources == 64 for t in traces),
        "blocked": any(t.blocked for t in traces),
        "underflow": any(t.underflowed for t in traces),
        "negative zero": any(repr(x) == "-0.0" for t in traces for x in t.q),
        "huge": any(abs(x) > 1e100 for t in traces for x in t.q),
        "subnormal": any(0 < abs(x) < 2.3e-308 for t in traces for v in t.keys for x in v),
    }
    assert all(kinds.values()), kinds
    outputs = run_programs(tmp_path, traces)
    for trace, stdout in zip(traces, outputs):
        assert_program_matches(trace, stdout)


@pytest.mark.parametrize(
    "label",
    ['"); import os #', "';import os;os.system('echo x')#", "\\", '"""', "ünïcödé ✓",
     "{label}", "a\\nb"],
)
def test_labels_stay_strings(tmp_path, label):
    trace = trace_query([2, 1], KEYS, VALUES, labels=[label, "B", "C"])
    (stdout,) = run_programs(tmp_path, [trace])
    assert stdout.splitlines()[0] == f"{label} 0 0 0.14"
    assert_program_matches(trace, stdout)
