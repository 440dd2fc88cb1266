"""Class names, nicknames and the aliases shown on a projector.

A class name names its file (``<name>.sqlite3``): 1 to 40 of a-z, 0-9, ``-`` and
``_``, starting with a letter or digit. A nickname is what a learner types to join:
normalised (NFC, spaces trimmed and runs of spaces made one), 1 to
``MAX_NICKNAME`` characters, each a letter, a digit, a space or one of ``- _ . '``
(so no markup, no control or invisible characters, no emoji). Two nicknames are the
same when they fold alike (NFKC, then case-folded): "Ada" and "ADA" are one
nickname. Errors are ``FieldError``s at ``nickname`` or ``name`` whose problem never
repeats the input.

An alias is "Learner n", n the learner's place in the order of joining: stable for
the class's whole life. No nickname reads like an alias: "Learner 3" is refused as
a nickname, so an anonymised screen can never show someone's real name as another's
alias.
"""

from __future__ import annotations

import re
import unicodedata

from attnlab.engine.errors import FieldError

MAX_NICKNAME = 24
MAX_CLASS_NAME = 40
PUNCTUATION = "-_.'"
_CLASS_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
ALIAS = "Learner {number}"
_LIKE_ALIAS = re.compile(r"^learner ?[0-9]+$")


def nickname(text: str) -> tuple[str, str]:
    """Return ``(nickname as shown, nickname as compared)`` or raise ``FieldError`` at ``nickname``."""
    shown = " ".join(unicodedata.normalize("NFC", text).split())
    if not shown:
        raise FieldError("nickname", "is empty: type the name your class will know you by")
    if len(shown) > MAX_NICKNAME:
        raise FieldError("nickname", f"has {len(shown)} characters; it may have at most {MAX_NICKNAME}")
    for i, ch in enumerate(shown, start=1):
        kind = unicodedata.category(ch)
        if not (kind[0] in "LM" or kind == "Nd" or ch == " " or ch in PUNCTUATION):
            raise FieldError(
                "nickname",
                f"may hold only letters, digits, spaces and {' '.join(PUNCTUATION)}; "
                f"character {i} is not one",
            )
    if unicodedata.category(shown[0])[0] == "M":
        raise FieldError("nickname", "must start with a letter or a digit")
    if _LIKE_ALIAS.match(folded(shown)):
        raise FieldError("nickname", "reads like the names the teacher's screen gives learners; pick another")
    return shown, folded(shown)


def folded(text: str) -> str:
    """How a nickname is compared with the others: NFKC, case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


def taken() -> str:
    """The problem with a nickname another learner of the class already has (its own words)."""
    return "is already taken in this class: add an initial or a number to make it yours"


def class_name(text: str) -> str:
    """Return the class name, or raise ``FieldError`` at ``name``."""
    if not _CLASS_NAME.match(text):
        raise FieldError(
            "name",
            f"must be 1 to {MAX_CLASS_NAME} of a-z, 0-9, - and _, starting with a letter or a digit",
        )
    return text


def alias(number: int) -> str:
    """The learner's stable alias on a projector: "Learner 3" for the third to join."""
    return ALIAS.format(number=number)
