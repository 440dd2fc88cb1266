"""Read a GGUF file through a memory map: its metadata, and its tensors as the bytes it stores.

Nothing is dequantized or copied on opening: :meth:`GGUFFile.raw` is a read-only
view of a tensor's bytes in the map (a quantized matrix as its blocks,
``(n_out, bytes per row)``), :meth:`GGUFFile.matrix` the engine's
:class:`~attnlab.engine.fast.quant.QuantMatrix` over those bytes, whose products
run on the blocks, and :meth:`GGUFFile.float32` a tensor's float32 values
(a float32 tensor as stored; float16 and bfloat16 widened exactly; quants as
``gguf.quants`` dequantizes them). :meth:`GGUFFile.dequantized` gives the values
through ``gguf.quants`` itself (the reference).

Every tensor type GGUF defines is parsed (its block size and bytes from
``gguf.constants``), so the metadata of any GGUF file can be read; the products
compute with F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K
(:data:`READABLE`), and a tensor of another type is refused by name when its
weights are asked for (:class:`~attnlab.models.file_errors.UnreadableTensorType`),
never approximated. A broken file is refused on opening with a typed error
carrying the facts (:mod:`attnlab.models.file_errors`): a wrong magic, an
unsupported version, a file cut short, a tensor whose type and shape need more
bytes than the file holds for it, a tensor type number GGUF does not define.

The header is parsed here, not by ``gguf.GGUFReader``, which builds a NumPy
view per field part: 40-50 s on a 262,144-token vocabulary (docs/performance.md).
An array of strings is read in one pass: its lengths, then one UTF-8 decoding of
all its bytes, cut at the strings' boundaries. The values are the same as
``GGUFReader``'s ``field.contents()`` (tested).

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

from attnlab.engine.fast.formats import FLOATS, FORMATS
from attnlab.models.file_errors import (
    BadAlignment,
    NotGGUF,
    TensorBytesMismatch,
    Truncated,
    UnknownTensorType,
    UnknownValueType,
    UnreadableTensorType,
    UnsupportedVersion,
)

VERSIONS = (2, 3)
READABLE = tuple(FORMATS)  # the tensor types the products compute with, exactly
_HEADER = 24  # magic, version, tensor count, metadata count
# GGUF value types -> struct formats (8: string, 9: array), and NumPy's dtypes for arrays of them
_FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRUCTS = {kind: struct.Struct("<" + f) for kind, f in _FORMATS.items()}
_SCALARS = {kind: np.dtype("<" + f) for kind, f in _FORMATS.items()}
_STRING, _ARRAY = 8, 9
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")


@dataclass(frozen=True)
class TensorInfo:
    name: str
    type: str  # "F32", "Q4_K", ... (gguf's GGMLQuantizationType name)
    shape: tuple[int, ...]  # NumPy order: (n_out, n_in) for a matrix
    offset: int  # byte offset in the file
    nbytes: int


class GGUFFile:
    """An open GGUF file: ``metadata`` (key -> value), ``tensors`` (name -> :class:`TensorInfo`)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        with open(self.path, "rb") as f:
            head = f.read(_HEADER)
            if len(head) < _HEADER:  # too short to map or parse: a wrong magic, or a header cut short
                if head[:4] != b"GGUF"[: len(head)]:
                    raise NotGGUF(path=str(path), magic=head[:4])
                raise Truncated(path=str(path), needed=_HEADER, size=len(head))
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            self.metadata, self.tensors = _parse(self._map, str(path))
        except BaseException:
            self._map.close()
            raise
        self._buffer = np.frombuffer(self._map, dtype=np.uint8)  # read-only: the map is

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

    def float32(self, name: str) -> np.ndarray:
        """Tensor ``name``'s float32 values in NumPy's order: gguf's values, bit for bit.

        F32: a read-only view of the map; F16 and BF16: widened exactly (a new array); a quantized type
        the products read: its blocks' values (a new array). Another type: UnreadableTensorType.
        """
        info = self._readable(name)
        if info.type == "F32":
            return self.array(name)
        from attnlab.engine.fast.quant import reference

        return reference.values(info.type, self.raw(name)).reshape(info.shape)

    def matrix(self, name: str):
        """Matrix ``name`` (n_out, n_in) stored as the engine's W (n_in, n_out): ``x @ W`` runs on the
        file's bytes (a :class:`~attnlab.engine.fast.quant.QuantMatrix`, nothing copied). A float matrix
        whose rows are not whole blocks of 32 comes as its float32 values, transposed (a NumPy array).
        """
        from attnlab.engine.fast.quant import QuantMatrix

        info = self._readable(name)
        if len(info.shape) != 2:
            raise ValueError(f"{name} has shape {info.shape}; a matrix has two dimensions")
        if info.type in FLOATS and info.shape[1] % 32:
            return self.float32(name).T
        return QuantMatrix(info.type, self.raw(name))

    def unreadable(self) -> dict[str, str]:
        """The tensors stored in a type the products do not compute with: name -> type, in file order."""
        return {name: t.type for name, t in self.tensors.items() if t.type not in READABLE}

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

    def _readable(self, name: str) -> TensorInfo:
        info = self.info(name)
        if info.type not in READABLE:
            raise UnreadableTensorType(path=str(self.path), tensor=name, type_name=info.type,
                                       readable=READABLE)  # fmt: skip
        return info

    def close(self) -> None:
        """Release the map (views from :meth:`raw` must be gone by then)."""
        del self._buffer
        self._map.close()

    def __enter__(self) -> GGUFFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Short(Exception):
    """The header runs past the end of the file, to byte ``needed``."""

    def __init__(self, needed: int) -> None:
        self.needed = needed


