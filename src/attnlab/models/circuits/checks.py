"""Refuse a circuits request the model cannot answer: a typed refusal at the field, never a traceback.

Each is a :class:`attnlab.models.errors.Refusal` carrying the facts; its words are the lab's: the
Real model view's problems for layers, heads and positions (:mod:`attnlab.lab.realmodel.problems`),
and the few only circuits have (:mod:`attnlab.lab.circuits.problems`, kinds ``"circuits.*"``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlab.models.errors import Refusal

HOWS = ("zero", "mean")
SITES = ("pre", "mid", "post")


def index(value: object, size: int, *, loc: tuple, model: str, what: str) -> int:
    """``value`` as an index into ``size`` layers or heads (``what``), else ``FieldError`` at ``loc``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise Refusal(loc, "circuits.not_an_index", value)
    if not 0 <= int(value) < size:
        raise Refusal(loc, "no_such_index", value, model, what, size)
    return int(value)


def position(value: object, n_tokens: int, *, loc: tuple) -> int:
    """A token position; negative counts from the end (-1: the last token)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise Refusal(loc, "circuits.not_an_index", value)
    at = int(value) + n_tokens if int(value) < 0 else int(value)
    if not 0 <= at < n_tokens:
        raise Refusal(loc, "no_such_token", value, n_tokens)
    return at


def positions(values: Sequence[int] | None, n_tokens: int, *, loc: tuple) -> tuple[int, ...] | None:
    """Distinct positions in increasing order, or None (every position)."""
    if values is None:
        return None
    return tuple(sorted({position(v, n_tokens, loc=(*loc, i)) for i, v in enumerate(values)}))


def choice(value: object, choices: Sequence[str], *, loc: tuple) -> str:
    if value not in choices:
        raise Refusal(loc, "circuits.unknown_choice", value, choices)
    return value  # type: ignore[return-value]


def answers(value: object, vocab: int) -> tuple[int, int]:
    """Two different token ids (the right answer first), else ``FieldError`` at ``answers``."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 2:
        raise Refusal(("answers",), "circuits.not_two_answers", value)
    out = tuple(index(v, vocab, loc=("answers", i), model="the vocabulary", what="token")
                for i, v in enumerate(value))  # fmt: skip
    if out[0] == out[1]:
        raise Refusal(("answers",), "circuits.same_answers", out[0])
    return out  # type: ignore[return-value]
