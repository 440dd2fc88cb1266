"""A checkpoint's tensors by name, handed out as the engine's weights on one path.

A family reads its tensors through a :class:`Store`, naming each and the shape its settings
give it; the store checks the shape (:class:`~attnlab.models.families.errors.TensorShape`,
:class:`~attnlab.models.families.errors.MissingTensor`) and lays the tensor out for the
engine (every matrix (n_in, n_out): ``y = x @ W``). Two kinds of file, three paths:

- :class:`SafetensorsStore`: a folder's ``*.safetensors`` (one file, or the shards its
  ``model.safetensors.index.json`` lists), through :class:`attnlab.models.safetensors_file.SafetensorsFile`;
- :class:`GGUFStore`: a ``.gguf`` file (or the parts of a split one), through
  :class:`attnlab.models.gguf_file.GGUFFile`.

The paths (:data:`PATHS`):

- ``"stored"``: products on the file's own numbers. A matrix is a
  :class:`~attnlab.engine.fast.quant.QuantMatrix` over the memory-mapped bytes (GGUF blocks
  of any type the products read, or safetensors' float32, float16 and bfloat16 rows, widened
  exactly as they are read); nothing is copied. A matrix whose rows are not whole blocks, and
  a Conv1D weight (stored (n_in, n_out): its stored rows are not output columns), come as
  float32 values. Activations are float32.
- ``"float32"``: every tensor's float32 values (float32 tensors are read-only views of the
  map; float16, bfloat16 and GGUF blocks widened exactly, into new arrays).
- ``"float64"``: those values in float64.

Norms, biases and tables are float arrays on every path. A tensor type no product reads is
refused by name (:class:`~attnlab.models.file_errors.UnreadableTensorType`), never
approximated.

:func:`check_memory` refuses a model whose weights would take more than :data:`RAM_SHARE`
of the machine's memory (``MemTotal`` in :data:`MEMINFO`), before anything is read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from attnlab.engine.fast.quant import QuantMatrix
from attnlab.models.families.errors import MissingShard, MissingTensor, NotAModel, TensorShape, TooLarge

PATHS = ("stored", "float32", "float64")
RAM_SHARE = 0.5  # the share of the machine's memory a model's weights may take
MEMINFO = Path("/proc/meminfo")


def machine_memory() -> int | None:
    """The machine's memory in bytes (``MemTotal`` of :data:`MEMINFO`; else the OS's page count), or None."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemTotal:"):
                value, unit = line.split()[1:3]
                return int(value) * (1024 if unit.lower() == "kb" else 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):  # pragma: no cover - a system without either
        return None


def check_memory(path: str, weights: str, needed: int) -> None:
    """Refuse weights of ``needed`` bytes on path ``weights`` that pass :data:`RAM_SHARE` of the memory."""
    total = machine_memory()
    if total is not None and needed > RAM_SHARE * total:
        raise TooLarge(path=path, weights=weights, needed=needed, total=total, share=RAM_SHARE)


