"""Read a GGUF file through a memory map: its metadata, and its tensors as the bytes it stores.

Nothing is dequantized or copied on opening: :meth:`GGUFFile.raw` is a read-only
view of a tensor's bytes in the map (a Q4_1 or Q8_0 matrix as its blocks,
``(n_out, bytes per row)``), :meth:`GGUFFile.array` a float32 tensor as it is
stored. :meth:`GGUFFile.dequantized` gives a tensor's float32 values through
``gguf.quants`` (the reference dequantizer).

The header is parsed here, not by ``gguf.GGUFReader``, which builds a NumPy
view per field part, slow on SmolLM2's 49152-token vocabulary (docs/performance.md); the
values are the same as its ``field.contents()`` (tested).

GGUF lists a matrix's shape innermost-first (``[n_in, n_out]``); :meth:`shape`
is NumPy's order, ``(n_out, n_in)`` for a matrix, like a PyTorch
``Linear.weight``. The file is little-endian (GGUF version 2 or 3), as every
GGUF file llama.cpp writes for these machines.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# GGUF value types -> struct formats (8: string, 9: array)
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# ggml tensor types: (name, weights per block, bytes per block)
_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 8: ("Q8_0", 32, 34)}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    type: str  # "F32", "Q4_1", "Q8_0", ...
    shape: tuple[int, ...]  # NumPy order: (n_out, n_in) for a matrix
    offset: int  # byte offset in the file
    nbytes: int


class GGUFFile:
    """An open GGUF file: ``metadata`` (key -> value), ``tensors`` (name -> :class:`TensorInfo`)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._buffer = np.frombuffer(self._map, dtype=np.uint8)  # read-only: the map is
        self.metadata, self.tensors = _parse(self._map)

    def raw(self, name: str) -> np.ndarray:
        """The stored bytes of tensor ``name``: (rows, bytes per row) uint8, a read-only view of the map."""
        info = self.info(name)
        rows = int(np.prod(info.shape[:-1], dtype=np.int64)) if len(info.shape) > 1 else 1
        return self._buffer[info.offset : info.offset + info.nbytes].reshape(rows, -1)

    def array(self, name: str) -> np.ndarray:
        """An F32 tensor as stored, in NumPy's order: a read-only float32 view of the map."""
        info = self.info(name)
        if info.type != "F32":
            raise ValueError(f"{name} is stored as {info.type}, not F32")
        flat = self._buffer[info.offset : info.offset + info.nbytes].view(np.float32)
        return flat.reshape(info.shape)

    def dequantized(self, name: str) -> np.ndarray:
        """Tensor ``name``'s float32 values by ``gguf.quants.dequantize`` (a new array, NumPy's order)."""
        from gguf import GGMLQuantizationType
        from gguf.quants import dequantize

        info = self.info(name)
        values = dequantize(self.raw(name), GGMLQuantizationType[info.type])
        return np.ascontiguousarray(values, dtype=np.float32).reshape(info.shape)

    def info(self, name: str) -> TensorInfo:
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"the GGUF file has no tensor {name!r}") from None


class _Cursor:
    __slots__ = ("data", "at")

    def __init__(self, data) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str):
        value = struct.unpack_from("<" + fmt, self.data, self.at)[0]
        self.at += struct.calcsize("<" + fmt)
        return value

    def string(self) -> str:
        n = self.take("Q")
        text = self.data[self.at : self.at + n].decode("utf-8", errors="replace")  # mmap slices are bytes
        self.at += n
        return text

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            raise ValueError(f"unknown GGUF value type {kind} at byte {self.at}")
        item, count = self.take("I"), self.take("Q")
        if item == _STRING:
            return self.strings(count)
        if item in _SCALARS:  # numbers: one unpack for the whole array
            fmt = _SCALARS[item]
            values = list(struct.unpack_from(f"<{count}{fmt}", self.data, self.at))
            self.at += count * struct.calcsize("<" + fmt)
            return values
        return [self.value(item) for _ in range(count)]

    def strings(self, count: int) -> list[str]:
        data, at, out = self.data, self.at, []
        length = struct.Struct("<Q").unpack_from
        for _ in range(count):
            (n,) = length(data, at)
            out.append(data[at + 8 : at + 8 + n].decode("utf-8", errors="replace"))
            at += 8 + n
        self.at = at
        return out


def _parse(data) -> tuple[dict[str, Any], dict[str, TensorInfo]]:
    c = _Cursor(data)
    if data[:4] != b"GGUF":
        raise ValueError("not a GGUF file (no GGUF magic)")
    c.at = 4
    version = c.take("I")
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not supported (2 or 3)")
    n_tensors, n_kv = c.take("Q"), c.take("Q")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = c.string()
        metadata[key] = c.value(c.take("I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        dims = [c.take("Q") for _ in range(c.take("I"))]
        kind, offset = c.take("I"), c.take("Q")
        infos.append((name, dims, kind, offset))
    alignment = int(metadata.get("general.alignment", 32))
    start = -(-c.at // alignment) * alignment
    tensors = {}
    for name, dims, kind, offset in infos:
        if kind not in _TYPES:
            raise ValueError(f"tensor {name} has ggml type {kind}, which this reader does not know")
        type_name, per_block, block_bytes = _TYPES[kind]
        count = int(np.prod(dims, dtype=np.int64))
        nbytes = count // per_block * block_bytes
        at = start + offset
        if at + nbytes > len(data):
            raise ValueError(f"tensor {name} runs past the end of the file")
        tensors[name] = TensorInfo(name, type_name, tuple(int(n) for n in reversed(dims)), at, nbytes)
    return metadata, tensors
