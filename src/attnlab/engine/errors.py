"""``FieldError``: a ``ValueError`` that knows which input field it is about.

Validators in the engine, the lab and the models raise it with the field's
location, ``("keys", 2, 0)`` for ``keys[2][0]``, and the *problem*: what is
wrong with that field, in words that never name it (``"must be at most
1,000,000"``, ``"is NaN; every number must be finite"``). The field is named
only where the error is shown: ``str(error)`` names it as the engine's caller
wrote it (``keys[2][0] must be ...``, :func:`field_text`); the web API names it
as the page labels the control (``attnlab.lab.fields``). A problem that
mentions another field writes ``{name}`` and passes that field's location as
``refs`` (``FieldError(("keys", 2), "has 3 coordinates; {first} has 2",
first=("keys", 0))``), so both namings reach it too.

A location is relative to what the raising function was given: ``trace_query``
says ``("q",)``; the lab, which holds several queries, re-locates that with
:meth:`FieldError.within` (the problem stays as it is). Errors in *derived*
numbers are located at the input a person controls (overflowing scores at
``q``, an overflowing output at ``values``), never at an output field.
"""

from __future__ import annotations

from collections.abc import Callable

Loc = tuple[str | int, ...]


def field_text(loc: Loc) -> str:
    """Write a location like ``("values", 1, 0)`` as ``values[1][0]`` (``()`` as ``input``)."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text or "input"


def describe(loc: Loc, problem: str, refs: dict[str, Loc] | None = None,
             name: Callable[[Loc], str] = field_text) -> str:
    """Write an error as one sentence: ``name(loc)``, then the problem with each ``{ref}`` named.

    ``describe(("values", 1, 1), "must be at most 1,000,000")`` is
    ``"values[1][1] must be at most 1,000,000"``; the page passes its own ``name``.
    """
    text = problem
    for key, ref in (refs or {}).items():
        text = text.replace("{" + key + "}", name(ref))
    return f"{name(loc)} {text}"


def relocate(message: str, old: Loc, new: Loc) -> str:
    """Rewrite a message that starts with field ``old`` to start with field ``new``.

    For messages written before problems and fields were separate data; a
    :class:`FieldError` needs none of this (:meth:`FieldError.within`).
    ``"q[1] is NaN; ..."`` at ``("q", 1)`` becomes ``"edit.q[1] is NaN; ..."`` at
    ``("edit", "q", 1)``. A message that does not start with ``old`` (or that
    already starts with ``new``) is returned unchanged.
    """
    new_text = field_text(new)
    if not old or _starts_with_field(message, new_text):
        return message
    old_text = field_text(old)
    if _starts_with_field(message, old_text):
        return new_text + message[len(old_text) :]
    return message


def _starts_with_field(message: str, field: str) -> bool:
    # "q" must not match "queries" or "q[0]": the field ends where a name or index would go on.
    if not message.startswith(field):
        return False
    rest = message[len(field) : len(field) + 1]
    return not (rest.isalnum() or rest in ("_", "[", "."))


def _loc(loc: Loc | str) -> Loc:
    return (loc,) if isinstance(loc, str) else tuple(loc)


class FieldError(ValueError):
    """A bad value in one input field: where (``loc``) and what is wrong (``problem``), apart.

    ``loc`` is the field's location (names and indices, outermost first);
    ``problem`` says what is wrong without naming the field, and may name other
    fields as ``{key}`` with their locations in ``refs``; ``str(error)`` is the
    sentence :func:`describe` writes (``values[1][1] must be at most 1,000,000``),
    for the CLI and the engine's own callers. ``type`` is the kind of problem an
    API reports; subclasses refine it and keep the ``(loc, problem, **refs)``
    signature, which :meth:`within` relies on.
    """

    type = "value_error"

    def __init__(self, loc: Loc | str, problem: str, **refs: Loc | str) -> None:
        self.loc: Loc = _loc(loc)
        self.problem = problem
        self.refs: dict[str, Loc] = {key: _loc(ref) for key, ref in refs.items()}
        super().__init__(describe(self.loc, problem, self.refs))

    @property
    def field(self) -> str:
        return field_text(self.loc)

    def words(self, name: Callable[[Loc], str]) -> str:
        """The sentence with every field named by ``name`` (the page's words for a location)."""
        return describe(self.loc, self.problem, self.refs, name)

    def within(self, *prefix: str | int) -> FieldError:
        """Return the same error located inside ``prefix`` (same class and problem)."""
        return self.rebased((), prefix)

    def rebased(self, old: Loc, new: Loc) -> FieldError:
        """Return the same error with the location prefix ``old`` replaced by ``new`` (refs too)."""
        n = len(old)

        def move(loc: Loc) -> Loc:
            return (*new, *loc[n:]) if loc[:n] == tuple(old) else loc

        refs = {key: move(ref) for key, ref in self.refs.items()}
        return type(self)(move(self.loc), self.problem, **refs)
