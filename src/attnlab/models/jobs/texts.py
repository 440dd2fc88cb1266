"""What a model job's text may be: a model the registry knows, whole characters, the model's caps.

Checked here, before anything is queued or loaded (the tokenizer alone), and again in the
worker with the model's own count (:func:`attnlab.models.jobs.kinds.trace_text`). Each
refusal is a ``FieldError`` at the field the learner fixes, in the lab's words
(``lab/realmodel/problems``): they never name the field.
"""

from __future__ import annotations

from attnlab.models import registry
from attnlab.models.errors import Refusal, TooManyTokens
from attnlab.models.registry import DEFAULT_MAX_CHARS, DEFAULT_MAX_TOKENS

MAX_CHARS = DEFAULT_MAX_CHARS  # what the Real model view accepts (a bound on the body; tokens are the cap)
MAX_TOKENS = DEFAULT_MAX_TOKENS  # the default cap in tokens; each ModelSpec says its own


def check_model(model: object) -> str:
    """Return ``model`` if the registry knows it, else raise ``FieldError(("model",), ...)``."""
    return registry.check_name(model)


def too_many_tokens(field: str, model: str, n_tokens: int, cap: int = MAX_TOKENS) -> TooManyTokens:
    """The refusal of a text over the token cap, at ``field``; the model named by its registry title, as
    the page's model choice reads."""
    return TooManyTokens((field,), n_tokens, cap, registry.title(model))


def check_chars(text: str, *, field: str = "text", max_chars: int | None = None) -> str:
    """Return ``text`` unless it holds a lone surrogate (half a character: no tokenizer takes it)
    or, with ``max_chars``, more characters than that."""
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        raise Refusal((field,), "half_character")
    if max_chars is not None and len(text) > max_chars:
        raise Refusal((field,), "too_many_chars", len(text), max_chars)
    return text


def check_text(text: object, *, field: str = "text", max_chars: int = MAX_CHARS) -> str:
    """Return ``text``, or raise ``FieldError((field,), problem)`` with the problem the learner sees."""
    if not isinstance(text, str) or not text.strip():
        raise Refusal((field,), "empty_text")
    return check_chars(text, field=field, max_chars=max_chars)


def check_tokens(model: str, text: str, *, field: str = "text") -> int:
    """The number of tokens of ``text`` for ``model`` (its tokenizer alone), or FieldError over its cap."""
    from attnlab.models.files import ModelNotInstalled

    try:
        n = len(registry.token_strings(model, text))
    except ModelNotInstalled as error:
        raise Refusal(("model",), "cannot_load", str(error)) from None
    cap = registry.spec(model).max_tokens
    if n > cap:
        raise too_many_tokens(field, model, n, cap)
    return n


def count_text(model: str, text: str) -> list[str]:
    """The tokens ``model``'s trace of ``text`` will have (its tokenizer alone; ``""`` has none).

    ``FieldError`` at ``model`` (unknown, or its package missing) or at ``text`` (half a
    character, or more characters than the model's view takes).
    """
    from attnlab.models.files import ModelNotInstalled

    spec = registry.spec(model)
    check_chars(text, max_chars=spec.max_chars)
    try:
        return registry.token_strings(model, text) if text else []
    except ModelNotInstalled as error:
        raise Refusal(("model",), "cannot_load", str(error)) from None
