"""One answer for 'How is this computed?': a number's descriptor in, its program and what it says out.

:func:`program_answer` is the one lab function the routes call (and the circuits views
may call): it checks the descriptor against the text and the model (``FieldError`` at the
field), builds the program with the kind's module and returns::

    {"kind", "title", "program", "file_name", "path", "program_path", "says": {text, claims}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from attnlab.engine.errors import FieldError
from attnlab.lab.realmodel.program import (
    ablation,
    attribution,
    head,
    journey,
    lens,
    nexttoken,
    patching,
    readwrite,
    row,
)
from attnlab.lab.realmodel.program import number as n
from attnlab.lab.realmodel.program.number import Source
from attnlab.lab.realmodel.program.text import program
from attnlab.lab.realmodel.program.words import PROGRAM_PATH, path_said

# kind -> (check the descriptor's fields, build the program's steps)
KINDS = {
    "weight": (head.check_weight, head.weight),
    "head_score": (head.check_score, head.score),
    "census": (head.check_census, head.census),
    "evidence": (head.check_evidence, head.evidence),
    "row": (row.check, row.steps),
    "next": (nexttoken.check, nexttoken.steps),
    "journey": (journey.check, journey.steps),
    "ablation": (ablation.check, ablation.steps),
    "attribution": (attribution.check, attribution.steps),
    "patch": (patching.check, patching.steps),
    "lens": (lens.check, lens.steps),
    "head_qk": (readwrite.check_qk, readwrite.qk),
    "head_ov": (readwrite.check_ov, readwrite.ov),
}
# the kinds that follow the circuits' runs (SmolLM2's fast path) rather than a trace
CIRCUITS = ("ablation", "attribution", "patch", "lens", "head_qk", "head_ov")


def compiled_steps_ran() -> bool:
    """Whether attnlab's compiled steps run here, as they did in the model's worker on this machine."""
    from attnlab.models.program_steps import compiled_steps_ran as ran

    return ran()


def program_answer(src: Source, descriptor: Mapping) -> dict:
    """The program behind the number ``descriptor`` names, on ``src`` (see the folder's docstring)."""
    if descriptor.get("kind") is None:
        raise FieldError(("kind",), n.no_kind())
    kind = n.choice(descriptor, "kind", "", tuple(KINDS))
    check, build = KINDS[kind]
    fields = check(src, descriptor)
    if kind in CIRCUITS and src.decoder:
        src = replace(src, compiled=compiled_steps_ran())
    steps = build(src, fields)
    shown = descriptor.get("value")
    if shown is not None and (isinstance(shown, bool) or not isinstance(shown, int | float)):
        raise FieldError(("value",), n.problems.not_finite(shown))
    return {
        "kind": kind,
        "title": f"{steps.what}, in {src.title}",
        "program": program(src, steps, shown=None if shown is None else float(shown)),
        "file_name": steps.name,
        "path": src.path,
        "program_path": PROGRAM_PATH,
        "says": path_said(src.path),
    }
