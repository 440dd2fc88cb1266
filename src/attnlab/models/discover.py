"""Find the models a person already has on disk: the Hugging Face cache and a folder of their own.

It never downloads and never loads weights: it reads headers. A model is

- a folder with ``config.json``, its weights as ``*.safetensors`` (one file, or shards listed
  by ``model.safetensors.index.json``) and ``tokenizer.json``; or
- a ``.gguf`` file (or the first part of a split one: ``name-00001-of-00003.gguf``).

Where it looks (:func:`discover`): the hub cache (``HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``; its layout ``models--org--name/snapshots/<revision>/``, whose files
are symlinks into ``blobs/``; the revision ``refs/main`` names, or every snapshot when none
does) and, when given, a models folder (``--models-dir``), searched a few levels deep; a models
folder laid out as a hub cache is read as one.

For each model, a :class:`Found`: its name (``org/name`` in the cache, ``org/name/file.gguf`` for
a GGUF there; the path under the models folder otherwise), family, parameter count (from the
tensors' shapes), dtype or quantisation, path, and whether it carries a chat template. For each
file or folder that looks like a model but cannot be read, a :class:`Skipped` with a typed reason
(:data:`REASONS`; ``attnlab.lab.realmodel.sources`` words them). Nothing here raises on a bad file.

Headers only: a safetensors file's first 8 + n bytes; a GGUF's metadata and tensor table through a
memory map, string arrays (a 262,144-token vocabulary) skipped by their lengths, never decoded.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

# The families the one forward runs, by the model_type a config.json names.
FAMILIES: dict[str, str] = {
    "llama": "llama",  # Llama 2/3, SmolLM, SmolLM2
    "mistral": "mistral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "phi3": "phi3",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3_text": "gemma3",
    "gemma3": "gemma3",
    "gpt2": "gpt2",
    "bert": "bert",  # MiniLM too
    "roberta": "roberta",
    "distilbert": "distilbert",
}
# The same families by a GGUF's general.architecture (llama.cpp writes Mistral as "llama").
GGUF_FAMILIES: dict[str, str] = {
    "llama": "llama",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "phi3": "phi3",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3": "gemma3",
    "gpt2": "gpt2",
    "bert": "bert",
}
KNOWN = tuple(sorted(set(FAMILIES.values())))
GGUF_TOKENIZERS = ("gpt2", "llama")  # tokenizer.ggml.model values attnlab reads (models.tokens)
_SAFETENSORS_DTYPES = {
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8,
}  # fmt: skip
_DTYPE_NAMES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}
# llama.cpp's general.file_type (LlamaFileType) by number
_FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M",
    30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}  # fmt: skip
_SPLIT = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")
_DEPTH = 4  # how deep a models folder is searched


# -- why a file was skipped --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Reason:
    """Why a model on disk is not offered; ``kind`` names the reason for the lab's words."""

    kind: ClassVar[str] = "reason"


@dataclass(frozen=True, kw_only=True)
class MissingShard(Reason):
    """``index`` lists weights in ``shard``, which is not there."""

    kind: ClassVar[str] = "missing_shard"
    shard: str
    index: str


@dataclass(frozen=True, kw_only=True)
class MissingTensor(Reason):
    """``index`` puts ``tensor`` in ``shard``, whose header does not have it."""

    kind: ClassVar[str] = "missing_tensor"
    tensor: str
    shard: str


@dataclass(frozen=True, kw_only=True)
class UnknownFamily(Reason):
    """The files name the family ``family`` (``None``: none), not one of ``known``."""

    kind: ClassVar[str] = "unknown_family"
    family: str | None
    known: tuple[str, ...] = KNOWN


@dataclass(frozen=True, kw_only=True)
class Truncated(Reason):
    """``file`` has ``size`` bytes; its header needs ``needed``."""

    kind: ClassVar[str] = "truncated"
    file: str
    size: int
    needed: int


@dataclass(frozen=True, kw_only=True)
class DanglingLink(Reason):
    """``file`` is a symlink to ``target``, which does not exist (an unfinished download)."""

    kind: ClassVar[str] = "dangling_link"
    file: str
    target: str


