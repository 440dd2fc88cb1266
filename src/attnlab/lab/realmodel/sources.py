"""Where models come from, in words: why a model on disk is not offered, what one found is, its chat form.

``attnlab.models.discover`` finds models and gives each file it cannot offer a typed reason
(``MissingShard``, ``UnknownFamily``, ``Truncated``…); :func:`why` words a reason, naming the
file and the numbers it is about, and :func:`found` one line per model found. The chat words
(:func:`no_chat`, :func:`template_refused`) are about what a model's files carry.

Each sentence returns with :func:`claims`, the facts it states (file names, byte counts,
family names), so a test checks the words against the reason they came from. Numbers are
printed by :mod:`attnlab.lab.numbers`. The lab imports nothing of ``models``: a reason is read
by its ``kind`` and fields.
"""

from __future__ import annotations

from typing import Any

from attnlab.lab import numbers
from attnlab.lab.said import said

# What a file that is not what its name says got wrong (discover's BadFile.problem).
_BAD_FILE = {
    "bad_json": "is not a JSON object",
    "bad_header": "has a header attnlab cannot read",
    "bad_magic": "does not start with GGUF's magic bytes",
    "bad_version": "is a GGUF version attnlab does not read (it reads 2 and 3)",
    "bad_tensor": "lists a tensor whose type, shape or size does not fit",
    "unreadable": "cannot be read",
}


def why(reason: Any) -> str:
    """Why a model on disk is skipped, from a ``discover`` reason (``reason.kind`` and its fields)."""
    kind = reason.kind
    if kind == "missing_shard":
        return f"{reason.index} lists weights in {reason.shard}, which is not there: an unfinished download."
    if kind == "missing_tensor":
        return f"{reason.shard} lacks {reason.tensor}, which the index puts there: the shard is damaged."
    if kind == "unknown_family":
        named = f"its family, {reason.family}," if reason.family else "its files name no family, which"
        return f"{named} is not one attnlab runs; it runs {', '.join(reason.known)}."
    if kind == "truncated":
        return (
            f"{reason.file} is cut short: it has {numbers.plural(reason.size, 'byte')} and its header "
            f"needs at least {numbers.plural(reason.needed, 'byte')}."
        )
    if kind == "dangling_link":
        return f"{reason.file} links to {reason.target}, which is not there: the download did not finish."
    if kind == "no_tokenizer":
        return "it has no tokenizer (tokenizer.json, or a GGUF's tokenizer.ggml.model)."
    if kind == "unread_tokenizer":
        return (
            f"its tokenizer is of the kind {reason.tokenizer}, which attnlab does not read; "
            f"it reads {', '.join(reason.known)}."
        )
    if kind == "no_config":
        return "it has safetensors weights but no config.json to say what model they are."
    if kind == "no_safetensors":
        if reason.files:
            return f"its weights are {', '.join(reason.files)}; attnlab reads safetensors weights only."
        return "config.json is there but no weights are."
    if kind == "bad_file":
        detail = f" ({reason.detail})" if reason.detail else ""
        return f"{reason.file} {_BAD_FILE[reason.problem]}{detail}."
    raise ValueError(f"no words for the reason {kind!r}")


def claims(reason: Any) -> dict[str, str]:
    """The facts :func:`why` states about ``reason``, as they appear in its sentence."""
    facts = {
        name: value
        for name in ("file", "shard", "index", "tensor", "target", "family", "tokenizer", "detail")
        if isinstance(value := getattr(reason, name, None), str) and value
    }
    for name in ("size", "needed"):
        value = getattr(reason, name, None)
        if isinstance(value, int):
            facts[name] = numbers.plural(value, "byte")
    for name in ("known", "files"):
        value = getattr(reason, name, None)
        if value:
            facts[name] = ", ".join(value)
    return facts


def skipped(name: str, reason: Any) -> str:
    """One skipped model: its name, then :func:`why`."""
    return f"{name} is skipped: {why(reason)}"


def found(name: str, family: str, parameters: int, dtype: str, chat: bool) -> str:
    """One model found: ``SmolLM2-135M: llama, 134,515,008 parameters, bfloat16, chat``."""
    text = f"{name}: {family}, {numbers.plural(parameters, 'parameter')}, {dtype}"
    return text + ", chat" if chat else text


