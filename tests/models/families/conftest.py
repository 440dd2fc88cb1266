"""The family tests' helpers: ``hfhooks`` (transformers as the oracle, its activations under attnlab's
names) and ``ggufkit`` (GGUF files of the tiny models beyond familykit's), importable by name."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
