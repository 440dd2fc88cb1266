"""The model layer's refusals: typed errors that carry the facts, worded by the lab.

``models/`` returns numbers and typed errors, never words. A :class:`Refusal` is a
:class:`~attnlab.engine.errors.FieldError` (so every surface shows it as it shows any bad
field: the API as a 4xx at the field, the CLI as one line) whose ``kind`` names what is wrong
and whose ``facts`` are the numbers and names involved: ``TooManyTokens(("text",), n=300,
cap=256, title="SmolLM2-135M-Instruct")``. Its problem sentence is the lab's: the lab
registers one wording function per kind (:func:`words`, done by :mod:`attnlab.lab.refusals`
when ``attnlab`` is imported), called with the facts. So ``models/`` never imports the lab,
and every refusal reads as the lab writes it.

A program that catches a refusal reads its facts (``error.facts["n"]``), not its words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from attnlab.engine.errors import FieldError, Loc

_WORDS: dict[str, Callable[..., str]] = {}


def words(**by_kind: Callable[..., str]) -> None:
    """Register the lab's wording function for each kind (called once, by ``attnlab.lab.refusals``)."""
    _WORDS.update(by_kind)


def worded(kind: str, *args: Any, **kwargs: Any) -> str:
    """The lab's sentence for ``kind`` with these facts (the kind and its facts where none is registered)."""
    fn = _WORDS.get(kind)
    if fn is None:  # only before attnlab.lab.refusals has registered the words (a bare import of models)
        facts = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        return f"{kind}({facts})"
    return fn(*args, **kwargs)


class Refusal(FieldError):
    """A request refused at field ``loc`` for ``kind`` (the lab's wording function's name), with ``args``
    and ``facts`` (what the wording function takes, positional and by name)."""

    kind: ClassVar[str] = ""

    def __init__(self, loc: Loc | str, kind: str | None = None, *args: Any, **facts: Any) -> None:
        self.kind = kind or type(self).kind
        self.args_ = args
        self.facts = facts
        super().__init__(loc, worded(self.kind, *args, **facts))

    def rebased(self, old: Loc, new: Loc) -> Refusal:
        n = len(old)
        loc = (*new, *self.loc[n:]) if self.loc[:n] == tuple(old) else self.loc
        return Refusal(loc, self.kind, *self.args_, **self.facts)


class TooManyTokens(Refusal):
    """A text of ``n_tokens`` tokens over the model's ``cap``."""

    kind = "over_token_cap"

    def __init__(self, loc: Loc | str, n_tokens: int, cap: int, title: str) -> None:
        super().__init__(loc, None, n_tokens, cap, title)
        self.n_tokens, self.cap = n_tokens, cap


class OverContext(Refusal):
    """``n_tokens`` tokens past the model's trained ``context``."""

    kind = "over_context"

    def __init__(self, loc: Loc | str, n_tokens: int, context: int) -> None:
        super().__init__(loc, None, n_tokens, context)
        self.n_tokens, self.context = n_tokens, context


class OutsideVocabulary(Refusal):
    """Token id ``token`` outside a vocabulary of ``vocab`` ids."""

    kind = "outside_vocabulary"

    def __init__(self, loc: Loc | str, token: int, vocab: int) -> None:
        super().__init__(loc, None, token, vocab)
        self.token, self.vocab = token, vocab


class UnknownModel(Refusal):
    """A model ``name`` not among ``names``."""

    kind = "unknown_model"

    def __init__(self, loc: Loc | str, name: object, names) -> None:
        super().__init__(loc, None, name, tuple(names))
        self.name, self.names = name, tuple(names)
