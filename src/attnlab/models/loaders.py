"""How the shipped models load, and how their tokens are counted without their weights.

The registry names these functions (``"attnlab.models.loaders:minilm"``);
they are module-level so a worker process can import them. A counter returns
the token strings a trace of the text will have, specials included, exactly
as the model's own ``trace`` tokenizes (a test checks the two agree).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Counter:
    """``tokens(text)``: the token strings a trace of ``text`` has; ``text(id)``: one id's text, for
    ``0 <= id < vocab`` (``vocab``: the tokenizer's size; ``None`` where it has none)."""

    tokens: Callable[[str], list[str]]
    text: Callable[[int], str]
    vocab: int | None = None


def minilm():
    from attnlab.models import load

    return load.minilm()


def smollm2():
    from attnlab.models import load

    return load.smollm2()


def minilm_counter() -> Counter:
    """WordPiece with ``[CLS]`` and ``[SEP]``, never cut (the cap is checked on the full count)."""
    from attnlab.models import files
    from attnlab.models.tokens import minilm_tokenizer

    tokenizer = minilm_tokenizer(files.minilm_dir() / "tokenizer.json")
    return Counter(tokens=lambda text: list(tokenizer.encode(text).tokens), text=tokenizer.id_to_token,
                   vocab=tokenizer.get_vocab_size())


def smollm2_counter() -> Counter:
    """The byte-level BPE from the GGUF's metadata (about half a second, once); each token as its text."""
    from attnlab.models import files
    from attnlab.models.gguf_file import GGUFFile
    from attnlab.models.tokens import gguf_bpe_tokenizer

    tokenizer = gguf_bpe_tokenizer(GGUFFile(files.smollm2_gguf()).metadata)

    def text(i: int) -> str:
        return tokenizer.decode([i], skip_special_tokens=False)

    return Counter(tokens=lambda t: [text(i) for i in tokenizer.encode(t).ids], text=text,
                   vocab=tokenizer.get_vocab_size())


def files_counter(path, *, encoder: bool) -> Counter:
    """The tokenizer of a model on disk (a folder's ``tokenizer.json``, a GGUF's vocabulary), counting as
    its trace labels tokens: an encoder's as its vocabulary writes them (``##ing``), a decoder's as each
    id's own text."""
    from pathlib import Path

    from attnlab.models import tokens

    where = Path(path)
    words = tokens.from_folder(where) if where.is_dir() else tokens.from_gguf_file(where)
    tokenizer = words.tokenizer
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if encoder:
        return Counter(tokens=lambda t: list(tokenizer.encode(t).tokens), text=tokenizer.id_to_token,
                       vocab=size)  # fmt: skip

    def text(i: int) -> str:
        return tokenizer.decode([i], skip_special_tokens=False)

    return Counter(tokens=lambda t: [text(i) for i in tokenizer.encode(t).ids], text=text, vocab=size)
