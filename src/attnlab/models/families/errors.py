"""A model on disk that attnlab refuses to open, as a typed error carrying the facts.

Each error is a ``ValueError`` (as :mod:`attnlab.models.file_errors`' are) whose attributes
are the facts a program acts on: the path, the family, the setting and its value, the
tensor and its shapes, the byte counts. Its message is the lab's one line about those
facts (:mod:`attnlab.lab.realmodel.opening`). Nothing is loaded from a checkpoint that
raised one.
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.models.errors import worded


class BadModel(ValueError):
    """A checkpoint that cannot be opened as a model: ``path`` (as given, a string)."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class NotAModel(BadModel):
    """A path that is no model: ``problem`` "missing", "not_a_model", "no_config", "no_tokenizer" or
    "no_weights"."""

    def __init__(self, *, path: str, problem: str) -> None:
        super().__init__(worded("opening.not_a_model", path, problem), path=path)
        self.problem = problem


class UnknownFamily(BadModel):
    """A checkpoint whose family (``family``, as ``key`` names it; None: not named) is not in ``known``."""

    def __init__(self, *, path: str, family: str | None, key: str, known: Sequence[str]) -> None:
        super().__init__(worded("opening.unknown_family", path, family, key, known), path=path)
        self.family, self.key, self.known = family, key, tuple(known)


class MissingSetting(BadModel):
    """A setting the model's shapes need (``key``) that the file leaves out."""

    def __init__(self, *, path: str, key: str) -> None:
        super().__init__(worded("opening.missing_setting", path, key), path=path)
        self.key = key


class BadSetting(BadModel):
    """A setting ``key`` whose ``value`` cannot describe a model; ``need`` says what it must be."""

    def __init__(self, *, path: str, key: str, value: object, need: str) -> None:
        super().__init__(worded("opening.bad_setting", path, key, value, need), path=path)
        self.key, self.value, self.need = key, value, need


class UnsupportedSetting(BadModel):
    """A setting ``key`` = ``value`` that attnlab does not compute exactly (``supported``: what it does)."""

    def __init__(self, *, path: str, key: str, value: object, supported: Sequence[str]) -> None:
        super().__init__(worded("opening.unsupported_setting", path, key, value, supported), path=path)
        self.key, self.value, self.supported = key, value, tuple(supported)


class ImpossibleShapes(BadModel):
    """Settings whose shapes cannot fit together: ``detail`` says which, with the numbers."""

    def __init__(self, *, path: str, detail: str) -> None:
        super().__init__(worded("opening.impossible_shapes", path, detail), path=path)
        self.detail = detail


class MissingTensor(BadModel):
    """A tensor the family reads (``tensor``) that the checkpoint does not hold."""

    def __init__(self, *, path: str, tensor: str) -> None:
        super().__init__(worded("opening.missing_tensor", path, tensor), path=path)
        self.tensor = tensor


class TensorShape(BadModel):
    """A tensor stored with ``shape`` (NumPy order) where the settings give ``expected``."""

    def __init__(self, *, path: str, tensor: str, shape: Sequence[int], expected: Sequence[int]) -> None:
        super().__init__(worded("opening.tensor_shape", path, tensor, shape, expected), path=path)
        self.tensor, self.shape, self.expected = tensor, tuple(shape), tuple(expected)


class MissingShard(BadModel):
    """A shard (``shard``) that ``index`` lists and the folder lacks."""

    def __init__(self, *, path: str, shard: str, index: str) -> None:
        super().__init__(worded("opening.missing_shard", path, shard, index), path=path)
        self.shard, self.index = shard, index


class TooLarge(BadModel):
    """Weights that would take ``needed`` bytes on the ``weights`` path: more than ``share`` of the
    machine's ``total`` bytes of memory."""

    def __init__(self, *, path: str, weights: str, needed: int, total: int, share: float) -> None:
        super().__init__(worded("opening.too_large", path, weights, needed, total, share), path=path)
        self.weights, self.needed, self.total, self.share = weights, needed, total, share


class UnreadTokenizer(BadModel):
    """A GGUF whose tokenizer (``kind``, ``tokenizer.ggml.model``) is not one of ``known``."""

    def __init__(self, *, path: str, kind: object, known: Sequence[str]) -> None:
        super().__init__(worded("opening.unread_tokenizer", path, kind, known), path=path)
        self.kind, self.known = kind, tuple(known)