@dataclass(frozen=True, kw_only=True)
class NoTokenizer(Reason):
    """A folder without ``tokenizer.json``, or a GGUF without ``tokenizer.ggml.model``."""

    kind: ClassVar[str] = "no_tokenizer"


@dataclass(frozen=True, kw_only=True)
class UnreadTokenizer(Reason):
    """A GGUF whose ``tokenizer.ggml.model`` is ``tokenizer``, not one of ``known``."""

    kind: ClassVar[str] = "unread_tokenizer"
    tokenizer: str
    known: tuple[str, ...] = GGUF_TOKENIZERS


@dataclass(frozen=True, kw_only=True)
class NoConfig(Reason):
    """``*.safetensors`` without a ``config.json`` beside them (an adapter, or half a model)."""

    kind: ClassVar[str] = "no_config"


@dataclass(frozen=True, kw_only=True)
class NoSafetensors(Reason):
    """A ``config.json`` whose weights are not safetensors: ``files`` are what is there (``()``: none)."""

    kind: ClassVar[str] = "no_safetensors"
    files: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class BadFile(Reason):
    """``file`` is not what its name says: ``problem`` is one of :data:`BAD_FILE_PROBLEMS`; ``detail`` the
    parser's words or the value at fault."""

    kind: ClassVar[str] = "bad_file"
    file: str
    problem: str
    detail: str = ""


# bad_json: not JSON / not an object; bad_header: a safetensors or GGUF header that cannot be read;
# bad_magic: a .gguf not starting with "GGUF"; bad_version: a GGUF version other than 2 or 3;
# bad_tensor: a tensor whose type, shape or byte count does not fit; unreadable: the system refused it.
BAD_FILE_PROBLEMS = ("bad_json", "bad_header", "bad_magic", "bad_version", "bad_tensor", "unreadable")
REASONS: tuple[type[Reason], ...] = (
    MissingShard, MissingTensor, UnknownFamily, Truncated, DanglingLink, NoTokenizer, UnreadTokenizer,
    NoConfig, NoSafetensors, BadFile,
)  # fmt: skip


class Unreadable(Exception):
    """A file that cannot be read, and why (``reason``): the header readers raise it, :func:`discover`
    turns it into a :class:`Skipped`."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason)
        self.reason = reason


def _bad(path: Path, problem: str, detail: str = "") -> Unreadable:
    return Unreadable(BadFile(file=path.name, problem=problem, detail=detail))


# -- what was found ----------------------------------------------------------------------------------

Source = Literal["hf-cache", "models-dir"]


@dataclass(frozen=True, kw_only=True)
class Found:
    """A model that can be offered.

    ``family``: one of :data:`KNOWN`; ``model_type``: as the files spell it (config ``model_type``
    or GGUF ``general.architecture``); ``parameters``: the sum of the tensors' element counts (a
    tied embedding counted once, as stored); ``dtype``: "float32", "bfloat16", "float16" or a GGUF
    file type ("Q4_K_M"), "mixed" when the tensors disagree (``tensor_types`` has the counts);
    ``path``: the folder or the ``.gguf`` file (a split GGUF: its first part); ``chat``: whether
    its files carry a chat template.
    """

    name: str
    family: str
    model_type: str
    parameters: int
    dtype: str
    format: Literal["safetensors", "gguf"]
    path: Path
    source: Source
    chat: bool
    files: tuple[Path, ...]  # every file the weights are in
    tensor_types: tuple[tuple[str, int], ...]  # (type, how many tensors), most first


@dataclass(frozen=True, kw_only=True)
class Skipped:
    """A file or folder that looks like a model and is not offered: ``name`` as :class:`Found`'s, ``why``."""

    name: str
    path: Path
    source: Source
    why: Reason


@dataclass(frozen=True, kw_only=True)
class Scan:
    """What :func:`discover` saw: ``found`` and ``skipped``, each sorted by name; ``places`` searched."""

    found: tuple[Found, ...]
    skipped: tuple[Skipped, ...]
    places: tuple[tuple[Source, Path], ...]


def hub_cache(environ: Mapping[str, str] | None = None) -> Path:
    """Where the Hugging Face hub keeps its downloads, as ``huggingface_hub`` decides it."""
    env = os.environ if environ is None else environ
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    home = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return home / "huggingface" / "hub"


