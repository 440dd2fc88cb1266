"""Attempts and help for the block's challenges, in ``lab.history``'s study shape.

A study is the same plain data as the notebook's (``attnlab.lab.notebook.history``)::

    {"version": 1, "active": {"challenge", "attempt"} or None, "before": [help, ...],
     "challenges": {id: {"current": n, "attempts": [{"response", "feedback", "help": [help]}]}}}

with ``help = {"kind", "detail"}`` and the same rules, kept in one place
(``lab.study``): each attempt keeps its own response, feedback and help;
clearing keeps help; a hint or a shown answer is recorded on its challenge's
current attempt; other help counts for the active attempt, or ``before``; the
same help is recorded once per attempt. The challenges are the block's
(``lab.block.practice``); its attempts keep no checks, and ``answer``, the
explicit "show the answer", returns the answer's words and is recorded as help.
"""

from __future__ import annotations

from attnlab.lab.block import practice
from attnlab.lab.block.words import STEP_IDS
from attnlab.lab.study import ACTIONS, MAX_ATTEMPTS, MAX_HELP, StudyRules, new_study

__all__ = [
    "ACTIONS",
    "HELP_KINDS",
    "MAX_ATTEMPTS",
    "MAX_DETAIL",
    "MAX_HELP",
    "RULES",
    "apply",
    "help_label",
    "history",
    "new_study",
    "study_from_dict",
]

HELP_KINDS = {
    "hint": "Opened hint {detail} of {total}",
    "answer": "Showed the answer",
    "stepper": "Visited the block stepper: step {detail} of " + str(len(STEP_IDS)),
    "playback": "Watched the block playback",
    "python": "Opened the block's Python",
    "explorer": "Opened a head's row in the explorer",
}
MAX_DETAIL = len(STEP_IDS)  # the largest detail: a stepper step (a hint is at most 3)
RULES = StudyRules(
    challenges=practice.CHALLENGES, help_kinds=HELP_KINDS, max_detail=MAX_DETAIL, state_field="block"
)
study_from_dict = RULES.from_dict
help_label = RULES.help_label
history = RULES.history  # [{"heading", "challenge", "attempt", "help": [labels]}], the block's order


def apply(study: dict, action: dict, state: dict) -> tuple[dict, str | None]:
    """Return ``(new study, answer words or None)`` with ``action`` applied; ``state`` is what submit checks.

    Actions as in ``lab.history.apply``; ``help`` with ``help="answer"`` (naming its
    challenge) returns the answer's words. Errors are located under ``("action", ...)``,
    a bad block field under ``("block", ...)``.
    """
    return RULES.apply(
        study, action, lambda cid, response: practice.check(cid, state, response), practice.answer
    )