class _Cursor:
    __slots__ = ("data", "at", "size")

    def __init__(self, data) -> None:
        self.data, self.at, self.size = data, 0, len(data)

    def need(self, n: int) -> None:
        if self.at + n > self.size:
            raise _Short(self.at + n)

    def take(self, s: struct.Struct):
        self.need(s.size)
        value = s.unpack_from(self.data, self.at)[0]
        self.at += s.size
        return value

    def string(self) -> str:
        n = self.take(_U64)
        self.need(n)
        text = self.data[self.at : self.at + n].decode("utf-8", errors="replace")  # mmap slices are bytes
        self.at += n
        return text

    def value(self, kind: int, key: str, path: str) -> Any:
        if kind in _STRUCTS:
            return self.take(_STRUCTS[kind])
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            raise UnknownValueType(path=path, key=key, number=kind)
        item, count = self.take(_U32), self.take(_U64)
        if item == _STRING:
            return self.strings(count)
        if item in _SCALARS:  # numbers: one read for the whole array
            dtype = _SCALARS[item]
            self.need(count * dtype.itemsize)
            values = np.frombuffer(self.data, dtype, count, self.at).tolist()
            self.at += count * dtype.itemsize
            return values
        return [self.value(item, key, path) for _ in range(count)]

    def strings(self, count: int) -> list[str]:
        """``count`` strings (each a uint64 length, then UTF-8 bytes): their lengths in one pass, then one
        decoding of their bytes together, cut at the boundaries (see :func:`_decode_all`)."""
        self.need(8 * count)  # a string takes 8 bytes at least: a garbage count stops here
        data, at, size = self.data, self.at, self.size
        unpack = _U64.unpack_from
        starts, lengths = [0] * count, [0] * count
        for i in range(count):
            if at + 8 > size:
                raise _Short(at + 8)
            (n,) = unpack(data, at)
            starts[i], lengths[i] = at + 8, n
            at += 8 + n
        if at > size:
            raise _Short(at)
        first, self.at = self.at, at
        return _decode_all(data[first:at], np.array(starts, np.int64) - first, np.array(lengths, np.int64))


