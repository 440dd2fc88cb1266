"""What is wrong with a weight file (a GGUF or a safetensors file), in one line naming the file and the facts.

``models/`` raises typed errors that carry the facts (``attnlab.models.file_errors``:
the path, the tensor, its type, the byte counts); each one's message is built
here, from those facts alone, so the numbers in a sentence are the error's own.
A line starts with the file's path, then says what is wrong and, where a person
can act on it, what attnlab reads instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.numbers import plural


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(f"{n:,}" for n in shape) + ")"


def not_gguf(path: str, magic: bytes) -> str:
    """A file that does not start with the GGUF magic (``magic``: its first bytes, up to 4)."""
    return f"{path} is not a GGUF file: it starts with {bytes(magic)!r}, not b'GGUF'"


def gguf_version(path: str, version: int, supported: Sequence[int]) -> str:
    """A GGUF version this reader does not read."""
    return f"{path} is GGUF version {version}; attnlab reads versions {', '.join(map(str, supported))}"


def truncated(path: str, needed: int, size: int, tensor: str | None = None) -> str:
    """A file that ends before its header (``tensor`` None) or a tensor does: ``needed`` is the byte it
    runs to, ``size`` the file's size."""
    part = "its header" if tensor is None else f"tensor {tensor!r}"
    return (f"{path} is cut short: {part} runs to byte {needed:,}, but the file has "
            f"{plural(size, 'byte')}; download it again")  # fmt: skip


def tensor_bytes(path: str, tensor: str, type_name: str, shape: Sequence[int], needed: int | None,
                 stored: int, block_weights: int) -> str:  # fmt: skip
    """A tensor whose type and shape do not fit the bytes the file holds for it (``needed`` None: its rows
    are not whole blocks of ``block_weights`` weights)."""
    if needed is None:
        return (f"{path}: tensor {tensor!r} is {type_name} of shape {_shape(shape)}, but {type_name} "
                f"stores rows in whole blocks of {block_weights} weights and its rows have "
                f"{shape[-1]:,}")  # fmt: skip
    return (f"{path}: tensor {tensor!r} is {type_name} of shape {_shape(shape)}, which takes "
            f"{plural(needed, 'byte')}, but the file holds {plural(stored, 'byte')} for it")


def unknown_tensor_type(path: str, tensor: str, number: int) -> str:
    """A tensor type number that no GGUF reader here knows."""
    return f"{path}: tensor {tensor!r} has tensor type number {number}, which is not a GGUF type"


def unreadable_tensor_type(path: str, tensor: str, type_name: str, readable: Sequence[str]) -> str:
    """A tensor stored in a type that attnlab does not compute with (it would have to approximate)."""
    return (f"{path}: tensor {tensor!r} is stored as {type_name}, which attnlab cannot read exactly; "
            f"it reads {', '.join(readable)}")


def unknown_value_type(path: str, key: str, number: int) -> str:
    """A metadata value of a type number GGUF does not define."""
    return f"{path}: metadata key {key!r} has value type number {number}, which GGUF does not define"


# a safetensors header's problems, by the code ``models`` gives them
HEADER_PROBLEMS = {
    "not_json": "is not JSON text",
    "not_object": "is not a JSON object of tensors",
    "bad_entry": "describes tensor {tensor!r} without a dtype, a shape of whole numbers and two data offsets",
}


def bad_safetensors_header(path: str, problem: str, tensor: str | None = None) -> str:
    """A safetensors header that is not a JSON object of tensors (``problem``: a key of HEADER_PROBLEMS;
    ``tensor``: the entry at fault, for "bad_entry")."""
    return f"{path} is not a safetensors file: its header {HEADER_PROBLEMS[problem].format(tensor=tensor)}"


def tensor_outside(path: str, tensor: str, begin: int, end: int, size: int) -> str:
    """A safetensors tensor whose byte range is not inside the file's data."""
    return (f"{path}: tensor {tensor!r} claims bytes {begin:,} to {end:,} of the data, "
            f"which holds {plural(size, 'byte')}")


def bad_alignment(path: str, alignment: object) -> str:
    """A GGUF whose ``general.alignment`` is not a power of two."""
    return f"{path}: its general.alignment is {alignment!r:.40}, not a power of two"
