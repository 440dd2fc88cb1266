"""Read a GGUF file: its metadata and its tensors, dequantized to float32.

GGUF lists a matrix's shape innermost-first (``[n_in, n_out]``); the array
``gguf`` hands back, once dequantized, is ``(n_out, n_in)`` like a PyTorch
``Linear.weight``. ``matrix`` returns that layout; loaders transpose once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True, kw_only=True)
class GGUFContents:
    """Metadata (``key -> value``) and float32 tensors (``name -> array``)."""

    metadata: dict[str, Any]
    tensors: dict[str, np.ndarray]
    types: dict[str, str]  # tensor name -> stored type, e.g. "Q4_1"

    def matrix(self, name: str) -> np.ndarray:
        """A stored weight, ``(n_out, n_in)`` float32."""
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"the GGUF file has no tensor {name!r}") from None


_LISTS = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type")


def read_gguf(path: Path | str) -> GGUFContents:
    """Read every tensor of ``path`` and dequantize it (Q4_1, Q8_0, F32 ...) to float32."""
    from gguf import GGUFReader
    from gguf.quants import dequantize

    reader = GGUFReader(str(path))
    metadata: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        metadata[key] = field.contents()
    tensors: dict[str, np.ndarray] = {}
    types: dict[str, str] = {}
    for tensor in reader.tensors:
        values = dequantize(tensor.data, tensor.tensor_type)
        # innermost-first shape -> numpy order: (n_out, n_in) for a matrix.
        shape = tuple(int(n) for n in reversed(tensor.shape.tolist()))
        tensors[tensor.name] = np.ascontiguousarray(values, dtype=np.float32).reshape(shape)
        types[tensor.name] = tensor.tensor_type.name
    return GGUFContents(metadata=metadata, tensors=tensors, types=types)
