"""A sentence whose numbers are marked for "How is this computed?": its text, its claims and its pieces.

``marked(*parts, **claims)`` puts a sentence together from strings and numbers (:func:`number`: a
number as the sentence prints it, ``display``, with its descriptor ``how`` and the value the
page holds) and answers ``said(text, **claims)`` plus ``pieces``: the parts in order, each
string as it is and each number as ``{"display", "how", "value"}``. The page places the
pieces one after the other (``js/circuits/place.js``), a number as a marked span, so it
searches no text for a number and joins no string: the pieces' texts, joined, are ``text``.

A number without a program of its own (``how`` None) is placed as plain text.
"""

from __future__ import annotations

from attnlab.lab.said import said


def number(display: str, how: dict | None, value: float | None) -> dict:
    """A number as a sentence prints it, with its descriptor (None: no program) and its value."""
    return {"display": display, "how": how, "value": None if value is None else float(value)}


def joined(parts: list) -> str:
    """The text of ``parts``: strings as they are, numbers as displayed."""
    return "".join(p if isinstance(p, str) else p["display"] for p in parts)


def pieces(parts: list) -> list:
    """``parts`` with neighbouring strings joined, a number without a program made a string."""
    out: list = []
    for p in parts:
        piece = p if isinstance(p, str) or p["how"] is not None else p["display"]
        if isinstance(piece, str) and out and isinstance(out[-1], str):
            out[-1] += piece
        elif piece != "":
            out.append(piece)
    return out


def marked(*parts, **claims) -> dict:
    """A sentence from ``parts`` (strings and :func:`number` dicts): ``{"text", "claims", "pieces"}``."""
    return said(joined(list(parts)), **claims) | {"pieces": pieces(list(parts))}
