"""A shown sentence with the facts it asserts, so a property test can check the words.

``said(text, **claims)`` is ``{"text": ..., "claims": {...}}``: the text in the
page's words, the claims as data (``{"top": " Paris", "share": 0.77}``). JS
places ``text``; tests compare ``claims`` with the numbers the sentence is about.
"""

from __future__ import annotations


def said(text: str, **claims) -> dict:
    """Return a shown sentence with its claims: ``{"text": text, "claims": claims}``."""
    return {"text": text, "claims": claims}
