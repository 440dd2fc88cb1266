"""What a program is for: the text it runs on (:class:`Source`) and the number's place, checked.

A number is described by its ``kind`` and a few fields (the descriptor, see the folder's
docstring); each kind's module says which fields it reads. The checks here refuse a field
that is missing or outside the model or the text with ``FieldError(loc, problem)``: the
problem never names the field (the page does, :mod:`attnlab.lab.fields`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from attnlab.engine.errors import FieldError
from attnlab.lab import numbers as fmt
from attnlab.lab.realmodel import problems

DECODER = "smollm2"
ENCODER = "minilm"
MODELS = (DECODER, ENCODER)


@dataclass(frozen=True, kw_only=True)
class Source:
    """The text a program runs on and the model that ran it.

    ``ids``: the token ids (MiniLM's ``[CLS]`` and ``[SEP]`` included); ``tokens``: each
    token's exact text (for the program's comments); ``path``: what the page's numbers ran
    on ("q4_1" or "float32"); ``compiled``: attnlab's compiled steps ran (the fast path's
    RMSNorm, RoPE and SiLU, and its attention up to 63 tokens; set for the circuits' numbers
    where the program is written); ``corrupt_ids`` / ``corrupt_tokens``: a patching pair's
    corrupted prompt; ``vocab``: the vocabulary's size where known (None: not checked here).
    """

    model: str
    title: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    path: str
    n_layer: int
    n_head: int
    d_head: int
    vocab: int | None = None
    compiled: bool = True
    corrupt_ids: tuple[int, ...] | None = None
    corrupt_tokens: tuple[str, ...] | None = None

    @property
    def decoder(self) -> bool:
        return self.model == DECODER

    @property
    def n_tokens(self) -> int:
        return len(self.ids)


def unknown(value: object, choices: Sequence[str]) -> str:
    return f"{value!r:.40} is unknown; use one of {', '.join(choices)}"


def no_kind() -> str:
    return "is needed: it says which kind of number the program is for"


def needed(kind: str) -> str:
    return f"is needed for a number of kind {kind}"


def not_for(kind: str, model: str) -> str:
    return f"{kind!r} is not a number {model} shows: it needs a model that predicts the next token"


def not_two_prompts() -> str:
    return "is missing: patching compares the clean prompt with a corrupted one"


def lengths_differ(n_clean: int, n_corrupt: int) -> str:
    return (f"is {fmt.plural(n_corrupt, 'token')} long and the clean prompt {n_clean}; patching needs the "
            "same length")


def outside(value: object, low: float, high: float) -> str:
    return f"must be between {low:g} and {high:g}, got {value!r}"


def other_model(title: str) -> str:
    return f"is a trace of {title}; patching needs two texts of the same model"


def tokens_differ(n_tokens: int, n_ids: int) -> str:
    return f"has {fmt.plural(n_tokens, 'token')} for {fmt.plural(n_ids, 'id')}; give one per id"


def same_answers(token: int) -> str:
    return f"name token {token} twice; give two different tokens"


def field(raw: Mapping, name: str, kind: str):
    """The descriptor's field ``name``; ``FieldError`` when it is missing."""
    value = raw.get(name)
    if value is None:
        raise FieldError((name,), needed(kind))
    return value


def whole(raw: Mapping, name: str, kind: str, size: int, *, model: str = "", what: str = "") -> int:
    """A whole number in 0..size-1; ``what`` names it in the problem ("layer", "head"), else a token."""
    value = field(raw, name, kind)
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError((name,), problems.not_whole(value))
    if not 0 <= value < size:
        problem = (
            problems.no_such_index(value, model, what, size) if what else problems.no_such_token(value, size)
        )
        raise FieldError((name,), problem)
    return value


def token_id(raw: Mapping, name: str, kind: str, src: Source) -> int:
    """A token id of the vocabulary."""
    value = field(raw, name, kind)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FieldError((name,), problems.not_whole(value))
    if src.vocab is not None and value >= src.vocab:
        raise FieldError((name,), problems.outside_vocabulary(value, src.vocab))
    return value


def choice(raw: Mapping, name: str, kind: str, choices: Sequence[str]) -> str:
    value = field(raw, name, kind)
    if value not in choices:
        raise FieldError((name,), unknown(value, choices))
    return value


def layer(raw: Mapping, kind: str, src: Source, name: str = "layer") -> int:
    return whole(raw, name, kind, src.n_layer, model=src.model, what="layer")


def head(raw: Mapping, kind: str, src: Source, name: str = "head") -> int:
    return whole(raw, name, kind, src.n_head, model=src.model, what="head")


def token(raw: Mapping, name: str, kind: str, src: Source) -> int:
    """A token position of the text."""
    return whole(raw, name, kind, src.n_tokens)


def number(raw: Mapping, name: str, default: float, *, low: float, high: float, above: bool = False) -> float:
    """A finite number in [low, high] (``above``: in (low, high]), ``default`` when absent."""
    value = raw.get(name, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise FieldError((name,), problems.not_finite(value))
    if value > high or value < low or (above and value == low):
        raise FieldError((name,), problems.not_a_share(value) if above else outside(value, low, high))
    return float(value)


def decoder_only(src: Source, kind: str) -> None:
    if not src.decoder:
        raise FieldError(("kind",), not_for(kind, src.title))
