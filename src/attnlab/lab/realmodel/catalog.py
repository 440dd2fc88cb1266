"""The models on offer, one answer for every surface: the page's picker, the API, ``attnlab models``.

The registry (:mod:`attnlab.models.registry`) knows each model: the shipped ones and those
discovery found on this computer (the Hugging Face cache, a models folder). Here they become
what a person reads: :func:`listing` (every model with its picker text and its line, the files
skipped with why, where discovery looked), :func:`about` (one model as its own files describe
it: shapes, limits, chat), :func:`lines` (``attnlab models``' text, shipped models' files read
too). Words come from :mod:`.sources` and :mod:`.status`; numbers are the registry's.

The listing reads no model file: a shipped model's parameters and chat are ``None`` until
:func:`about` reads its header (its package may not be installed), a found model's are what
discovery read.
"""

from __future__ import annotations

from collections.abc import Callable

from attnlab.lab.realmodel import sources
from attnlab.lab.realmodel.status import model_note
from attnlab.lab.said import said
from attnlab.models import registry


def _group(spec) -> str:
    return "shipped" if spec.origin == "shipped" else "found"


def entry(spec, *, loaded: bool = False, path: str | None = None) -> dict:
    """One model as the listing gives it (``ModelInfo``): identity, the picker's text, its line."""
    f = spec.found
    parameters = f.parameters if f is not None else None
    dtype = f.dtype if f is not None else None
    chat = bool(f.chat) if f is not None else None
    line = sources.model_line(name=spec.name, family=spec.family, parameters=parameters, dtype=dtype,
                              chat=bool(chat), origin=spec.origin)  # fmt: skip
    return {
        "name": spec.name,
        "title": spec.title,
        "family": spec.family,
        "architecture": spec.architecture,
        "generates": spec.generates,
        "instruct": spec.instruct,
        "chat_default": spec.chat_default,
        "origin": spec.origin,
        "group": _group(spec),
        "option": sources.option(name=spec.name, title=spec.title, family=spec.family, parameters=parameters,
                                 dtype=dtype),  # fmt: skip
        "line": line,
        "parameters": parameters,
        "dtype": dtype,
        "chat": chat,
        "max_chars": spec.max_chars,
        "loaded": loaded,
        "path": path,
    }


def listing(*, loaded: Callable[[str], bool] = registry.is_loaded,
            path: Callable[[str], str | None] = lambda name: None, paths: bool = False) -> dict:  # fmt: skip
    """Every model on offer and every file skipped (``ModelsOut``'s part of it). ``loaded(name)`` and
    ``path(name)``: what the job line knows; ``paths``: name the folders searched (the CLI does, the
    page does not show a server's folders)."""
    scan = registry.scan()
    models = [entry(registry.spec(name), loaded=loaded(name), path=path(name)) for name in registry.names()]
    skipped = [sources.skipped_line(s.name, s.why) for s in scan.skipped]
    named = [(source, sources.PLACES.get(source, source)) for source, _ in scan.places]
    places = scan.places if paths else named
    return {
        "models": models,
        "skipped": skipped,
        "skipped_title": sources.skipped_summary(len(skipped)),
        "searched": sources.searched(places) if paths else _searched_here(places),
        "groups": dict(sources.GROUPS),
    }


def _searched_here(places) -> dict:
    """Where discovery looked, without the server's paths (the page's words)."""
    where = " and ".join(name for _, name in places)
    return said(f"Searched {where} on the server. Nothing is downloaded.", places=[s for s, _ in places])


def writer_of(name: str) -> str:
    """The model "Continue the text" runs when ``name`` is chosen: itself if it writes, else the first
    model that does."""
    spec = registry.spec(name)
    if spec.generates:
        return spec.name
    return registry.decoders()[0]


def about(name: str, *, loaded: bool = False, path: str | None = None) -> dict:
    """Model ``name`` as its files describe it (``ModelAbout``): shapes, limits, chat, and the model that
    writes when it is chosen. Reads its headers (a refusal at ``model`` where they cannot be read)."""
    spec = registry.spec(name)
    facts = spec.facts()
    writer = registry.spec(writer_of(name))
    writer_chat = writer.chat
    if writer.name == spec.name:
        writes = said(f"{writer.title} continues the text.", model=writer.name)
    else:
        writes = said(f"{spec.title} is an encoder and cannot write: {writer.title} continues the text.",
                      model=writer.name, chosen=spec.name)  # fmt: skip
    chat_note = None
    if not writer_chat:
        chat_note = said(sources.no_chat_choice(writer.title), model=writer.name, chat=False)
    s = facts.shapes
    return {
        "name": spec.name,
        "title": spec.title,
        "family": spec.family,
        "architecture": spec.architecture,
        "generates": spec.generates,
        "chat": facts.chat,
        "max_tokens": spec.max_tokens,
        "max_chars": spec.max_chars,
        "context": s.context,
        "n_layer": s.n_layer,
        "n_head": s.n_head,
        "n_kv_head": s.n_kv_head,
        "d_head": s.d_head,
        "kv_groups": spec.kv_groups,
        "parameters": facts.parameters,
        "dtype": facts.dtype,
        "loaded": loaded,
        "path": path,
        "note": model_note(architecture=spec.architecture, n_layer=s.n_layer, n_head=s.n_head,
                           n_kv_head=s.n_kv_head, path=path, context=s.context,
                           cap=spec.max_tokens),  # fmt: skip
        "writer": writer.name,
        "writer_title": writer.title,
        "writer_chat": writer_chat,
        "writer_note": writes,
        "chat_note": chat_note,
    }


def lines(*, fresh: bool = True) -> dict:
    """``attnlab models``: every model with its line (a shipped model's files read: its parameters, dtype
    and chat; not installed, said so), every file skipped with why, and where discovery looked (paths
    named). ``fresh``: look again (a command run is a new look)."""
    from attnlab.models.files import ModelNotInstalled

    scan = registry.scan(fresh=fresh)
    models = []
    for name in registry.names():
        spec = registry.spec(name)
        item = entry(spec)
        if spec.found is None and spec.origin == "shipped":
            try:
                facts = spec.facts()
            except ModelNotInstalled as error:
                item["line"] = sources.not_installed_line(name, str(error))
                item["installed"] = False
                models.append(item)
                continue
            item |= {"parameters": facts.parameters, "dtype": facts.dtype, "chat": facts.chat}
            item["line"] = sources.model_line(name=name, family=spec.family, parameters=facts.parameters,
                                              dtype=facts.dtype, chat=facts.chat,
                                              origin=spec.origin)  # fmt: skip
        item["installed"] = True
        item["path_on_disk"] = str(spec.path()) if spec.origin != "shipped" else None
        models.append(item)
    skipped = [sources.skipped_line(s.name, s.why) | {"path": str(s.path)} for s in scan.skipped]
    return {
        "heading": sources.listing_heading(len(models), len(skipped)),
        "models": models,
        "skipped": skipped,
        "searched": sources.searched([(source, str(path)) for source, path in scan.places]),
    }
