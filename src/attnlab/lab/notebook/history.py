"""Attempts and the study history for one visit.

The browser holds the study (it lives for one visit: reloading clears it) and
sends it with each action; this module applies the action and returns the new
study, so the rules live in one tested place. A study is plain data::

    {"version": 1,
     "active": {"challenge": "equal-ac", "attempt": 0} or None,
     "before": [help, ...],              # help used before any attempt
     "challenges": {"equal-ac": {"current": 0, "attempts": [
         {"response": ..., "feedback": {"met": ..., "words": ..., "load": ...} or None,
          "help": [help, ...],
          "checks": [{"response": ..., "met": bool}, ...],
          "answer": str or None}]}}}

with ``help = {"kind": ..., "detail": int or None}``. Rules (the page's):

- each attempt keeps its own response, feedback, help record and checks;
- every Check is recorded on its attempt with its response, right or wrong;
- clearing a response clears its feedback and keeps its help and checks;
- a hint, and the answer ("Show answer"), are recorded on their challenge's
  current attempt; the answer's words are kept on the attempt;
- any other help (playback, stepper, the panels) is a *study detour* and
  counts as consultation for the attempt you leave: the active attempt, or
  ``before`` when no attempt is active yet;
- the same help is recorded once per attempt.

It records the checks made and the help used, not learning scores. An export
carries the study and an import restores it (``study_from_dict`` validates it).
The one implementation is ``lab.study``; this module is the notebook's rules
for it (its help kinds, attempts that keep checks) and its public names.
"""

from __future__ import annotations

from attnlab.lab.explorer.sequence import Held
from attnlab.lab.notebook import practice
from attnlab.lab.study import (
    ACTIONS,
    MAX_ATTEMPTS,
    MAX_CHECKS,
    MAX_HELP,
    MAX_WORDS,
    StudyRules,
    check_label,
    new_study,
)

__all__ = [
    "ACTIONS", "HELP_KINDS", "MAX_ATTEMPTS", "MAX_CHECKS", "MAX_HELP", "MAX_WORDS", "RULES",
    "apply", "check_label", "help_label", "history", "new_study", "study_from_dict",
]

HELP_KINDS = {
    "hint": "Opened hint {detail} of {total}",
    "answer": "Showed the answer",
    "playback": "Watched the guided playback",
    "stepper": "Visited the stepper: step {detail} of 4",
    "every-number": "Opened “Show every number, the formula and the Python”",
    "python": "Opened “Read the same calculation in Python”",
    "precise": "Opened “Inspect precise numbers”",
    "geometry": "Opened “Inspect key and value geometry”",
    "current": "Opened “Read the current numbers”",
}
RULES = StudyRules(challenges=practice.CHALLENGES, help_kinds=HELP_KINDS, max_detail=4, checks=True)
study_from_dict = RULES.from_dict
help_label = RULES.help_label
history = RULES.history  # [{"heading", "challenge", "attempt", "checks": [{"label", "met"}], "help"}]


def apply(study: dict, action: dict, held: Held) -> dict:
    """Return a new study with ``action`` applied; ``held`` is what ``submit`` checks.

    A shown answer's words are worked out on ``held`` and kept on the attempt.
    Errors are located under ``("action", ...)``.
    """
    new, _ = RULES.apply(
        study, action, lambda cid, response: practice.check(cid, held, response),
        lambda cid: practice.answer(cid, held)["text"],
    )
    return new
