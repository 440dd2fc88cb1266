"""Why a model on disk cannot be opened, in one line naming the path and the facts.

``attnlab.models.families`` raises typed errors carrying the facts (the path, the family,
the setting and its value, the tensor and its shapes, the byte counts:
``attnlab.models.families.errors``); each one's message is built here from those facts
alone, so the numbers in a sentence are the error's own. A line starts with the path,
says what is wrong and, where a person can act on it, what attnlab reads instead.
Numbers go through :mod:`attnlab.lab.numbers`.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.numbers import percent, plural

# What a path that is not a model lacks (NotAModel.problem).
_NOT_A_MODEL = {
    "missing": "is not there",
    "not_a_model": "is neither a folder nor a .gguf file",
    "no_config": "has no config.json to say what model it holds",
    "no_tokenizer": "has no tokenizer.json",
    "no_weights": "has no *.safetensors weights (attnlab reads safetensors and GGUF weights only)",
}


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(f"{n:,}" for n in shape) + ")"


def _size(n: int) -> str:
    """A byte count in the largest binary unit it fills: ``3.2 GiB``, ``1.4 MiB``, ``100.0 KiB``."""
    for unit, power in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 2**power:
            return f"{n / 2**power:,.1f} {unit}"
    return plural(n, "byte")


def not_a_model(path: str, problem: str) -> str:
    """A path attnlab cannot open as a model: ``problem`` is a key of :data:`_NOT_A_MODEL`."""
    return f"{path} {_NOT_A_MODEL[problem]}; give a folder with config.json, *.safetensors and " \
           "tokenizer.json, or a .gguf file"  # fmt: skip


def unknown_model(name: str, names: Sequence[str]) -> str:
    """A model that is neither a shipped model's name nor a path on disk (said after the field)."""
    return (f"is {name!r}, which is neither a model name ({', '.join(names)}) nor a folder or .gguf "
            "file on disk")  # fmt: skip


def unknown_family(path: str, family: str | None, key: str, known: Sequence[str]) -> str:
    """A checkpoint of a family the one forward does not run (``key``: where its files name it)."""
    named = f"is a {family!r} model ({key})" if family else f"names no family ({key} is missing)"
    return f"{path} {named}; attnlab runs {', '.join(known)}"


def missing_setting(path: str, key: str) -> str:
    """A setting the family cannot do without (a shape) that the file leaves out."""
    return f"{path} does not give {key}, which the model's shapes need"


def bad_setting(path: str, key: str, value: object, need: str) -> str:
    """A setting whose value cannot describe a model: ``need`` says what it must be."""
    return f"{path}: {key} is {value!r}; it must be {need}"


def unsupported_setting(path: str, key: str, value: object, supported: Sequence[str]) -> str:
    """A setting attnlab does not run exactly (a RoPE type, a partial rotary factor): refused by name."""
    return f"{path}: {key} is {value!r}, which attnlab does not run exactly; it runs {', '.join(supported)}"


def impossible_shapes(path: str, detail: str) -> str:
    """Settings that cannot fit together (``detail``: which, with the numbers)."""
    return f"{path} describes impossible shapes: {detail}"


def heads_do_not_divide(width_key: str, width: int, heads_key: str, heads: int) -> str:
    """``detail`` of :func:`impossible_shapes`: a width that does not split into the heads."""
    return f"{width_key} {width:,} does not split into {heads_key} {heads:,} equal heads"


def groups_do_not_divide(heads_key: str, heads: int, kv_key: str, kv_heads: int) -> str:
    """``detail`` of :func:`impossible_shapes`: query heads that do not share the KV heads evenly."""
    return f"{heads_key} {heads:,} query heads do not share {kv_key} {kv_heads:,} KV heads evenly"


def odd_rotary_head(key: str, d_head: int) -> str:
    """``detail`` of :func:`impossible_shapes`: a rotary head of odd size."""
    return f"{key} {d_head:,} is odd, and rotary positions turn pairs of coordinates"


def missing_tensor(path: str, tensor: str) -> str:
    """A tensor the family needs that the checkpoint does not hold."""
    return f"{path} has no tensor {tensor!r}, which the model needs; the file may be of another model"


def tensor_shape(path: str, tensor: str, shape: Sequence[int], expected: Sequence[int]) -> str:
    """A tensor whose stored shape is not the one the settings give."""
    return (f"{path}: tensor {tensor!r} has shape {_shape(shape)}, but the settings make it "
            f"{_shape(expected)}")  # fmt: skip


def missing_shard(path: str, shard: str, index: str) -> str:
    """A shard the index lists that is not on disk."""
    return f"{path}: {index} lists weights in {shard}, which is not there; the download did not finish"


def too_large(path: str, weights: str, needed: int, total: int, share: float) -> str:
    """A model whose weights on ``weights`` would take more than ``share`` of the machine's memory."""
    return (f"{path} needs {_size(needed)} ({plural(needed, 'byte')}) for its weights on the {weights} "
            f"path, more than {percent(share)} of this machine's {_size(total)}; choose a smaller model "
            "or a smaller weight format")  # fmt: skip


def unread_tokenizer(path: str, kind: object, known: Sequence[str]) -> str:
    """A GGUF whose tokenizer is of a kind attnlab does not build."""
    return f"{path} holds a {kind!r} tokenizer, which attnlab does not read; it reads {', '.join(known)}"


def no_chat(title: str) -> str:
    """A conversation asked of a model whose files carry no chat template."""
    return f"cannot be a chat: {title} has no chat template; give the text to continue instead"
