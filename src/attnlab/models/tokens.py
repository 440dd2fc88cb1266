"""Tokenizers, all built with the ``tokenizers`` library: a model folder's, a GGUF's own, the shipped ones.

A model's tokenizer is a :class:`ModelTokenizer`: the ``tokenizers.Tokenizer`` (its
``encode(text).ids`` are the ids transformers gives for the same files, BOS included when
the model adds one; ``encode(text, add_special_tokens=False)`` leaves it out), the special
tokens' spellings, whether BOS/EOS are added, and the chat template's source when the files
carry one (:mod:`attnlab.models.chat` renders it).

- :func:`from_folder`: ``tokenizer.json`` as it is, with the special tokens, the BOS/EOS flags
  and the template from ``tokenizer_config.json`` (a ``chat_template.jinja`` beside it wins,
  as in transformers).
- :func:`from_gguf`: the vocabulary a GGUF's metadata spells, rebuilt as transformers rebuilds
  it (``integrations/gguf``), so the ids are the same:

  * ``tokenizer.ggml.model == "gpt2"``: byte-level BPE with the file's merges, text split by the
    pattern ``tokenizer.ggml.pre`` names (GPT-2's, Llama 3's, Qwen2's; "smollm" splits digits
    one by one first, as SmolLM's own ``tokenizer.json`` and llama.cpp do: transformers, which
    does not know the name, gives the same ids on every vocabulary without multi-digit tokens,
    SmolLM's among them);
  * ``"llama"``: SentencePiece-style BPE over "▁"-joined text with byte fallback, its merges
    rebuilt from the pieces' scores (Llama 2, Mistral), from their order (Gemma, whose
    whitespace pieces are respelled with "▁"), "▁" prefixed by a normalizer for Phi-3;
  * tokens the file marks *control* (type 3) are special and stay whole; *user-defined* ones
    (type 4) stay whole too; BOS/EOS come from their ids, ``add_bos_token`` from the file
    (a SentencePiece-style file that does not say adds BOS, as llama.cpp does).

  Any other ``tokenizer.ggml.model`` raises :class:`UnsupportedTokenizer` naming it.

MiniLM: :func:`minilm_tokenizer` (its fixed 128-token padding switched off: we pad a batch to its
longest row ourselves and keep the attention mask, ``1`` = real token) and :func:`encode_batch`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

# llama.cpp's token types (gguf.TokenType)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

GGUF_KINDS = ("gpt2", "llama")  # the tokenizer.ggml.model values read here

# Pre-tokenizer patterns by tokenizer.ggml.pre (llama.cpp's names), as transformers splits them.
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPLITS = {
    **dict.fromkeys(
        ("llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "dbrx", "smaug-bpe"),
        LLAMA3_SPLIT,
    ),
    **dict.fromkeys(("qwen2", "deepseek-r1-qwen", "megrez"), QWEN2_SPLIT),
}
DIGITS_FIRST = ("smollm",)  # each digit its own piece, then GPT-2's split
GEMMA_ARCHS = ("gemma", "gemma2", "gemma3")


class UnsupportedTokenizer(ValueError):
    """A GGUF whose ``tokenizer.ggml.model`` is ``kind`` (``None``: none named); ``known``: the ones read."""

    def __init__(self, kind: object, known: tuple[str, ...] = GGUF_KINDS) -> None:
        super().__init__(f"tokenizer.ggml.model is {kind!r}; the ones read are {', '.join(known)}")
        self.kind = kind
        self.known = known


@dataclass(frozen=True, kw_only=True)
class ModelTokenizer:
    """A model's tokenizer and its special tokens.

    ``tokenizer.encode(text).ids`` adds BOS when ``add_bos`` (and EOS when ``add_eos``);
    ``bos``/``eos``/``unk``/``pad`` are the tokens' spellings (``None``: the model has none);
    ``chat_template`` is the Jinja source the files carry (``None``: the model has no chat form);
    ``kind``: "tokenizer.json", "gpt2" or "llama" (which builder made it).
    """

    tokenizer: Tokenizer
    bos: str | None = None
    eos: str | None = None
    unk: str | None = None
    pad: str | None = None
    add_bos: bool = False
    add_eos: bool = False
    chat_template: str | None = None
    kind: str = "tokenizer.json"

    def id_of(self, token: str | None) -> int | None:
        return None if token is None else self.tokenizer.token_to_id(token)

    @property
    def bos_id(self) -> int | None:
        return self.id_of(self.bos)

    @property
    def eos_id(self) -> int | None:
        return self.id_of(self.eos)

    def ids(self, text: str, *, specials: bool = True) -> list[int]:
        """``text``'s ids, BOS/EOS added as the model adds them unless ``specials`` is False."""
        return list(self.tokenizer.encode(text, add_special_tokens=specials).ids)


