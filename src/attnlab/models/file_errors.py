"""A weight file attnlab refuses (a GGUF or a safetensors file), as a typed error carrying the facts.

Each error is a ``ValueError`` whose attributes are the facts a program acts on
(the path, the tensor, its type, the byte counts); its message is the lab's one
line about those facts (:mod:`attnlab.lab.realmodel.weightfiles`). Nothing is
loaded from a file that raised one.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.models.errors import worded


class BadWeightFile(ValueError):
    """A weight file that cannot be read: ``path`` (as given, a string)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class NotGGUF(BadWeightFile):
    """A file without GGUF's magic: ``magic`` holds its first bytes (up to 4)."""

    def __init__(self, *, path: str, magic: bytes) -> None:
        super().__init__(worded("weightfiles.not_gguf", path, magic), path=path)
        self.magic = bytes(magic)


class UnsupportedVersion(BadWeightFile):
    """A GGUF version that is not ``supported``."""

    def __init__(self, *, path: str, version: int, supported: Sequence[int]) -> None:
        super().__init__(worded("weightfiles.gguf_version", path, version, supported), path=path)
        self.version, self.supported = version, tuple(supported)


class Truncated(BadWeightFile):
    """A file that ends at ``size`` bytes, before byte ``needed`` that its header (``tensor`` None) or
    tensor ``tensor`` runs to."""

    def __init__(self, *, path: str, needed: int, size: int, tensor: str | None = None) -> None:
        super().__init__(worded("weightfiles.truncated", path, needed, size, tensor), path=path)
        self.needed, self.size, self.tensor = needed, size, tensor


class TensorBytesMismatch(BadWeightFile):
    """A tensor whose ``type_name`` and ``shape`` (NumPy order) need ``needed`` bytes while the file holds
    ``stored`` for it; ``needed`` is None when its rows are not whole blocks of ``block_weights``."""

    def __init__(self, *, path: str, tensor: str, type_name: str, shape: Sequence[int], needed: int | None,
                 stored: int, block_weights: int = 1) -> None:  # fmt: skip
        message = worded("weightfiles.tensor_bytes", path, tensor, type_name, shape, needed, stored,
                         block_weights)  # fmt: skip
        super().__init__(message, path=path)
        self.tensor, self.type_name, self.shape = tensor, type_name, tuple(shape)
        self.needed, self.stored, self.block_weights = needed, stored, block_weights


class UnknownTensorType(BadWeightFile):
    """A tensor whose type ``number`` no GGUF reader here knows: its size cannot even be told."""

    def __init__(self, *, path: str, tensor: str, number: int) -> None:
        super().__init__(worded("weightfiles.unknown_tensor_type", path, tensor, number), path=path)
        self.tensor, self.number = tensor, number


class UnreadableTensorType(BadWeightFile):
    """A tensor stored as ``type_name``, a type attnlab does not compute with (``readable``: those it does):
    refused by name, never approximated."""

    def __init__(self, *, path: str, tensor: str, type_name: str, readable: Sequence[str]) -> None:
        message = worded("weightfiles.unreadable_tensor_type", path, tensor, type_name, readable)
        super().__init__(message, path=path)
        self.tensor, self.type_name, self.readable = tensor, type_name, tuple(readable)


class UnknownValueType(BadWeightFile):
    """A GGUF metadata value of a type ``number`` GGUF does not define, at key ``key``."""

    def __init__(self, *, path: str, key: str, number: int) -> None:
        super().__init__(worded("weightfiles.unknown_value_type", path, key, number), path=path)
        self.key, self.number = key, number


class BadHeader(BadWeightFile):
    """A safetensors header that is not a JSON object of tensors. ``problem``: "not_json", "not_object"
    or "bad_entry" (then ``tensor`` names the entry)."""

    def __init__(self, *, path: str, problem: str, tensor: str | None = None) -> None:
        super().__init__(worded("weightfiles.bad_safetensors_header", path, problem, tensor), path=path)
        self.problem, self.tensor = problem, tensor


class TensorOutside(BadWeightFile):
    """A safetensors tensor whose byte range ``begin`` .. ``end`` is not inside the data's ``size`` bytes
    (or runs backwards)."""

    def __init__(self, *, path: str, tensor: str, begin: int, end: int, size: int) -> None:
        super().__init__(worded("weightfiles.tensor_outside", path, tensor, begin, end, size), path=path)
        self.tensor, self.begin, self.end, self.size = tensor, begin, end, size


class BadAlignment(BadWeightFile):
    """A GGUF whose ``general.alignment`` (``alignment``) is not a positive power of two."""

    def __init__(self, *, path: str, alignment: object) -> None:
        super().__init__(worded("weightfiles.bad_alignment", path, alignment), path=path)
        self.alignment = alignment