def discover(
    models_dir: Path | str | None = None, *, cache: Path | str | None = None, hub: bool = True
) -> Scan:
    """Every model in the hub cache (``cache``, default :func:`hub_cache`; ``hub=False``: not searched)
    and under ``models_dir``; a place that does not exist holds nothing."""
    found: list[Found] = []
    skipped: list[Skipped] = []
    places: list[tuple[Source, Path]] = []
    if hub:
        root = Path(cache) if cache is not None else hub_cache()
        places.append(("hf-cache", root))
        _scan_cache(root, "hf-cache", found, skipped)
    if models_dir is not None:
        root = Path(models_dir).expanduser()
        places.append(("models-dir", root))
        if any(p.name.startswith("models--") for p in _children(root)):
            _scan_cache(root, "models-dir", found, skipped)
        else:
            _scan_tree(root, root, "models-dir", found, skipped, prefix="")
    return Scan(
        found=tuple(sorted(found, key=lambda f: (f.name, str(f.path)))),
        skipped=tuple(sorted(skipped, key=lambda s: (s.name, str(s.path)))),
        places=tuple(places),
    )


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:  # absent, not a folder, unreadable: nothing there
        return []


def _scan_cache(root: Path, source: Source, found: list[Found], skipped: list[Skipped]) -> None:
    for repo in _children(root):
        if not (repo.name.startswith("models--") and repo.is_dir()):
            continue  # datasets--, spaces--, .locks
        name = repo.name[len("models--") :].replace("--", "/")
        main = repo / "refs" / "main"
        snapshots = [p for p in _children(repo / "snapshots") if p.is_dir()]
        if main.is_file():
            wanted = main.read_text(encoding="utf-8", errors="replace").strip()
            snapshots = [p for p in snapshots if p.name == wanted] or snapshots
        for snapshot in snapshots:
            label = name if len(snapshots) == 1 else f"{name}@{snapshot.name[:8]}"
            _scan_tree(snapshot, snapshot, source, found, skipped, prefix=label)


def _scan_tree(
    root: Path, folder: Path, source: Source, found: list[Found], skipped: list[Skipped], *, prefix: str
) -> None:
    """Look at ``folder`` (a model folder? GGUF files?) and, a few levels down, its subfolders."""
    rel = folder.relative_to(root).as_posix()
    here = prefix if rel == "." else (f"{prefix}/{rel}" if prefix else rel)
    entries = _children(folder)
    names = {p.name for p in entries}
    if "config.json" in names or any(n.endswith(".safetensors") for n in names):
        _one(lambda: _folder_model(folder, here or folder.name, source), here or folder.name, folder, source,
             found, skipped)  # fmt: skip
    for path in entries:
        if path.name.endswith(".gguf") and not path.is_dir():
            split = _SPLIT.match(path.name)
            if split and int(split["no"]) != 1:
                continue  # a later part of a split file: read with its first
            label = f"{here}/{path.name}" if here else path.name
            _one(lambda p=path, n=label: _gguf_model(p, n, source), label, path, source, found, skipped)
    if len(Path(rel).parts) < _DEPTH:
        for path in entries:
            if path.is_dir() and not path.is_symlink() and not path.name.startswith("."):
                _scan_tree(root, path, source, found, skipped, prefix=prefix)


def _one(read, name: str, path: Path, source: Source, found: list[Found], skipped: list[Skipped]) -> None:
    try:
        model = read()
    except Unreadable as error:
        skipped.append(Skipped(name=name, path=path, source=source, why=error.reason))
        return
    except OSError as error:  # no permission, a file gone while we looked, an I/O error
        file = Path(error.filename).name if error.filename else path.name
        why = BadFile(file=file, problem="unreadable", detail=error.strerror or type(error).__name__)
        skipped.append(Skipped(name=name, path=path, source=source, why=why))
        return
    if model is not None:
        found.append(model)


def _exists(path: Path) -> Path:
    """``path``, or :class:`Unreadable` when it is a symlink to nothing."""
    if path.is_symlink() and not path.exists():
        raise Unreadable(DanglingLink(file=path.name, target=os.readlink(path)))
    return path


# -- a Hugging Face folder -----------------------------------------------------------------------------


