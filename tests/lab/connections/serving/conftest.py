"""The serving lab's tests: ``serveruns.py`` (next to this file) builds synthetic runs."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