# -- a folder: tokenizer.json and tokenizer_config.json --------------------------------------------


def _spelling(value: Any) -> str | None:
    """A special token as tokenizer_config.json writes it: a string or ``{"content": ...}``."""
    if isinstance(value, Mapping):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _template_of(config: Mapping[str, Any]) -> str | None:
    """``chat_template``: a string, or a list of ``{"name", "template"}`` of which "default" is the chat."""
    value = config.get("chat_template")
    if isinstance(value, list):
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, Mapping)}
        value = named.get("default")
    return value if isinstance(value, str) and value.strip() else None


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path`` ({} when the file is absent)."""
    if not path.is_file():
        return {}
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path.name} holds a {type(value).__name__}, not an object")
    return value


def _post_processor(
    bos: tuple[str, int] | None, eos: tuple[str, int] | None
) -> processors.TemplateProcessing:
    """BOS before and EOS after each sequence, as transformers' ``update_post_processor`` writes it."""
    first = f"{bos[0]}:0 " if bos else ""
    last = f" {eos[0]}:0" if eos else ""
    second = (f" {bos[0]}:1" if bos else "") + " $B:1" + (f" {eos[0]}:1" if eos else "")
    return processors.TemplateProcessing(
        single=f"{first}$A:0{last}",
        pair=f"{first}$A:0{last}{second}",
        special_tokens=[t for t in (bos, eos) if t],
    )


def from_folder(folder: Path | str) -> ModelTokenizer:
    """The tokenizer of a Hugging Face model folder (``tokenizer.json`` must be there)."""
    folder = Path(folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    config = read_json(folder / "tokenizer_config.json")
    specials = read_json(folder / "special_tokens_map.json")
    names = {
        name: _spelling(config.get(f"{name}_token", specials.get(f"{name}_token")))
        for name in ("bos", "eos", "unk", "pad")
    }
    add_bos, add_eos = bool(config.get("add_bos_token", False)), bool(config.get("add_eos_token", False))
    if "add_bos_token" in config or "add_eos_token" in config:  # the flags rule over tokenizer.json's own
        bos = _special(tokenizer, names["bos"]) if add_bos else None
        eos = _special(tokenizer, names["eos"]) if add_eos else None
        tokenizer.post_processor = _post_processor(bos, eos)
        add_bos, add_eos = bos is not None, eos is not None
    else:  # tokenizer.json's post-processor decides: see what it adds
        probe = tokenizer.encode("", add_special_tokens=True).ids
        add_bos = bool(probe) and probe[0] == tokenizer.token_to_id(names["bos"] or "")
        add_eos = bool(probe) and probe[-1] == tokenizer.token_to_id(names["eos"] or "")
    jinja = folder / "chat_template.jinja"
    template = jinja.read_text(encoding="utf-8") if jinja.is_file() else _template_of(config)
    return ModelTokenizer(
        tokenizer=tokenizer, add_bos=add_bos, add_eos=add_eos, chat_template=template, **names
    )


def _special(tokenizer: Tokenizer, token: str | None) -> tuple[str, int] | None:
    index = None if token is None else tokenizer.token_to_id(token)
    return None if index is None else (token, index)


# -- a GGUF: its own vocabulary ---------------------------------------------------------------------


@lru_cache(maxsize=1)
def _byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> printable character map (``bytes_to_unicode``)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + extra)
            extra += 1
    return table