def _folder_model(folder: Path, name: str, source: Source) -> Found | None:
    names = {p.name for p in _children(folder)}
    if "config.json" not in names:
        if any(n.endswith(".safetensors") for n in names) and "adapter_config.json" not in names:
            raise Unreadable(NoConfig())
        return None  # an adapter, or a folder that is no model
    config = _json(_exists(folder / "config.json"))
    weights = _weights(folder, names)
    if weights is None:
        pickled = tuple(sorted(n for n in names if n.endswith((".bin", ".pt", ".pth", ".ckpt"))))
        if "tokenizer.json" not in names and not pickled:
            return None  # a config.json among other things (sentence-transformers' 1_Pooling/): no model
        raise Unreadable(NoSafetensors(files=pickled))
    model_type = _model_type(config)
    family = FAMILIES.get(model_type or "")
    if family is None:
        raise Unreadable(UnknownFamily(family=model_type))
    if "tokenizer.json" not in names:
        raise Unreadable(NoTokenizer())
    _exists(folder / "tokenizer.json")
    shards, tensors = weights
    counts = Counter(dtype for dtype, _ in tensors.values())
    dtypes = {_DTYPE_NAMES.get(d, d) for d in counts}
    return Found(
        name=name,
        family=family,
        model_type=model_type or "",
        parameters=sum(n for _, n in tensors.values()),
        dtype=dtypes.pop() if len(dtypes) == 1 else "mixed",
        format="safetensors",
        path=folder,
        source=source,
        chat=_has_template(folder, names),
        files=tuple(folder / s for s in shards),
        tensor_types=tuple(counts.most_common()),
    )


def _model_type(config: Mapping[str, Any]) -> str | None:
    """``model_type``, else the family an ``architectures`` entry names (``LlamaForCausalLM`` -> llama)."""
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type:
        return model_type
    archs = config.get("architectures")
    for arch in archs if isinstance(archs, list) else ():
        head = re.match(r"^([A-Z][A-Za-z0-9]*?)(For[A-Z]|Model$|LMHead)", str(arch))
        if head and head[1].lower() in FAMILIES:
            return head[1].lower()
    return None


def _has_template(folder: Path, names: set[str]) -> bool:
    if "chat_template.jinja" in names:
        return True
    if "tokenizer_config.json" not in names:
        return False
    try:
        config = _json(_exists(folder / "tokenizer_config.json"))
    except Unreadable:
        return False
    return bool(config.get("chat_template"))


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _bad(path, "bad_json", str(error)) from None
    if not isinstance(value, dict):
        raise _bad(path, "bad_json", type(value).__name__)
    return value


def _weights(folder: Path, names: set[str]) -> tuple[list[str], dict[str, tuple[str, int]]] | None:
    """(shard file names, {tensor: (dtype, element count)}), or ``None`` when there are no safetensors."""
    index_name = "model.safetensors.index.json"
    if index_name in names:
        index = _json(_exists(folder / index_name))
        weight_map = index.get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise Unreadable(BadFile(file=index_name, problem="bad_json", detail="weight_map"))
        shards = sorted(set(map(str, weight_map.values())))
        tensors: dict[str, tuple[str, int]] = {}
        for shard in shards:
            path = folder / shard
            if not path.is_symlink() and not path.exists():
                raise Unreadable(MissingShard(shard=shard, index=index_name))
            held = safetensors_header(_exists(path))
            for tensor, where in weight_map.items():
                if where == shard and tensor not in held:
                    raise Unreadable(MissingTensor(tensor=tensor, shard=shard))
            tensors.update(held)
        return shards, tensors
    files = sorted(n for n in names if n.endswith(".safetensors"))
    if not files:
        return None
    tensors = {}
    for file in files:
        tensors.update(safetensors_header(_exists(folder / file)))
    return files, tensors


