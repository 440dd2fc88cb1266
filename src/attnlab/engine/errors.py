"""``FieldError``: a ``ValueError`` that knows which input field it is about.

Validators in the engine, the lab and the models raise it with the field's
location, ``("keys", 2, 0)`` for ``keys[2][0]``, so that callers (the web API's
422 answers, the CLI) find the field without reading the message text.

A location is relative to what the raising function was given: ``trace_query``
says ``("q",)``; the lab, which holds several queries, re-locates that with
:meth:`FieldError.within` or by naming its own field. Errors in *derived*
numbers are located at the input a person controls (overflowing scores at
``q``, an overflowing output at ``values``), never at an output field.
"""

from __future__ import annotations

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


def relocate(message: str, old: Loc, new: Loc) -> str:
    """Rewrite a message that starts with field ``old`` to start with field ``new``.

    ``"q[1] is NaN; ..."`` at ``("q", 1)`` becomes ``"edit.q[1] is NaN; ..."`` at
    ``("edit", "q", 1)``. A message that does not start with ``old`` (or that
    already starts with ``new``) is returned unchanged: its location travels in
    ``loc``, and whoever shows it adds the field in front.
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


class FieldError(ValueError):
    """A bad value in one input field.

    ``loc`` is the field's location (names and indices, outermost first);
    ``str(error)`` is the message a person reads, which starts with the field
    as :func:`field_text` writes it (a derived error, located at the input to
    change, starts with the derived field instead: ``scores[0] overflows``).
    ``type`` is the kind of problem an API reports; subclasses refine it and
    keep the ``(loc, message)`` signature, which :meth:`within` relies on.
    """

    type = "value_error"

    def __init__(self, loc: Loc | str, message: str) -> None:
        super().__init__(message)
        self.loc: Loc = (loc,) if isinstance(loc, str) else tuple(loc)

    @property
    def field(self) -> str:
        return field_text(self.loc)

    def within(self, *prefix: str | int) -> FieldError:
        """Return the same error located inside ``prefix`` (same class, message re-headed)."""
        loc = (*prefix, *self.loc)
        return type(self)(loc, relocate(str(self), self.loc, loc))
