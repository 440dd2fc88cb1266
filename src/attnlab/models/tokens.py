"""Tokenizers for the two shipped models, built with the ``tokenizers`` library.

MiniLM: the package's own ``tokenizer.json`` (BERT WordPiece, lower-cased),
with its fixed 128-token padding switched off: we pad a batch to its longest
row ourselves and keep the attention mask (``1`` = real token).

SmolLM2: a byte-level BPE rebuilt from the GGUF metadata (vocabulary, merges),
split by the GPT-2 pattern, with every token the file marks as *control*
(type 3, e.g. ``<|im_start|>``) registered as a special token so it stays whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

_CONTROL = 3  # llama.cpp's token type for control tokens


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


def gguf_bpe_tokenizer(metadata: dict[str, Any]) -> Tokenizer:
    """Build the byte-level BPE a llama.cpp ``gpt2``-type GGUF describes."""
    kind = metadata.get("tokenizer.ggml.model")
    if kind != "gpt2":
        raise ValueError(f"tokenizer.ggml.model is {kind!r}; only byte-level 'gpt2' is supported")
    names: list[str] = list(metadata["tokenizer.ggml.tokens"])
    merges = [tuple(m.split(" ", 1)) for m in metadata["tokenizer.ggml.merges"]]
    vocab = {name: index for index, name in enumerate(names)}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    kinds = metadata.get("tokenizer.ggml.token_type") or []
    control = [names[i] for i, k in enumerate(kinds) if int(k) == _CONTROL]
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in control])
    return tokenizer