def safetensors_header(path: Path) -> dict[str, tuple[str, int]]:
    """{tensor: (dtype, element count)} from a safetensors file's header (8 + n bytes read).

    Raises :class:`Unreadable` (``Truncated`` when the file is shorter than its header says; ``BadFile``
    with "bad_header" or "bad_tensor") rather than anything a parser would.
    """
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise Unreadable(Truncated(file=path.name, size=size, needed=8))
        (n,) = struct.unpack("<Q", head)
        if n > 100_000_000:
            raise _bad(path, "bad_header", f"a header of {n} bytes")
        raw = f.read(n)
    if len(raw) < n:
        raise Unreadable(Truncated(file=path.name, size=size, needed=8 + n))
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _bad(path, "bad_header", str(error)) from None
    if not isinstance(header, dict):
        raise _bad(path, "bad_header", type(header).__name__)
    tensors: dict[str, tuple[str, int]] = {}
    end = 0
    for tensor, info in header.items():
        if tensor == "__metadata__":
            continue
        try:
            dtype, shape, (start, stop) = info["dtype"], [int(d) for d in info["shape"]], info["data_offsets"]
            count = 1
            for d in shape:
                count *= d
            width = _SAFETENSORS_DTYPES[dtype]
        except (KeyError, TypeError, ValueError):
            raise _bad(path, "bad_tensor", str(tensor)) from None
        if stop - start != count * width or min(shape, default=0) < 0:
            raise _bad(path, "bad_tensor", str(tensor))
        tensors[tensor] = (dtype, count)
        end = max(end, int(stop))
    if 8 + n + end > size:
        raise Unreadable(Truncated(file=path.name, size=size, needed=8 + n + end))
    return tensors


# -- a GGUF file -----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GGUFHeader:
    """A GGUF's header: ``metadata`` (string arrays as their lengths, number arrays as their lengths too),
    ``tensors`` {name: (ggml type name, element count)}, and ``data_end`` the byte the last tensor ends at."""

    metadata: dict[str, Any]
    tensors: dict[str, tuple[str, int]]
    data_end: int