def _decode_all(region: bytes, starts: np.ndarray, lengths: np.ndarray) -> list[str]:
    """The strings at ``starts`` (``lengths`` bytes each) in ``region``, decoded as UTF-8.

    A valid UTF-8 text cut where no character continues is valid pieces: the region's bytes
    are decoded at once, and string i is the text between the character counts at its first
    and past its last byte (a character is one byte that is not a continuation byte
    10xxxxxx). When every string is shorter than 128 bytes, the 8-byte lengths between them
    are ASCII and the region decodes as it is; else the strings' bytes are gathered first.
    A string that is not valid UTF-8 on its own falls back to one decoding per string, with
    U+FFFD for bad bytes (as ``bytes.decode(errors="replace")``).
    """
    if not len(starts):
        return []
    raw = np.frombuffer(region, np.uint8)
    if int(lengths.max()) < 128:  # each string follows ASCII bytes: no character can straddle a boundary
        content, begins = raw, starts
    else:
        ends = np.cumsum(lengths)
        begins = ends - lengths
        content = raw[np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(starts - begins, lengths)]
    try:
        text = content.tobytes().decode("utf-8")
        lead = (content & 0xC0) != 0x80
        whole = bool(np.all(lead[begins[lengths > 0]]))  # no string starts inside a character
    except UnicodeDecodeError:
        whole = False
    if not whole:
        pieces = zip(starts.tolist(), lengths.tolist())
        return [region[a : a + n].decode("utf-8", errors="replace") for a, n in pieces]
    chars = np.concatenate([[0], np.cumsum(lead)])  # chars[b]: characters in the first b bytes
    return [text[a:b] for a, b in zip(chars[begins].tolist(), chars[begins + lengths].tolist())]


def _sizes(number: int) -> tuple[str, int, int] | None:
    """GGUF tensor type ``number`` -> (name, weights a block, bytes a block), or None (not a GGUF type)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        kind = GGMLQuantizationType(number)
    except ValueError:
        return None
    if kind not in GGML_QUANT_SIZES:
        return None
    return (kind.name, *GGML_QUANT_SIZES[kind])


def _parse(data, path: str) -> tuple[dict[str, Any], dict[str, TensorInfo]]:
    if data[:4] != b"GGUF":
        raise NotGGUF(path=path, magic=data[:4])
    c = _Cursor(data)
    c.at = 4
    try:
        version = c.take(_U32)
        if version not in VERSIONS:
            raise UnsupportedVersion(path=path, version=version, supported=VERSIONS)
        n_tensors, n_kv = c.take(_U64), c.take(_U64)
        metadata: dict[str, Any] = {}
        for _ in range(n_kv):
            key = c.string()
            metadata[key] = c.value(c.take(_U32), key, path)
        infos = []
        for _ in range(n_tensors):
            name = c.string()
            n_dims = c.take(_U32)
            c.need(8 * n_dims)
            dims = [c.take(_U64) for _ in range(n_dims)]
            infos.append((name, dims, c.take(_U32), c.take(_U64)))
    except _Short as short:
        raise Truncated(path=path, needed=short.needed, size=len(data)) from None
    alignment = metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise BadAlignment(path=path, alignment=alignment)
    start = -(-c.at // alignment) * alignment
    tensors = {}
    for name, dims, number, offset in infos:
        sizes = _sizes(number)
        if sizes is None:
            raise UnknownTensorType(path=path, tensor=name, number=number)
        type_name, per_block, block_bytes = sizes
        shape = tuple(int(n) for n in reversed(dims))
        if dims and dims[0] % per_block:
            raise TensorBytesMismatch(path=path, tensor=name, type_name=type_name, shape=shape, needed=None,
                                      stored=0, block_weights=per_block)  # fmt: skip
        count = int(np.prod(dims, dtype=object)) if dims else 1
        tensors[name] = TensorInfo(name, type_name, shape, start + offset, count // per_block * block_bytes)
    _check_extents(tensors, len(data), path)
    return metadata, tensors


def _check_extents(tensors: dict[str, TensorInfo], size: int, path: str) -> None:
    """Each tensor's bytes lie in the file, before the next tensor's: else Truncated (the last one, or one
    past the end) or TensorBytesMismatch (one running into the next)."""
    ordered = sorted(tensors.values(), key=lambda t: t.offset)
    for i, t in enumerate(ordered):
        end = t.offset + t.nbytes
        following = next((u.offset for u in ordered[i + 1 :] if u.offset > t.offset), None)
        if following is not None and end > following:
            raise TensorBytesMismatch(path=path, tensor=t.name, type_name=t.type, shape=t.shape,
                                      needed=t.nbytes, stored=following - t.offset)  # fmt: skip
        if end > size:
            raise Truncated(path=path, needed=end, size=size, tensor=t.name)
