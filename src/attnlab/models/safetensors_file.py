"""Read a safetensors file through a memory map: float32, float16 and bfloat16 widened exactly to float32.

A safetensors file is an 8-byte little-endian header length, a JSON header
(``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``)
and the tensors' bytes, row-major, offsets counted from the end of the header.
``safetensors.numpy`` copies every tensor it loads and has no bfloat16 (NumPy has
none), so the header is read here and the tensors are views of the map:
:meth:`SafetensorsFile.array` a tensor as stored (read-only, nothing copied),
:meth:`SafetensorsFile.float32` its float32 values, made when asked for: float32
as stored, float16 widened (exact), bfloat16's 16 bits put in a float32's top half
(exact), and :meth:`SafetensorsFile.matrix` a ``Linear.weight`` as the engine's
W, whose products run on the file's 16- or 32-bit numbers (half the bytes of a
float32 copy for a bfloat16 checkpoint). Another dtype is refused by name when
its values are asked for (:class:`~attnlab.models.file_errors.UnreadableTensorType`),
never rounded.

A broken file is refused on opening with a typed error carrying the facts
(:mod:`attnlab.models.file_errors`): a file cut short (in its header or in a
tensor), a header that is not a JSON object of tensors, a tensor whose byte
range runs backwards, or whose dtype and shape need another byte count than its
range holds. The values equal the ``safetensors`` library's (tested).
"""

from __future__ import annotations

import json
import math
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attnlab.models.file_errors import (
    BadHeader,
    TensorBytesMismatch,
    TensorOutside,
    Truncated,
    UnreadableTensorType,
)

WIDENED = ("F32", "F16", "BF16")  # the dtypes whose values float32 holds exactly
# safetensors dtypes -> NumPy's (BF16 as its raw 16 bits); F8_* and others: their size only
DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
    "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
}  # fmt: skip
ITEM_BYTES = {**{k: np.dtype(v).itemsize for k, v in DTYPES.items()}, "F8_E4M3": 1, "F8_E5M2": 1}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str  # safetensors' name: "F32", "BF16", ...
    shape: tuple[int, ...]
    offset: int  # byte offset in the file
    nbytes: int


class SafetensorsFile:
    """An open safetensors file: ``tensors`` (name -> :class:`TensorInfo`, in the header's order) and
    ``metadata`` (its ``__metadata__``, str -> str)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        where = str(path)
        with open(self.path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(0)
            if size < 8:
                raise Truncated(path=where, needed=8, size=size)
            (n,) = struct.unpack("<Q", f.read(8))
            if 8 + n > size:
                raise Truncated(path=where, needed=8 + n, size=size)
            header = _header(f.read(n), where)
            self.metadata: dict[str, Any] = header.pop("__metadata__", None) or {}
            self.tensors = _infos(header, 8 + n, size, where)
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # 8 bytes at least: never empty
        self._buffer = np.frombuffer(self._map, np.uint8)  # read-only: the map is

    def info(self, name: str) -> TensorInfo:
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"the safetensors file has no tensor {name!r}") from None

    def array(self, name: str) -> np.ndarray:
        """Tensor ``name`` as stored: a read-only view of the map (BF16 as its raw uint16 bits)."""
        info = self.info(name)
        if info.dtype not in DTYPES:
            raise UnreadableTensorType(path=str(self.path), tensor=name, type_name=info.dtype,
                                       readable=tuple(DTYPES))  # fmt: skip
        raw = self._buffer[info.offset : info.offset + info.nbytes]
        return raw.view(DTYPES[info.dtype]).reshape(info.shape)

    def float32(self, name: str) -> np.ndarray:
        """Tensor ``name``'s values as float32, exactly: F32 a read-only view of the map, F16 and BF16
        widened (a new array). Another dtype: UnreadableTensorType (float32 would round it)."""
        info = self.info(name)
        if info.dtype not in WIDENED:
            raise UnreadableTensorType(path=str(self.path), tensor=name, type_name=info.dtype,
                                       readable=WIDENED)  # fmt: skip
        stored = self.array(name)
        if info.dtype == "F32":
            return stored
        if info.dtype == "F16":
            return stored.astype(np.float32)
        return (stored.astype(np.uint32) << np.uint32(16)).view(np.float32)  # bfloat16: a float32's top half

    def matrix(self, name: str):
        """Matrix ``name`` (n_out, n_in), a PyTorch ``Linear.weight``, as the engine's W (n_in, n_out):
        ``x @ W`` runs on the file's float32, float16 or bfloat16 numbers, widened as they are read (a
        :class:`~attnlab.engine.fast.quant.QuantMatrix` over the map, nothing copied: half the bytes of a
        float32 copy for a 16-bit file). Rows that are not whole blocks of 32 come as the float32 values,
        transposed (a NumPy array)."""
        from attnlab.engine.fast.quant import QuantMatrix

        info = self.info(name)
        if len(info.shape) != 2:
            raise ValueError(f"{name} has shape {info.shape}; a matrix has two dimensions")
        if info.dtype not in WIDENED or info.shape[1] % 32 or not info.shape[0]:
            return self.float32(name).T  # (or UnreadableTensorType: a dtype float32 would round)
        raw = self._buffer[info.offset : info.offset + info.nbytes].reshape(info.shape[0], -1)
        return QuantMatrix(info.dtype, raw)

    def close(self) -> None:
        """Release the map (views from :meth:`array` must be gone by then)."""
        del self._buffer
        self._map.close()

    def __enter__(self) -> SafetensorsFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _header(raw: bytes, path: str) -> dict:
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise BadHeader(path=path, problem="not_json") from None
    if not isinstance(header, dict) or not isinstance(header.get("__metadata__", {}), dict):
        raise BadHeader(path=path, problem="not_object")
    return header


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _infos(header: dict, start: int, size: int, path: str) -> dict[str, TensorInfo]:
    """Each entry checked: a dtype, a shape and offsets of whole numbers, inside the data, the byte count
    its dtype and shape need (a dtype of unknown size is checked when its values are asked for)."""
    tensors = {}
    for name, entry in header.items():
        ok = isinstance(entry, dict) and isinstance(entry.get("dtype"), str)
        shape, offsets = (entry.get("shape"), entry.get("data_offsets")) if ok else (None, None)
        ok = ok and isinstance(shape, list) and all(map(_whole, shape))
        if not (ok and isinstance(offsets, list) and len(offsets) == 2 and all(map(_whole, offsets))):
            raise BadHeader(path=path, problem="bad_entry", tensor=name)
        begin, end = offsets
        if end < begin:
            raise TensorOutside(path=path, tensor=name, begin=begin, end=end, size=size - start)
        if start + end > size:
            raise Truncated(path=path, needed=start + end, size=size, tensor=name)
        dtype = entry["dtype"]
        if dtype in ITEM_BYTES:
            needed = math.prod(shape) * ITEM_BYTES[dtype]
            if needed != end - begin:
                raise TensorBytesMismatch(path=path, tensor=name, type_name=dtype, shape=shape, needed=needed,
                                          stored=end - begin)  # fmt: skip
        tensors[name] = TensorInfo(name, dtype, tuple(shape), start + begin, end - begin)
    return tensors