def _byte_level(tokens: list[str], merges: list[str], pre: str | None) -> Tokenizer:
    """Byte-level BPE: a token spelled outside the byte alphabet is respelled byte by byte."""
    spell = _byte_alphabet()
    alphabet = set(spell.values())
    vocab = {
        (t if set(t) <= alphabet else "".join(spell[b] for b in t.encode("utf-8"))): i
        for i, t in enumerate(tokens)
    }
    pairs = [tuple(m.split(" ")) for m in merges]
    tokenizer = Tokenizer(
        models.BPE(
            vocab=vocab,
            merges=pairs,
            dropout=None,
            continuing_subword_prefix="",
            end_of_word_suffix="",
            fuse_unk=False,
        )
    )
    byte = pre_tokenizers.ByteLevel
    if pre in SPLITS:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(SPLITS[pre]), behavior="isolated"),
                byte(add_prefix_space=False, use_regex=False),
            ]
        )
    elif pre in DIGITS_FIRST:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte(add_prefix_space=False, use_regex=True)]
        )
    else:  # GPT-2's own split ("gpt-2", "default" and names without a pattern of their own)
        tokenizer.pre_tokenizer = byte(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def merges_from_scores(tokens: list[str], scores: Mapping[str, float]) -> list[tuple[str, str]]:
    """The merges a scored vocabulary implies: every split of a piece into two pieces, best piece first.

    transformers' ``generate_merges``, step for step: within a piece, splits in order of the two
    halves' ids; then all by (score, length of left, length of right), highest first, stable.
    """
    vocab = {t: i for i, t in enumerate(tokens)}
    merges: list[tuple[str, str, float]] = []
    for piece, score in scores.items():
        local = []
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in vocab and right in vocab:
                local.append((left, right, score))
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in merges]


def _sentencepiece(tokens: list[str], scores: list[float], merges: list[str] | None, arch: str) -> Tokenizer:
    """SentencePiece-style BPE with byte fallback, shaped per family as transformers shapes it."""
    replace_strip = [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]
    if arch in GEMMA_ARCHS:
        # Gemma stores whitespace pieces as spaces and orders its merges by position, not score.
        tokens = ["▁" * len(t) if " " in t and not t.strip() else t for t in tokens]
        order = {t: -float(i) for i, t in enumerate(tokens)}
        vocab = {t: i for i, t in enumerate(tokens)}
        pairs = merges_from_scores(tokens, order)
        tokenizer = Tokenizer(
            models.BPE(
                vocab=vocab, merges=pairs, fuse_unk=True, unk_token="<unk>", dropout=None, byte_fallback=True
            )
        )
        tokenizer.pre_tokenizer = pre_tokenizers.Split(
            pattern=" ", behavior="merged_with_previous", invert=False
        )
        tokenizer.normalizer = normalizers.Replace(" ", "▁")
        tokenizer.decoder = decoders.Sequence(replace_strip)
        return tokenizer
    vocab = {t: i for i, t in enumerate(tokens)}
    if merges:
        pairs = [tuple(m.split(" ")) for m in merges]
    else:
        pairs = merges_from_scores(tokens, dict(zip(tokens, scores)))
    tokenizer = Tokenizer(
        models.BPE(vocab=vocab, merges=pairs, fuse_unk=True, byte_fallback=True, dropout=None)
    )
    tokenizer.decoder = decoders.Sequence([*replace_strip, decoders.Strip(content=" ", left=1)])
    if arch == "phi3":  # the prefix comes from a normalizer: "  hi" keeps both spaces
        tokenizer.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme="first", split=False
        )
    return tokenizer


def _whole(tokenizer: Tokenizer, tokens: list[str], types: Iterable[int], *, byte_level: bool) -> None:
    """Keep control tokens (special) and user-defined ones (not special) whole in the text."""
    alphabet = set(_byte_alphabet().values()) if byte_level else None
    kinds = list(types)
    control = [
        AddedToken(t, normalized=False, special=True)
        for t, k in zip(tokens, kinds)
        if k == CONTROL and (alphabet is None or set(t) <= alphabet)  # else a mislabel: skipped
    ]
    tokenizer.add_special_tokens(control)
    user = [t for t, k in zip(tokens, kinds) if k == USER_DEFINED]
    if user:  # (the whole vocabulary as a dict only when there are some)
        vocab = tokenizer.get_vocab()
        tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in user if t in vocab])


