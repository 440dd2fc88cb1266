"""Practice in a connection lab: one visit's study record, kept by ``lab.study``'s rules.

Every lab's study has the same help kinds (:data:`HELP_KINDS`: a hint, the
answer, opening every number, opening the Python), and its attempts keep every
Check made, right or not yet, as the notebook's do (a teacher reading the history
sees the tries before a right one), with the last check's line as the block's.
A submit is checked on the learner's input (``values``), read like the page's
(``controls.read`` at ``("inputs", ...)``).
"""

from __future__ import annotations

from functools import cache

from attnlab.lab.connections import registry
from attnlab.lab.connections.controls import read
from attnlab.lab.study import StudyRules

HELP_KINDS = {
    "hint": "Opened hint {detail} of {total}",
    "answer": "Showed the answer",
    "numbers": "Opened every number",
    "python": "Opened the Python",
}
MAX_DETAIL = 3  # a challenge has at most three hints


@cache
def rules(name: str) -> StudyRules:
    lab = registry.lab(name)
    return StudyRules(
        challenges=lab.challenges, help_kinds=HELP_KINDS, max_detail=MAX_DETAIL, checks=True,
        state_field="inputs", last_check=True,
    )  # fmt: skip


def apply(name: str, given: dict, study: object, action: object, measured: dict | None = None) -> dict:
    """Apply ``action`` to ``study`` for lab ``name`` on input ``given``: ``{"study", "history", "answer"}``.

    ``answer`` is the answer's words when the action shows it, else None. Errors are
    ``FieldError``\\ s at ``("study", ...)``, ``("action", ...)`` or ``("inputs", ...)``.
    ``measured``: the lab's model numbers (``live.measured``), which a check may read.
    """
    lab = registry.lab(name)
    values = read(lab.controls, given, "inputs")
    r = rules(name)
    new, answer = r.apply(
        r.from_dict(study),
        action,
        lambda cid, response: lab.check_for(cid, values, response, measured),
        lambda cid: lab.challenges.find(cid)["answer"],
    )
    return {"study": new, "history": r.history(new), "answer": answer}


def history(name: str, study: object) -> list[dict]:
    """The study's history groups as the page lists them (``StudyRules.history``)."""
    r = rules(name)
    return r.history(r.from_dict(study))
