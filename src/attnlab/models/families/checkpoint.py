"""Open a model on disk, a Hugging Face folder or a GGUF file, as a Decoder or an Encoder.

:func:`open_path` takes

- a folder with ``config.json``, its weights as ``*.safetensors`` (one file, or the shards
  ``model.safetensors.index.json`` lists) and ``tokenizer.json``; its family is
  ``config.json``'s ``model_type`` (:data:`CONFIG_FAMILIES`);
- a ``.gguf`` file (or the first part of a split one, ``name-00001-of-00003.gguf``); its family
  is ``general.architecture`` (:data:`GGUF_FAMILIES`), its tokenizer the file's own vocabulary
  (:func:`attnlab.models.tokens.from_gguf`).

It never downloads. The family's description (:mod:`.llama`, :mod:`.gemma`, :mod:`.gpt2`,
:mod:`.bert`) turns the settings into an Architecture, filling what the file leaves out with the
family's documented defaults, and reads the tensors through a store
(:mod:`attnlab.models.families.store`) on the path ``weights`` names:

- ``"stored"``: products on the file's own numbers (GGUF blocks of any type the products read;
  safetensors' float32, float16 or bfloat16 rows), nothing copied;
- ``"float32"``, ``"float64"``: the weights' values widened exactly to float32 (then float64),
  the blocks' matrices laid out by rows, q|k|v and gate|up side by side (:func:`by_rows`: a
  copy of the matrices, read-only; norms, biases and embeddings stay views of a float32 file);
- ``"auto"``: "stored" for a GGUF and for a 16-bit safetensors checkpoint, "float32" for a
  float32 one, wherever the compiled products run here; else "float32".

Before any tensor is read, the weights' bytes on that path are checked against
:data:`attnlab.models.families.store.RAM_SHARE` of the machine's memory. Stop tokens are the
tokenizer's end of sequence, the ids ``config.json`` and ``generation_config.json`` (or the
GGUF's ``eos``/``eot``/``eom`` ids) name, and the end-of-turn tokens of :data:`END_OF_TURN`
the vocabulary holds as special tokens. The chat template comes with the tokenizer
(``tokenizer_config.json``, ``chat_template.jinja`` or the GGUF's metadata); a model without
one has no chat (:class:`attnlab.models.chat.NoChat`).

Every refusal is a typed error naming the path (:mod:`attnlab.models.families.errors`,
:mod:`attnlab.models.file_errors`); nothing is loaded from a checkpoint that raised one.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.engine.fast.ops import joined, side_by_side
from attnlab.engine.layers import SwiGLUParams
from attnlab.engine.model import Architecture, Weights, check_weights
from attnlab.models.errors import Refusal
from attnlab.models.families import bert, gemma, gpt2, llama
from attnlab.models.families.errors import (
    BadSetting,
    ImpossibleShapes,
    MissingShard,
    NotAModel,
    UnknownFamily,
    UnreadTokenizer,
)
from attnlab.models.families.settings import Settings
from attnlab.models.families.store import PATHS, GGUFStore, SafetensorsStore, Store, check_memory
from attnlab.models.model import Decoder, Encoder, Model

# config.json's model_type -> the family that reads it
CONFIG_FAMILIES = {
    **{f: f for f in llama.FAMILIES + gemma.FAMILIES + gpt2.FAMILIES + bert.FAMILIES},
    "gemma3_text": "gemma3",
}
# a GGUF's general.architecture -> the family (llama.cpp writes Mistral and SmolLM as "llama")
GGUF_FAMILIES = {f: f for f in llama.GGUF_ARCHITECTURES + gemma.GGUF_ARCHITECTURES + gpt2.GGUF_ARCHITECTURES}
KNOWN = tuple(sorted(set(CONFIG_FAMILIES.values())))
# end-of-turn tokens that stop generation where the vocabulary holds them as special tokens
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>",
               "<|end_of_text|>")  # fmt: skip
_SPLIT = re.compile(r"^(?P<stem>.*)-(?P<part>\d{5})-of-(?P<parts>\d{5})\.gguf$")


def open_path(path: Path | str, *, weights: str = "auto", name: str | None = None) -> Model:
    """The model at ``path`` (a folder or a .gguf file) with its products on ``weights`` (see the module
    docstring); ``name``: how it is called (default: its folder's or file's name)."""
    if weights not in ("auto", *PATHS):
        raise Refusal(("weights",), "unknown_weights", weights, PATHS)
    where = Path(path).expanduser()
    if where.is_dir():
        return open_folder(where, weights=weights, name=name)
    if where.is_file() and where.suffix.lower() == ".gguf":
        return open_gguf(where, weights=weights, name=name)
    raise NotAModel(path=str(path), problem="not_a_model" if where.exists() else "missing")


def model_name(path: Path) -> str:
    """``org/name`` for a Hugging Face cache snapshot (``models--org--name/snapshots/<rev>``), else the
    folder's or file's own name."""
    parts = path.resolve().parts if path.exists() else path.parts
    for i, part in enumerate(parts):
        if part.startswith("models--") and i + 2 < len(parts) and parts[i + 1] == "snapshots":
            repo = part[len("models--"):].replace("--", "/")
            rest = parts[i + 3 :]
            return "/".join((repo, *rest)) if rest else repo
    return path.name


# -- a Hugging Face folder --------------------------------------------------------------------------


def open_folder(folder: Path, *, weights: str = "auto", name: str | None = None) -> Model:
    """A model folder (see the module docstring) on ``weights``."""
    from attnlab.models import tokens
    from attnlab.models.chat import chat_of

    where = str(folder)
    if not (folder / "config.json").is_file():
        raise NotAModel(path=where, problem="no_config")
    if not (folder / "tokenizer.json").is_file():
        raise NotAModel(path=where, problem="no_tokenizer")
    config = _json(folder / "config.json", where)
    s = Settings(config, path=str(folder / "config.json"))
    model_type = s.get("model_type")
    family = CONFIG_FAMILIES.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        raise UnknownFamily(path=where, family=model_type if isinstance(model_type, str) else None,
                            key="config.json's model_type", known=KNOWN)  # fmt: skip
    if model_type == "gemma3":  # a multimodal Gemma 3: its text model
        s = Settings(s.within("text_config").values, path=s.path)
    arch = _architecture(s, family)
    store = SafetensorsStore(folder, "float32", path=where)
    path_name = weights if weights != "auto" else _auto(store.stored_types())
    store.on(path_name)
    check_memory(where, path_name, store.working_set())
    w = _weights(store, arch, s, family)
    if path_name != "stored":
        w = by_rows(w)
    words = tokens.from_folder(folder)
    title = name or model_name(folder)

    def reload(path_to: str) -> Model:
        return open_folder(folder, weights=path_to, name=title)

    common = dict(name=title, arch=arch, weights=w, tokenizer=words.tokenizer, path=path_name, source=folder,
                  reload=reload)  # fmt: skip
    if not arch.causal:
        st = tokens.read_json(folder / "sentence_bert_config.json")
        limit = min(int(st.get("max_seq_length", arch.n_ctx)), arch.n_ctx)
        return Encoder(**common, max_length=limit, pad_id=int(config.get("pad_token_id") or 0))
    generation = tokens.read_json(folder / "generation_config.json")
    ids = [*_ids(config.get("eos_token_id")), *_ids(generation.get("eos_token_id"))]
    return Decoder(**common, stop_ids=stop_ids(words, ids), chat_template=words.chat_template,
                   chat=chat_of(words))  # fmt: skip


def _json(path: Path, where: str) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise BadSetting(path=where, key=path.name, value="(not a JSON object)", need="a JSON object")
    return value


def _auto(dtypes: Iterable[str]) -> str:
    """"stored" where the compiled products run and the file's numbers are 16-bit or blocks, else float32."""
    from attnlab.engine.fast import quant

    if quant.kernel() is None:
        return "float32"
    return "stored" if {"F16", "BF16"} & set(dtypes) else "float32"


