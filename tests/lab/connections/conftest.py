"""The connection labs' tests: ``labtools.py`` (next to this file) holds their helpers."""

from __future__ import annotations

import sys
from pathlib import Path

# pytest runs with --import-mode=importlib, which leaves sys.path alone; put this folder on it
# so the tests can `from labtools import ...`.
sys.path.insert(0, str(Path(__file__).parent))
