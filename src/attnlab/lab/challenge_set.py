"""A set of practice challenges kept as data, and the typed responses they take.

The notebook's challenges (``lab/data/practice.json``) and the block's
(``lab/data/block_practice.json``) share one shape: an object with ``title``,
``note`` and ``challenges``, each challenge ``{"id", "title", "prompt",
"response", "hints", ...}``, where ``response`` is ``None`` (the goal is the
state itself), a choice ``{"type": "choice", "label", "options": [{"id",
"text"}]}`` or a list of numbers ``{"type": ..., "label", "size"}``. A
challenge may carry its ``answer`` words: the page gets them only on request,
so :meth:`ChallengeSet.listed` leaves them out.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources

from attnlab.engine.errors import FieldError


@cache
def _read(name: str) -> dict:
    return json.loads(resources.files("attnlab.lab").joinpath("data", name).read_text("utf-8"))


@dataclass(frozen=True)
class ChallengeSet:
    """The challenges of one data file under ``lab/data/``, read once."""

    data_file: str

    def data(self) -> dict:
        return _read(self.data_file)

    def listed(self) -> list[dict]:
        """Every challenge as the page shows it: copies, with any answer left out."""
        return [{k: v for k, v in c.items() if k != "answer"} for c in self.data()["challenges"]]

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