def _architecture(s: Settings, family: str) -> Architecture:
    if family in llama.FAMILIES:
        return llama.from_config(s, family)
    if family in gemma.FAMILIES:
        return gemma.from_config(s, family)
    if family == "gpt2":
        return gpt2.from_config(s)
    return bert.from_config(s, family)


def _weights(store: Store, arch: Architecture, s: Settings, family: str):
    if family in llama.FAMILIES:
        w = llama.weights(store, arch, llama.HF_NAMES, biases=llama.has_biases(s, family))
    elif family in gemma.FAMILIES:
        prefix = next((p for p in ("model.", "model.language_model.", "language_model.model.")
                       if store.has(p + "embed_tokens.weight")), "model.")  # fmt: skip
        w = llama.weights(store, arch, gemma.names(family, prefix), biases=s.flag("attention_bias", False),
                          plus_one=True)  # fmt: skip
    elif family == "gpt2":
        w = gpt2.weights(store, arch)
    else:
        w = bert.store_weights(store, arch)
    _check(store, arch, w)
    return w


def by_rows(w: Weights) -> Weights:
    """The float paths' matrices laid out as the products read them fastest: every block's matrices
    (n_in, n_out) by rows (C-contiguous, read-only), q|k|v and gate|up side by side in one array each
    (as the GGUF float32 cache keeps SmolLM2's; :func:`attnlab.engine.fast.ops.side_by_side`).

    A file's (n_out, n_in) rows seen transposed are a column-major matrix: OpenBLAS multiplies a
    prompt's 22 rows by one ~1.5x slower than by the same numbers stored by rows, and q|k|v in one
    product saves two (docs/performance.md). Matrices already by rows and joined (GPT-2's Conv1D
    columns of one fused tensor) stay views of the file."""
    blocks = []
    for b in w.blocks:
        a, m = b.attn, b.mlp
        changes = {}
        if joined(a.w_q, a.w_k, a.w_v) is None:
            changes.update(zip(("w_q", "w_k", "w_v"), _read_only(*side_by_side(a.w_q, a.w_k, a.w_v))))
        attn = dataclasses.replace(a, **changes, w_o=_rows(a.w_o))
        if isinstance(m, SwiGLUParams):
            gate, up = (m.w_gate, m.w_up) if joined(m.w_gate, m.w_up) is not None else _read_only(
                *side_by_side(m.w_gate, m.w_up))  # fmt: skip
            mlp = dataclasses.replace(m, w_gate=gate, w_up=up, w_down=_rows(m.w_down))
        else:
            mlp = dataclasses.replace(m, w_1=_rows(m.w_1), w_2=_rows(m.w_2))
        blocks.append(dataclasses.replace(b, attn=attn, mlp=mlp))
    return dataclasses.replace(w, blocks=tuple(blocks))


