"""Refuse a circuits request the model cannot answer: ``FieldError`` at the field, never a traceback.

Layers, heads and positions use the Real model view's problems
(:mod:`attnlab.lab.realmodel.problems`); the few problems only circuits have are the
lab's (:mod:`attnlab.lab.circuits.problems`: words that never name their field; the
page names it). They are named here too (``checks.lengths_differ``), for this package's
callers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.lab.circuits.problems import (  # noqa: F401 - the package's callers name them as checks.*
    already_edited,
    edits_below,
    lengths_differ,
    no_unembedding,
    not_a_head,
    not_an_index,
    not_two_answers,
    same_answers,
    too_long,
    unknown_choice,
    wrong_shape,
)
from attnlab.lab.realmodel import problems

HOWS = ("zero", "mean")
SITES = ("pre", "mid", "post")


def index(value: object, size: int, *, loc: tuple, model: str, what: str) -> int:
    """``value`` as an index into ``size`` layers or heads (``what``), else ``FieldError`` at ``loc``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise FieldError(loc, not_an_index(value))
    if not 0 <= int(value) < size:
        raise FieldError(loc, problems.no_such_index(value, model, what, size))
    return int(value)


def position(value: object, n_tokens: int, *, loc: tuple) -> int:
    """A token position; negative counts from the end (-1: the last token)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise FieldError(loc, not_an_index(value))
    at = int(value) + n_tokens if int(value) < 0 else int(value)
    if not 0 <= at < n_tokens:
        raise FieldError(loc, problems.no_such_token(value, n_tokens))
    return at


def positions(values: Sequence[int] | None, n_tokens: int, *, loc: tuple) -> tuple[int, ...] | None:
    """Distinct positions in increasing order, or None (every position)."""
    if values is None:
        return None
    return tuple(sorted({position(v, n_tokens, loc=(*loc, i)) for i, v in enumerate(values)}))


def choice(value: object, choices: Sequence[str], *, loc: tuple) -> str:
    if value not in choices:
        raise FieldError(loc, unknown_choice(value, choices))
    return value  # type: ignore[return-value]


def answers(value: object, vocab: int) -> tuple[int, int]:
    """Two different token ids (the right answer first), else ``FieldError`` at ``answers``."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence) or len(value) != 2:
        raise FieldError(("answers",), not_two_answers(value))
    out = tuple(index(v, vocab, loc=("answers", i), model="the vocabulary", what="token")
                for i, v in enumerate(value))  # fmt: skip
    if out[0] == out[1]:
        raise FieldError(("answers",), same_answers(out[0]))
    return out  # type: ignore[return-value]
