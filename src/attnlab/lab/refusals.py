"""The words of the model layer's refusals: each kind of :class:`attnlab.models.errors.Refusal` worded here.

``models/`` raises typed refusals carrying facts and never imports the lab; this module gives
it the lab's sentences, one wording function per kind, registered when ``attnlab`` is imported
(``attnlab/__init__.py`` imports this module). A kind is a wording function's name: bare for
the Real model view's problems (:mod:`attnlab.lab.realmodel.problems`), prefixed by its module
for the others ("circuits.", "opening.", "weightfiles.", "sources.").
"""

from __future__ import annotations

import inspect

from attnlab.lab import fields
from attnlab.lab.circuits import problems as circuits
from attnlab.lab.realmodel import opening, problems, sources, weightfiles
from attnlab.models import errors


def _functions(module, prefix: str = "") -> dict:
    return {prefix + name: fn for name, fn in inspect.getmembers(module, inspect.isfunction)
            if fn.__module__ == module.__name__ and not name.startswith("_")}  # fmt: skip


KINDS = {
    **_functions(problems),
    **_functions(circuits, "circuits."),
    **_functions(opening, "opening."),
    **_functions(weightfiles, "weightfiles."),
    **_functions(sources, "sources."),
    "half_character": fields.half_character,
}
errors.words(**KINDS)