def unreadable(path: str, reason: Any) -> str:
    """A model on disk whose files cannot be read (a refusal of ``sources.unreadable``): the path, then
    :func:`why`."""
    return f"{path} cannot be opened: {why(reason)}"


# -- the models on offer: ``attnlab models`` and the page's picker ------------------------------------

MODELS_DIR_HELP = ("a folder of models to search too, besides the Hugging Face cache: folders with "
                   "config.json, *.safetensors and tokenizer.json, and .gguf files (also ATTNLAB_MODELS_DIR)")
MODELS_HELP = {
    "command": "list the models attnlab can open here (shipped, and found on this computer) and the files "
    "skipped, with why",
    "--json": "the list as JSON: each model's name, family, parameters, dtype, chat and origin, each skipped "
    "file's why",
}

# Where a model comes from (the registry's ``origin``), as the list says it.
ORIGINS = {
    "shipped": "shipped with attnlab",
    "hf-cache": "in the Hugging Face cache",
    "models-dir": "in the models folder",
    "path": "from its path",
    "registered": "registered",
}
PLACES = {"hf-cache": "the Hugging Face cache", "models-dir": "the models folder"}
GROUPS = {"shipped": "Shipped with attnlab", "found": "Found on this computer"}


def model_line(*, name: str, family: str, parameters: int | None, dtype: str | None, chat: bool,
               origin: str) -> dict:  # fmt: skip
    """One model on offer: its name, family, parameters, dtype or quantisation, chat, and where it is from
    (``parameters`` and ``dtype`` ``None``: not read)."""
    parts = [family]
    if parameters is not None:
        parts.append(numbers.plural(parameters, "parameter"))
    if dtype:
        parts.append(dtype)
    if chat:
        parts.append("chat")
    text = f"{name}: {', '.join(parts)} ({ORIGINS.get(origin, origin)})"
    return said(text, name=name, family=family, parameters=parameters, dtype=dtype, chat=chat, origin=origin)


def not_installed_line(name: str, message: str) -> dict:
    """A shipped model whose package is missing: its name, then how to install it."""
    return said(f"{name}: not installed. {message}", name=name, installed=False)


def option(*, name: str, title: str, family: str, parameters: int | None, dtype: str | None) -> str:
    """A model as the page's picker offers it: a shipped model by its title, a found one by its name,
    family, parameters and dtype."""
    if parameters is None:
        return title
    return f"{name} ({family}, {numbers.plural(parameters, 'parameter')}, {dtype})"


def skipped_line(name: str, reason: Any) -> dict:
    """:func:`skipped` with its claims (:func:`claims`)."""
    return said(skipped(name, reason), name=name, kind=reason.kind, **claims(reason))


def skipped_summary(n: int) -> str:
    """The heading of the skipped files' list."""
    return f"{numbers.plural(n, 'file')} that look{'s' if n == 1 else ''} like a model skipped"


def searched(places) -> dict:
    """Where discovery looked: ``places`` is ``[(source, path), ...]``."""
    where = "; ".join(f"{PLACES.get(source, source)}, {path}" for source, path in places)
    return said(f"Searched {where}. Nothing is downloaded.", places=[str(path) for _, path in places])


def listing_heading(n_models: int, n_skipped: int) -> str:
    """``attnlab models``' first line."""
    skipped_part = f"; {numbers.plural(n_skipped, 'file')} skipped" if n_skipped else ""
    return f"{numbers.plural(n_models, 'model')} attnlab can open{skipped_part}:"


def no_chat_choice(title: str) -> str:
    """The page's note where the chosen model has no chat template: it has no chat choice."""
    return no_chat(title, "none")


# -- what a model's files carry --------------------------------------------------------------------


def no_chat(title: str, reason: str, detail: str | None = None, line: int | None = None) -> str:
    """A model without a chat choice: its files carry no template (``reason`` "none"), or one that does
    not compile ("unreadable", with Jinja's ``detail`` at ``line``)."""
    if reason == "none":
        return f"{title} has no chat template, so it has no chat: it continues the text you give it."
    where = f" (line {line})" if line is not None else ""
    return f"{title}'s chat template does not compile{where}: {detail}. It continues text instead."


def template_refused(detail: str) -> str:
    """A conversation the model's chat template refuses (its ``raise_exception``), with its message."""
    return f"is refused by the model's chat template: {detail}"
