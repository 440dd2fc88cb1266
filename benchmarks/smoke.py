"""What every benchmark's ``--smoke`` run shares: its flag, and how it says a peer was left out.

A smoke run is tiny (small sizes, one repeat) and exists so the suite can run every
benchmark (``tests/benchmarks/test_smoke.py``): a benchmark that no longer runs fails a
test. Its figures mean nothing, and nobody asserts them. A peer that is not installed
here (torch, transformers, sentence-transformers, llama-cpp-python, Chromium, the model
packages) is skipped with a printed reason, in a smoke run or a full one.

Each ``bench_*.py`` declares ``NEEDS``, a tuple of what its smoke run needs beyond the
test extra: ``"models"`` (the model packages) and ``"browser"`` (Chromium). The test
marks the run with them (``-m "not browser and not models"`` leaves it out); a script
that declares nothing is taken to need both.
"""

from __future__ import annotations

import importlib.util
import os

HELP = "a tiny run (small sizes, one repeat) that checks the benchmark still runs; its figures mean nothing"
CHROMIUM = "/usr/bin/chromium"


def add_flag(parser) -> None:
    """Add ``--smoke`` to an ``argparse`` parser."""
    parser.add_argument("--smoke", action="store_true", help=HELP)


def missing(*modules: str) -> str | None:
    """Why a peer cannot run here (the first of ``modules`` not installed), or None."""
    for module in modules:
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


def chromium_missing() -> str | None:
    """Why the browser measures cannot run here, or None."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (scripts/test.sh installs it)"
    return missing("playwright")


def skipped(what: str, reason: str) -> None:
    """Say that ``what`` was left out of this run, and why."""
    print(f"skipped: {what}: {reason}", flush=True)
