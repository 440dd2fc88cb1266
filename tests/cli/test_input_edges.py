"""The command line at its edges: bytes that are not UTF-8, empty values, closed pipes, bad hosts.

Through the real entry point (the installed ``attnlab`` script), with raw bytes for arguments.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ATTNLAB = shutil.which("attnlab", path=str(Path(sys.executable).parent))


def run(*args: str | bytes, stdin=None) -> subprocess.CompletedProcess:
    assert ATTNLAB, "the attnlab console script is not installed in this environment"
    argv = [os.fsencode(ATTNLAB), *(a if isinstance(a, bytes) else a.encode() for a in args)]
    return subprocess.run(argv, capture_output=True, timeout=120)


@pytest.mark.parametrize(
    "argv",
    [
        [b"heads", b"\xed\xa0\x80"],  # an encoded surrogate
        [b"logits", b"ab\xffcd"],
        [b"generate", b"ab\xffcd"],
        [b"trace", b"--labels", b"A,\xff,C"],
    ],
)
def test_an_argument_that_is_not_utf8_is_one_line_and_status_2(argv):
    # Before: a traceback and status 1 (the tokenizer refused the surrogates).
    done = run(*argv)
    assert done.returncode == 2
    said = f"attnlab: error: argument {len(argv)} is not valid UTF-8 text"
    assert done.stderr.decode().splitlines() == [said]
    assert done.stdout == b""


@pytest.mark.parametrize(
    ("flag", "said"), [("--q=", "--q: ''"), ("--keys=", "--keys: give"), ("--values=", "--values")]
)
def test_an_empty_vector_is_refused_not_taken_for_the_worked_example(flag, said):
    done = run("trace", flag)
    assert done.returncode == 2 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith(f"attnlab: error: {said}")


@pytest.mark.parametrize("argv", [["block", "--json"], ["trace", "--json"], ["block"]])
def test_a_pipe_closed_early_ends_quietly(argv):
    # Before: `attnlab block | head -c 10` printed a BrokenPipeError traceback.
    read, write = os.pipe()
    proc = subprocess.Popen([ATTNLAB, *argv], stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    os.read(read, 10)
    os.close(read)  # the reader goes away, as head does
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert err == b"" and proc.returncode in (0, 1)  # 0 when it had written all before the close


def test_a_negative_seed_is_named():
    done = run("generate", "hi", "--temperature", "1", "--seed", "-1", "--max-new-tokens", "1")
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == ["attnlab: error: seed must be a whole number >= 0, got -1"]


def test_a_host_that_cannot_be_bound_is_one_line():
    # Before: the "not loopback" warning came first, then the error.
    bad = "999.1.1.1"
    with pytest.raises(OSError):
        socket.getaddrinfo(bad, 80)
    done = run("serve", "--no-browser", "--host", bad, "--port", "0")
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        f"attnlab: error: cannot listen on {bad}: {done.stderr.decode().split(': ', 3)[3].strip()}"
    ]
    assert "warning" not in done.stderr.decode()


def test_generate_has_the_pages_prompt_cap_and_a_stated_cap_on_new_tokens():
    # Before: any prompt length, and --max-new-tokens 100000, were accepted.
    done = run("generate", "hi", "--max-new-tokens", "100000")
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        "attnlab: error: --max-new-tokens must be from 1 to 1024, not 100000"
    ]
    done = run("generate", "word " * 400, "--max-new-tokens", "2")
    assert done.returncode == 2 and done.stdout == b""
    (line,) = done.stderr.decode().splitlines()
    assert line.startswith("attnlab: error: prompt is 401 tokens long") and "at most 256 tokens" in line


@pytest.mark.models
def test_logits_into_a_pipe_closed_early_ends_quietly(smollm2):
    # Before: `attnlab logits hi --json | head -c 300` printed a BrokenPipeError traceback. Its
    # answer (~1.5 kB) fits a pipe's buffer, so the reader leaves before anything is written:
    # the first write meets the closed pipe, whatever the timing.
    read, write = os.pipe()
    proc = subprocess.Popen([ATTNLAB, "logits", "hi", "--json"], stdout=write, stderr=subprocess.PIPE)
    os.close(write)
    os.close(read)
    _, err = proc.communicate(timeout=300)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    assert err == b"" and proc.returncode in (0, 1)


def _commands() -> list[str]:
    from attnlab.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


@pytest.mark.parametrize("argv", [[], *([c] for c in _commands())])
def test_every_help_prints_and_exits_0(argv, capsys):
    # Before: `attnlab --help` raised TypeError: "95% interval" in the census's help read as a % format.
    from attnlab.cli import build_parser

    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args([*argv, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: attnlab") and "%%" not in out
    if argv == []:
        assert "with a 95% interval" in " ".join(out.split())