def from_gguf(metadata: Mapping[str, Any]) -> ModelTokenizer:
    """The tokenizer a GGUF's metadata describes (``tokenizer.ggml.*``), ids equal to transformers'."""
    kind = metadata.get("tokenizer.ggml.model")
    if kind not in GGUF_KINDS:
        raise UnsupportedTokenizer(kind)
    tokens: list[str] = list(metadata["tokenizer.ggml.tokens"])
    types = [int(t) for t in metadata.get("tokenizer.ggml.token_type") or ()]
    merges = metadata.get("tokenizer.ggml.merges")
    arch = str(metadata.get("general.architecture", ""))
    if kind == "gpt2":
        tokenizer = _byte_level(tokens, list(merges or ()), metadata.get("tokenizer.ggml.pre"))
        add_bos = bool(metadata.get("tokenizer.ggml.add_bos_token", False))
    else:
        scores = [float(s) for s in metadata.get("tokenizer.ggml.scores") or [0.0] * len(tokens)]
        tokenizer = _sentencepiece(tokens, scores, list(merges) if merges else None, arch)
        add_bos = bool(metadata.get("tokenizer.ggml.add_bos_token", True))
    _whole(tokenizer, tokens, types, byte_level=kind == "gpt2")
    add_eos = bool(metadata.get("tokenizer.ggml.add_eos_token", False))
    names = gguf_specials(metadata)
    # Named special tokens stay whole, as transformers registers them.
    tokenizer.add_special_tokens(
        [
            AddedToken(t, normalized=False, special=True)
            for t in dict.fromkeys(names.values())
            if t is not None
        ]
    )
    bos = _special(tokenizer, names["bos"]) if add_bos else None
    eos = _special(tokenizer, names["eos"]) if add_eos else None
    tokenizer.post_processor = _post_processor(bos, eos)
    template = metadata.get("tokenizer.chat_template")
    return ModelTokenizer(
        tokenizer=tokenizer,
        add_bos=bos is not None,
        add_eos=eos is not None,
        chat_template=template if isinstance(template, str) and template.strip() else None,
        kind=kind,
        **names,
    )


# The metadata arrays a tokenizer is built from (every other array of a GGUF is skipped on reading).
GGUF_ARRAYS = tuple(f"tokenizer.ggml.{k}" for k in ("tokens", "token_type", "merges", "scores"))


def from_gguf_file(path: Path | str) -> ModelTokenizer:
    """:func:`from_gguf` on a GGUF file's header, read through a memory map whatever its tensor types.

    A file that cannot be read raises ``attnlab.models.discover.Unreadable`` with its typed reason.
    """
    from attnlab.models.discover import gguf_header

    return from_gguf(gguf_header(Path(path), arrays=GGUF_ARRAYS).metadata)


def gguf_specials(metadata: Mapping[str, Any]) -> dict[str, str | None]:
    """{"bos", "eos", "unk", "pad"} -> the token a GGUF names by id (``None``: no id, or one outside)."""
    tokens = metadata["tokenizer.ggml.tokens"]

    def name(key: str) -> str | None:
        index = metadata.get(f"tokenizer.ggml.{key}_token_id")
        return tokens[int(index)] if index is not None and 0 <= int(index) < len(tokens) else None

    return {"bos": name("bos"), "eos": name("eos"), "unk": name("unknown"), "pad": name("padding")}


def gguf_bpe_tokenizer(metadata: dict[str, Any]) -> Tokenizer:
    """The ``tokenizers.Tokenizer`` of :func:`from_gguf` (SmolLM2's loader reads it by this name)."""
    return from_gguf(metadata).tokenizer


# -- MiniLM ----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Batch:
    """A padded batch: ``ids`` and ``mask`` are ``(B, T)``; ``mask`` is 1 for real tokens."""

    ids: np.ndarray
    mask: np.ndarray
    tokens: list[list[str]]  # each row's real tokens, padding left out


def minilm_tokenizer(path: Path | str) -> Tokenizer:
    """Load ``tokenizer.json`` with padding off and truncation off (``encode`` sets it)."""
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def encode_batch(tokenizer: Tokenizer, texts: list[str], *, max_length: int, pad_id: int) -> Batch:
    """Tokenize ``texts`` (cut to ``max_length`` tokens, specials included) and right-pad."""
    tokenizer.enable_truncation(max_length=max_length)
    encodings = tokenizer.encode_batch(texts)
    width = max(len(e.ids) for e in encodings)
    ids = np.full((len(texts), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(texts), width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        ids[row, : len(enc.ids)] = enc.ids
        mask[row, : len(enc.ids)] = 1
    return Batch(ids=ids, mask=mask, tokens=[list(e.tokens) for e in encodings])