class Store:
    """Tensors by name (see the module docstring); ``weights`` is the path, ``path`` the checkpoint."""

    def __init__(self, path: str, weights: str) -> None:
        self.path = path
        self.on(weights)

    def on(self, weights: str) -> None:
        """Hand tensors out for path ``weights`` from now on."""
        if weights not in PATHS:
            raise ValueError(f"weights {weights!r}: use one of {PATHS}")
        self.weights = weights
        self.dtype = np.dtype(np.float64 if weights == "float64" else np.float32)

    # -- what a kind of file gives ------------------------------------------------------------------

    def names(self) -> set[str]:
        raise NotImplementedError

    def shape(self, name: str) -> tuple[int, ...]:
        """Tensor ``name``'s shape as stored, NumPy's order."""
        raise NotImplementedError

    def nbytes(self, name: str) -> int:
        raise NotImplementedError

    def type_of(self, name: str) -> str:
        """How tensor ``name`` is stored: "F32", "BF16", "Q4_K" ..."""
        raise NotImplementedError

    def stored_types(self) -> set[str]:
        return {self.type_of(n) for n in self.names()}

    def values(self, name: str) -> np.ndarray:
        """Tensor ``name``'s float32 values, NumPy's order."""
        return self._values(name)

    def _values(self, name: str) -> np.ndarray:
        """The float32 values, NumPy's order (a read-only view of the map where stored as float32)."""
        raise NotImplementedError

    def _blocks(self, name: str):
        """A (n_out, n_in) tensor as the engine's W over its stored rows (QuantMatrix), or its float32
        values transposed where the rows are not whole blocks."""
        raise NotImplementedError

    # -- what a family asks for -----------------------------------------------------------------------

    def has(self, name: str) -> bool:
        return name in self.names()

    def _check(self, name: str, expected: tuple[int, ...]) -> None:
        if not self.has(name):
            raise MissingTensor(path=self.path, tensor=name)
        shape = self.shape(name)
        if shape != tuple(expected):
            raise TensorShape(path=self.path, tensor=name, shape=shape, expected=tuple(expected))

    def _float(self, values: np.ndarray) -> np.ndarray:
        return values if values.dtype == self.dtype else values.astype(self.dtype)

    def linear(self, name: str, expected: tuple[int, int], rows: slice | None = None):
        """A ``Linear.weight`` stored (n_out, n_in) as the engine's W (n_in, n_out); ``rows``: the stored
        rows (output columns) that are this weight's part of a fused tensor."""
        self._check(name, expected)
        if self.weights == "stored":
            w = self._blocks(name)
            if isinstance(w, QuantMatrix):
                return w if rows is None else QuantMatrix(w.fmt, w.parts[0][rows])
            return self._float(w if rows is None else w[:, rows])
        v = self._values(name)
        return self._float(v if rows is None else v[rows]).T

    def conv1d(self, name: str, expected: tuple[int, int], columns: slice | None = None) -> np.ndarray:
        """A ``Conv1D.weight`` stored (n_in, n_out), the engine's layout already: float values (the stored
        rows are inputs, so no product reads them as blocks); ``columns``: this weight's part of it."""
        self._check(name, expected)
        v = self._values(name)
        return self._float(v if columns is None else v[:, columns])

    def vector(self, name: str, expected: tuple[int], rows: slice | None = None, *,
               plus_one: bool = False) -> np.ndarray:  # fmt: skip
        """A norm's weight or a bias, float; ``plus_one``: stored as w for a norm that multiplies by
        1 + w (Gemma's Hugging Face files), so 1 + w, computed in the path's dtype."""
        self._check(name, expected)
        v = self._values(name)
        v = self._float(v if rows is None else v[rows])
        return v + self.dtype.type(1) if plus_one else v

    def embedding(self, name: str, expected: tuple[int, int], *, blocks: bool = True):
        """Token embeddings stored (d_vocab, d_model): float (d_vocab, d_model), or on the stored path
        (``blocks``) the blocks of W_Eᵀ (d_model, d_vocab), whose stored rows are the tokens' embeddings."""
        self._check(name, expected)
        if self.weights == "stored" and blocks:
            w = self._blocks(name)
            return w if isinstance(w, QuantMatrix) else self._float(w.T)
        return self._float(self._values(name))

    def table(self, name: str, rows: int, width: int) -> np.ndarray:
        """A table (positions, token types) of at least ``rows`` rows of ``width``, float (n, width)."""
        if not self.has(name):
            raise MissingTensor(path=self.path, tensor=name)
        shape = self.shape(name)
        if len(shape) != 2 or shape[1] != width or shape[0] < rows:
            raise TensorShape(path=self.path, tensor=name, shape=shape, expected=(rows, width))
        return self._float(self._values(name))

    def first(self, *names: str) -> str:
        """The first of ``names`` the checkpoint holds (the first, when none: the error names it)."""
        return next((n for n in names if self.has(n)), names[0])

    # -- what the weights take ------------------------------------------------------------------------

    def working_set(self) -> int:
        """Bytes the weights take on this path: as stored on the stored path, else their values'
        float32 or float64 bytes (every tensor counted)."""
        if self.weights == "stored":
            return sum(self.nbytes(n) for n in self.names())
        item = self.dtype.itemsize
        return sum(int(np.prod(self.shape(n), dtype=np.int64)) * item for n in self.names())


class SafetensorsStore(Store):
    """A folder's safetensors weights: ``model.safetensors.index.json``'s shards, else every
    ``*.safetensors`` file in it."""

    def __init__(self, folder: Path, weights: str, *, path: str) -> None:
        from attnlab.models.safetensors_file import SafetensorsFile

        super().__init__(path, weights)
        index = folder / "model.safetensors.index.json"
        if index.is_file():
            try:
                weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
                files = sorted(set(weight_map.values()))
            except (ValueError, KeyError, TypeError, AttributeError):
                raise NotAModel(path=path, problem="no_weights") from None
            for shard in files:
                if not (folder / shard).is_file():
                    raise MissingShard(path=path, shard=shard, index=index.name)
        else:
            files = sorted(p.name for p in folder.glob("*.safetensors"))
        if not files:
            raise NotAModel(path=path, problem="no_weights")
        self.files = [SafetensorsFile(folder / f) for f in files]
        self._where = {name: f for f in self.files for name in f.tensors}

    def names(self) -> set[str]:
        return set(self._where)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._where[name].tensors[name].shape

    def nbytes(self, name: str) -> int:
        return self._where[name].tensors[name].nbytes

    def type_of(self, name: str) -> str:
        return self._where[name].tensors[name].dtype

    def _values(self, name: str) -> np.ndarray:
        return self._where[name].float32(name)

    def _blocks(self, name: str):
        return self._where[name].matrix(name)


class GGUFStore(Store):
    """A GGUF file's tensors (names as llama.cpp writes them), or those of a split file's parts."""

    def __init__(self, files, weights: str, *, path: str) -> None:
        super().__init__(path, weights)
        self.files = list(files)
        self._where = {name: g for g in self.files for name in g.tensors}

    def names(self) -> set[str]:
        return set(self._where)

    def shape(self, name: str) -> tuple[int, ...]:
        return self._where[name].tensors[name].shape

    def nbytes(self, name: str) -> int:
        return self._where[name].tensors[name].nbytes

    def type_of(self, name: str) -> str:
        return self._where[name].tensors[name].type

    def _values(self, name: str) -> np.ndarray:
        return self._where[name].float32(name)

    def _blocks(self, name: str):
        return self._where[name].matrix(name)