def _rows(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous else _read_only(np.ascontiguousarray(a))[0]


def _read_only(*arrays) -> tuple:
    for a in arrays:
        a.flags.writeable = False
        if isinstance(a.base, np.ndarray):
            a.base.flags.writeable = False
    return tuple(arrays)


def _check(store: Store, arch: Architecture, w) -> None:
    try:
        check_weights(arch, w)
    except FieldError as error:
        raise ImpossibleShapes(path=store.path, detail=str(error)) from None


# -- a GGUF file ------------------------------------------------------------------------------------


def gguf_parts(path: Path) -> list[Path]:
    """The files of a GGUF: itself, or every part of a split one (``-0000i-of-0000n.gguf``)."""
    m = _SPLIT.match(path.name)
    if not m:
        return [path]
    n = int(m["parts"])
    parts = [path.with_name(f"{m['stem']}-{i:05d}-of-{n:05d}.gguf") for i in range(1, n + 1)]
    for p in parts:
        if not p.is_file():
            raise MissingShard(path=str(path), shard=p.name, index=path.name)
    return parts


def open_gguf(path: Path, *, weights: str = "auto", name: str | None = None) -> Model:
    """A GGUF file (see the module docstring) on ``weights``."""
    from attnlab.engine.fast import quant
    from attnlab.models.chat import chat_of
    from attnlab.models.gguf_file import GGUFFile
    from attnlab.models.tokens import GGUF_KINDS, UnsupportedTokenizer, from_gguf

    where = str(path)
    files = [GGUFFile(p) for p in gguf_parts(path)]
    md = files[0].metadata
    arch_name = md.get("general.architecture")
    family = GGUF_FAMILIES.get(arch_name) if isinstance(arch_name, str) else None
    if family is None:
        raise UnknownFamily(path=where, family=arch_name if isinstance(arch_name, str) else None,
                            key="general.architecture", known=tuple(sorted(GGUF_FAMILIES)))  # fmt: skip
    path_name = weights if weights != "auto" else ("stored" if quant.kernel() is not None else "float32")
    store = GGUFStore(files, path_name, path=where)
    s = Settings(md, path=where, prefix=f"{arch_name}.")
    if family in llama.GGUF_ARCHITECTURES:
        freqs = store.values("rope_freqs.weight") if store.has("rope_freqs.weight") else None
        arch = llama.from_gguf(s, arch_name, store.names(), rope_freqs=freqs)
    elif family in gemma.GGUF_ARCHITECTURES:
        arch = gemma.from_gguf(s, arch_name)
    else:
        arch = gpt2.from_gguf(s, store.names())
    try:
        words = from_gguf(md)
    except UnsupportedTokenizer as error:
        raise UnreadTokenizer(path=where, kind=error.kind, known=GGUF_KINDS) from None
    check_memory(where, path_name, store.working_set())
    if family == "gpt2":
        w = gpt2.gguf_weights(store, arch)
    else:
        w = llama.weights(store, arch, llama.GGUF_NAMES, biases=True)
    _check(store, arch, w)
    if path_name != "stored":
        w = by_rows(w)
    title = name or model_name(path)

    def reload(path_to: str) -> Model:
        return open_gguf(path, weights=path_to, name=title)

    ids = [*_ids(md.get(f"tokenizer.ggml.{k}_token_id") for k in ("eos", "eot", "eom"))]
    return Decoder(name=title, arch=arch, weights=w, tokenizer=words.tokenizer, path=path_name, source=path,
                   reload=reload, stop_ids=stop_ids(words, ids), chat_template=words.chat_template,
                   chat=chat_of(words))  # fmt: skip


# -- stop tokens ------------------------------------------------------------------------------------


def _ids(value) -> list[int]:
    """Token ids as a config writes them: an int, a list of ints, or None (a generator of those: each)."""
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | dict):
        return [i for v in value for i in _ids(v)]
    return []


def stop_ids(words, ids: Iterable[int] = ()) -> list[int]:
    """The ids generation stops at: the tokenizer's EOS, ``ids`` (from the files' settings) inside the
    vocabulary, and the :data:`END_OF_TURN` tokens the vocabulary holds as special tokens."""
    tokenizer = words.tokenizer
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    out = [i for i in (words.eos_id, *ids) if i is not None and 0 <= int(i) < size]
    specials = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
    out += [tokenizer.token_to_id(t) for t in END_OF_TURN if t in specials]
    return sorted({int(i) for i in out})


__all__ = ["CONFIG_FAMILIES", "GGUF_FAMILIES", "KNOWN", "model_name", "open_folder", "open_gguf", "open_path"]
