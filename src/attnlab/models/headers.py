"""What a model's own files say about it, read from their headers: no weights are loaded.

:func:`describe` takes a model on disk (a Hugging Face folder or a ``.gguf`` file, as
:func:`attnlab.models.families.checkpoint.open_path` takes it) and returns a :class:`Described`:

- ``arch``: the :class:`~attnlab.engine.model.Architecture` its family's description makes of
  its settings (``config.json``, or the GGUF's metadata and tensor names), exactly the one the
  model will run with;
- ``context``: the longest text it reads, in tokens: a decoder's trained context (``n_ctx``), an
  encoder's ``max_seq_length`` (``sentence_bert_config.json``) where that is shorter;
- ``chat``: whether its files carry a chat template;
- ``parameters`` and ``dtype``: as :mod:`attnlab.models.discover` counts them from the tensors'
  headers.

A folder's settings are read as ``open_folder`` reads them, a GGUF's as ``open_gguf`` does (the
same family functions, the same defaults), so the shapes here are the loaded model's (a test
checks them against the loaded model for every family). A path that is no model, or whose
files cannot be read, raises the typed error opening it would (``NotAModel``, ``UnknownFamily``,
``BadSetting``...) or a ``Refusal`` of kind ``sources.unreadable`` carrying discover's typed
reason; nothing is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from attnlab.engine.model import Architecture
from attnlab.models.errors import Refusal


@dataclass(frozen=True, kw_only=True)
class Described:
    """A model as its files' headers describe it (see the module docstring)."""

    family: str
    format: str  # "safetensors" or "gguf"
    arch: Architecture
    context: int
    chat: bool
    parameters: int
    dtype: str


def describe(path: Path | str) -> Described:
    """``path`` described from its headers (see the module docstring)."""
    from attnlab.models.families.errors import NotAModel

    where = Path(path).expanduser()
    if where.is_dir():
        return _folder(where)
    if where.is_file() and where.suffix.lower() == ".gguf":
        return _gguf(where)
    raise NotAModel(path=str(path), problem="not_a_model" if where.exists() else "missing")


def _found(read, path: Path):
    """discover's facts of ``path`` (``read``: its folder or GGUF reader), or a refusal with its reason."""
    from attnlab.models import discover

    try:
        return read()
    except discover.Unreadable as error:
        raise Refusal(("model",), "sources.unreadable", str(path), error.reason) from None


def _folder(folder: Path) -> Described:
    from attnlab.models import discover, tokens
    from attnlab.models.families import checkpoint
    from attnlab.models.families.errors import NotAModel, UnknownFamily
    from attnlab.models.families.settings import Settings

    where = str(folder)
    if not (folder / "config.json").is_file():
        raise NotAModel(path=where, problem="no_config")
    if not (folder / "tokenizer.json").is_file():
        raise NotAModel(path=where, problem="no_tokenizer")
    # as checkpoint.open_folder reads them: the same family, the same text model of a Gemma 3
    config = checkpoint._json(folder / "config.json", where)
    s = Settings(config, path=str(folder / "config.json"))
    model_type = s.get("model_type")
    family = checkpoint.CONFIG_FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        raise UnknownFamily(path=where, family=model_type if isinstance(model_type, str) else None,
                            key="config.json's model_type", known=checkpoint.KNOWN)  # fmt: skip
    if model_type == "gemma3":
        s = Settings(s.within("text_config").values, path=s.path)
    arch = checkpoint._architecture(s, family)
    found = _found(lambda: discover._folder_model(folder, folder.name, "models-dir"), folder)
    if found is None:
        raise NotAModel(path=where, problem="no_weights")
    context = arch.n_ctx
    if not arch.causal:  # an encoder cuts texts at its max_seq_length (models.model.Encoder)
        length = tokens.read_json(folder / "sentence_bert_config.json").get("max_seq_length", context)
        context = min(int(length), context) if isinstance(length, int) and length > 0 else context
    return Described(family=family, format="safetensors", arch=arch, context=context, chat=found.chat,
                     parameters=found.parameters, dtype=found.dtype)  # fmt: skip


def _gguf(path: Path) -> Described:
    from attnlab.models import discover
    from attnlab.models.families import checkpoint, gemma, gpt2, llama
    from attnlab.models.families.errors import UnknownFamily
    from attnlab.models.families.settings import Settings
    from attnlab.models.families.store import GGUFStore
    from attnlab.models.gguf_file import GGUFFile

    where = str(path)
    files = [GGUFFile(p) for p in checkpoint.gguf_parts(path)]
    try:
        md = files[0].metadata
        arch_name = md.get("general.architecture")
        family = checkpoint.GGUF_FAMILIES.get(arch_name) if isinstance(arch_name, str) else None
        if family is None:
            known = tuple(sorted(checkpoint.GGUF_FAMILIES))
            raise UnknownFamily(path=where, family=arch_name if isinstance(arch_name, str) else None,
                                key="general.architecture", known=known)  # fmt: skip
        # as checkpoint.open_gguf reads it (the store only names the tensors and reads rope_freqs)
        store = GGUFStore(files, "float32", path=where)
        s = Settings(md, path=where, prefix=f"{arch_name}.")
        if family in llama.GGUF_ARCHITECTURES:
            freqs = store.values("rope_freqs.weight") if store.has("rope_freqs.weight") else None
            arch = llama.from_gguf(s, arch_name, store.names(), rope_freqs=freqs)
        elif family in gemma.GGUF_ARCHITECTURES:
            arch = gemma.from_gguf(s, arch_name)
        else:
            arch = gpt2.from_gguf(s, store.names())
    finally:
        for f in files:
            f.close()
    found = _found(lambda: discover._gguf_model(path, path.name, "models-dir"), path)
    return Described(family=family, format="gguf", arch=arch, context=arch.n_ctx, chat=found.chat,
                     parameters=found.parameters, dtype=found.dtype)  # fmt: skip