_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def gguf_header(path: Path, *, arrays: tuple[str, ...] = ()) -> GGUFHeader:
    """Read a GGUF's metadata and tensor table through a memory map; arrays are skipped by their lengths
    (their value is their length), but those whose keys are in ``arrays``, which are read as lists.

    Raises :class:`Unreadable`: ``BadFile`` ("bad_magic", "bad_version", "bad_header", "bad_tensor") or
    ``Truncated``.
    """
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    size = path.stat().st_size
    if size < 24:
        with open(path, "rb") as f:
            magic = f.read(4)
        if magic != b"GGUF":
            raise _bad(path, "bad_magic", repr(magic))
        raise Unreadable(Truncated(file=path.name, size=size, needed=24))
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:4] != b"GGUF":
            raise _bad(path, "bad_magic", repr(bytes(data[:4])))
        at = 4
        try:
            (version,) = struct.unpack_from("<I", data, at)
            if version not in (2, 3):
                raise _bad(path, "bad_version", str(version))
            n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
            at = 24
            metadata: dict[str, Any] = {}
            for _ in range(n_kv):
                key, at = _string(data, at)
                (kind,) = struct.unpack_from("<I", data, at)
                metadata[key], at = _value(data, at + 4, kind, key in arrays)
            infos = []
            for _ in range(n_tensors):
                name, at = _string(data, at)
                (n_dims,) = struct.unpack_from("<I", data, at)
                if n_dims > 8:  # GGML_MAX_DIMS is 4
                    raise _bad(path, "bad_tensor", f"{name}: {n_dims} dimensions")
                dims = struct.unpack_from(f"<{n_dims}Q", data, at + 4)
                kind, offset = struct.unpack_from("<IQ", data, at + 4 + 8 * n_dims)
                at += 4 + 8 * n_dims + 12
                infos.append((name, dims, kind, offset))
        except _BadValue as error:
            raise _bad(path, "bad_header", str(error)) from None
        except UnicodeDecodeError:
            raise _bad(path, "bad_header", f"a name at byte {at} is not UTF-8") from None
        except (struct.error, ValueError, IndexError, OverflowError, MemoryError):
            raise Unreadable(Truncated(file=path.name, size=size, needed=at + 1)) from None
    alignment = metadata.get("general.alignment", 32)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise _bad(path, "bad_header", f"general.alignment {alignment!r}")
    start = -(-at // alignment) * alignment
    tensors: dict[str, tuple[str, int]] = {}
    end = start
    for name, dims, kind, offset in infos:
        try:
            qtype = GGMLQuantizationType(kind)
        except ValueError:
            raise _bad(path, "bad_tensor", f"{name}: ggml type {kind}") from None
        per_block, block_bytes = GGML_QUANT_SIZES[qtype]
        count = 1
        for d in dims:
            count *= int(d)
        if dims and dims[0] % per_block:
            detail = f"{name}: rows of {dims[0]} values in {qtype.name}"
            raise _bad(path, "bad_tensor", detail)
        tensors[name] = (qtype.name, count)
        end = max(end, start + offset + count // per_block * block_bytes)
    if end > size:
        raise Unreadable(Truncated(file=path.name, size=size, needed=end))
    return GGUFHeader(metadata=metadata, tensors=tensors, data_end=end)


class _BadValue(Exception):
    """A metadata value of a type GGUF does not have."""


def _string(data, at: int) -> tuple[str, int]:
    (n,) = struct.unpack_from("<Q", data, at)
    if at + 8 + n > len(data):
        raise ValueError("past the end")
    return bytes(data[at + 8 : at + 8 + n]).decode("utf-8"), at + 8 + n


def _value(data, at: int, kind: int, whole: bool = False) -> tuple[Any, int]:
    """A metadata value and the offset after it; an array is its length (``int``) unless ``whole``."""
    if kind in _SCALARS:
        fmt = "<" + _SCALARS[kind]
        return struct.unpack_from(fmt, data, at)[0], at + struct.calcsize(fmt)
    if kind == 8:
        return _string(data, at)
    if kind != 9:
        raise _BadValue(f"metadata value type {kind}")
    item, count = struct.unpack_from("<IQ", data, at)
    at += 12
    if item in _SCALARS:
        size = struct.calcsize("<" + _SCALARS[item])
        if whole:
            return list(struct.unpack_from(f"<{count}{_SCALARS[item]}", data, at)), at + count * size
        return count, at + count * size
    values: list[Any] = []
    length = struct.Struct("<Q").unpack_from
    if item == 8:  # strings: walked by their lengths (a 262,144-token vocabulary is one such array)
        for _ in range(count):
            (n,) = length(data, at)
            if whole:
                values.append(data[at + 8 : at + 8 + n].decode("utf-8"))
            at += 8 + n
    else:  # arrays of arrays
        for _ in range(count):
            value, at = _value(data, at, item, whole)
            values.append(value)
    if at > len(data):
        raise ValueError("past the end")
    return (values if whole else count), at


def _gguf_model(path: Path, name: str, source: Source) -> Found:
    header = gguf_header(_exists(path))
    meta = header.metadata
    parts, tensors = [path], dict(header.tensors)
    split = _SPLIT.match(path.name)
    count = int(meta.get("split.count", 1) or 1)
    if split and count > 1:
        for no in range(2, count + 1):
            part = path.with_name(f"{split['stem']}-{no:05d}-of-{count:05d}.gguf")
            if not part.is_symlink() and not part.exists():
                raise Unreadable(MissingShard(shard=part.name, index=path.name))
            tensors.update(gguf_header(_exists(part)).tensors)
            parts.append(part)
    arch = meta.get("general.architecture")
    family = GGUF_FAMILIES.get(arch) if isinstance(arch, str) else None
    if family is None:
        raise Unreadable(UnknownFamily(family=arch if isinstance(arch, str) else None))
    tokenizer = meta.get("tokenizer.ggml.model")
    if not isinstance(tokenizer, str):
        raise Unreadable(NoTokenizer())
    if tokenizer not in GGUF_TOKENIZERS:
        raise Unreadable(UnreadTokenizer(tokenizer=tokenizer))
    counts = Counter(kind for kind, _ in tensors.values())
    file_type = meta.get("general.file_type")
    dtype = _FILE_TYPES.get(file_type) if isinstance(file_type, int) else None
    return Found(
        name=name,
        family=family,
        model_type=arch,
        parameters=sum(n for _, n in tensors.values()),
        dtype=dtype or (next(iter(counts)) if len(counts) == 1 else "mixed"),
        format="gguf",
        path=path,
        source=source,
        chat=isinstance(meta.get("tokenizer.chat_template"), str),
        files=tuple(parts),
        tensor_types=tuple(counts.most_common()),
    )

