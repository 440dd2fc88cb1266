"""Refuse a circuits request the model cannot answer: ``FieldError`` at the field, never a traceback.

Layers, heads and positions use the Real model view's problems
(:mod:`attnlab.lab.realmodel.problems`); the few problems only circuits have are
below, in words that never name their field (the page names it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel import problems

HOWS = ("zero", "mean")
SITES = ("pre", "mid", "post")


def not_an_index(value: object) -> str:
    return f"{value!r} is not a whole number"


def too_long(n_tokens: int, limit: int) -> str:
    return f"is {n_tokens} tokens long; the model reads at most {limit}"


def lengths_differ(n_clean: int, n_corrupt: int) -> str:
    return (
        f"is {n_corrupt} tokens long and the clean prompt {n_clean}; patching needs two prompts "
        "of the same token length"
    )


def same_answers(token: int) -> str:
    return f"name token {token} twice; give two different tokens"


def not_two_answers(value: object) -> str:
    return f"{value!r:.40} is not two token ids"


def unknown_choice(value: object, choices: Sequence[str]) -> str:
    return f"{value!r:.40} is unknown; use one of {', '.join(choices)}"


def edits_below(first: int, layer: int) -> str:
    return f"is {layer}, above an edit in layer {first}; run again from layer {first} or lower"


def already_edited() -> str:
    return "is a run with interventions already; ablate a run of the text as it is"


def not_a_head(value: object) -> str:
    return f"{value!r:.40} is not a (layer, head) pair"


def no_unembedding(model: str) -> str:
    return f"{model} is an encoder: it has no next token and no unembedding"


def wrong_shape(shape: tuple, expected: tuple) -> str:
    return f"has shape {shape}; expected {expected}"


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
