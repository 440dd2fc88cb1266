"""The circuits lab's tests: ``copykit.py`` (next to this file) makes synthetic recorded runs."""

from __future__ import annotations

import sys
from pathlib import Path

# --import-mode=importlib leaves sys.path alone: put this folder on it for `from copykit import ...`.
sys.path.insert(0, str(Path(__file__).parent))
