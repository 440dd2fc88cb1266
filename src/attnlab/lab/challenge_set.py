"""A set of practice challenges kept as data, and the typed responses they take.

The notebook's challenges (``lab/data/practice.json``) and the block's
(``lab/data/block_practice.json``) share one shape: an object with ``title``,
``note`` and ``challenges``, each challenge ``{"id", "title", "prompt",
"response", "hints", ...}``, where ``response`` is ``None`` (the goal is the
state itself), a choice ``{"type": "choice", "label", "options": [{"id",
"text"}]}`` or a list of numbers ``{"type": ..., "label", "size"}``. A
challenge may carry its ``answer`` words: the page gets them only on request,
so :meth:`ChallengeSet.listed` leaves them out.

A check answers with :func:`feedback`: ``{"met", "verdict", "words"}``, where
``verdict`` ("✓ Goal met." or "Not yet.") and ``words`` are shown sentences
(``lab.said``) whose claims state what they assert (``{"met": False,
"target": "B", "share": 0.41, "goal": 0.9}``), so a property test can hold the
words to the numbers. Listed challenges carry the words their panel shows
before any attempt (:func:`panel`) and the words a form refuses with: for a
choice, nothing picked; for numbers, each field's name and the message for a
field that is not a number.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

from attnlab.engine.errors import FieldError
from attnlab.lab.said import said

VERDICTS = {True: "✓ Goal met.", False: "Not yet."}
NOT_PICKED = "Pick one answer first."  # a choice checked with nothing picked
# The buttons of a challenge's panel on every page (the notebook's, the block's, the labs'), with
# the names a screen reader gives the moves between attempts.
PANEL_BUTTONS = {
    "check": "Check",
    "clear": "Clear response",
    "retry": "New attempt",
    "previous": "‹ Previous",
    "previous_label": "Previous attempt",
    "next": "Next ›",
    "next_label": "Next attempt",
}


def verdict(met: bool) -> dict:
    """The sentence in front of a check's words: "✓ Goal met." or "Not yet."."""
    return said(VERDICTS[met], met=met)


def feedback(met: bool, text: str, **claims) -> dict:
    """A check's answer: whether the goal is met, its verdict, and ``text`` asserting ``met``, ``claims``."""
    return {"met": met, "verdict": verdict(met), "words": said(text, met=met, **claims)}


def panel(c: dict, attempt: int, attempts: int, hints_shown: int) -> dict:
    """The words of challenge ``c``'s panel on attempt ``attempt`` of ``attempts`` (1-based).

    ``attempt``: "Attempt 2 of 3"; ``hint``: the next hint's button, "Show hint 2 of 3",
    or None when every hint is shown.
    """
    total = len(c["hints"])
    hint = None
    if hints_shown < total:
        hint = said(f"Show hint {hints_shown + 1} of {total}", hint=hints_shown + 1, hints=total)
    return {
        "attempt": said(f"Attempt {attempt} of {attempts}", attempt=attempt, attempts=attempts),
        "hint": hint,
    }


def _fields(form: dict) -> list[dict]:
    """A form of numbers' fields: each one's name, its label for a screen reader and its refusal."""
    out = []
    for name in form["names"]:
        label = f"{form['label']}: {name}"
        out.append({"name": name, "label": label, "not_a_number": f"“{label}” needs a number."})
    return out


def _filled(node, fills: dict):
    """``node`` with every string's ``{name}`` replaced by ``fills[name]``."""
    if isinstance(node, str):
        return node.format_map(fills)
    if isinstance(node, list):
        return [_filled(x, fills) for x in node]
    if isinstance(node, dict):
        return {k: _filled(v, fills) for k, v in node.items()}
    return node


@cache
def _read(name: str, fills: tuple[tuple[str, str], ...] = ()) -> dict:
    data = json.loads(resources.files("attnlab.lab").joinpath("data", name).read_text("utf-8"))
    return _filled(data, dict(fills)) if fills else data


@dataclass(frozen=True)
class ChallengeSet:
    """The challenges of one data file under ``lab/data/``, read once.

    ``fills`` are ``(name, text)`` pairs written into the file's ``{name}`` placeholders
    when it is read: numbers the words quote from an example declared elsewhere (the
    worked example's keys, ``lab.explorer.examples``), so they are declared once.
    """

    data_file: str
    fills: tuple[tuple[str, str], ...] = ()

    def data(self) -> dict:
        return _read(self.data_file, self.fills)

    def listed(self) -> list[dict]:
        """Every challenge as the page shows it: copies, with any answer left out, with the words
        of its panel before any attempt (``panel``) and of its form (``not_picked``, ``fields``)."""
        out = []
        for c in self.data()["challenges"]:
            shown = {k: v for k, v in c.items() if k != "answer"}
            shown["panel"] = panel(c, 1, 1, 0)
            form = c["response"]
            if form is not None and form["type"] == "choice":
                shown["response"] = form | {"not_picked": NOT_PICKED}
            elif form is not None:
                shown["response"] = form | {"fields": _fields(form)}
            out.append(shown)
        return out

    def find(self, challenge_id: object) -> dict:
        """Return challenge ``challenge_id`` (with its answer) or raise ``FieldError`` at ``challenge``."""
        for c in self.data()["challenges"]:
            if c["id"] == challenge_id:
                return c
        ids = ", ".join(c["id"] for c in self.data()["challenges"])
        raise FieldError("challenge", f"{challenge_id!r:.40} is not a challenge; the challenges are {ids}")


def validate_response(c: dict, response: object) -> object:
    """Return ``response`` checked against challenge ``c``'s form, or raise ``FieldError``.

    Errors are located at ``("response",)`` or ``("response", j)``; numbers come back as floats.
    """
    form = c["response"]
    if form is None:
        if response is not None:
            raise FieldError("response", f"is not needed: challenge {c['id']} takes no typed response")
        return None
    if response is None:
        raise FieldError("response", f"is missing: challenge {c['id']} needs {form['label'].lower()}")
    if form["type"] == "choice":
        ids = [o["id"] for o in form["options"]]
        if response not in ids:
            raise FieldError("response", f"must be one of {', '.join(ids)}")
        return response
    size = form["size"]
    if not isinstance(response, list) or len(response) != size:
        raise FieldError("response", f"must be a list of {size} numbers")
    out = []
    for j, x in enumerate(response):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise FieldError(("response", j), "must be a finite number")
        out.append(float(x))
    return out
