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
"""

from __future__ import annotations

import copy

from attnlab.engine.errors import FieldError, Loc, field_text
from attnlab.lab import numbers as fmt
from attnlab.lab import practice
from attnlab.lab.sequence import Held

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
ACTIONS = ("open", "submit", "clear", "retry", "goto", "help")
MAX_ATTEMPTS = 50
MAX_HELP = 200
MAX_CHECKS = 100
MAX_WORDS = 2000


def new_study() -> dict:
    return {"version": 1, "active": None, "before": [], "challenges": {}}


# --- validation ---------------------------------------------------------------
# Errors are FieldErrors located in the request the page sends: ("study", "before", 0, "kind"),
# ("action", "response", 2); their messages start with that field.


def _help(x: object, loc: Loc, kind_field: str = "kind") -> dict:
    field = field_text(loc)
    if not isinstance(x, dict) or x.get("kind") not in HELP_KINDS:
        raise FieldError((*loc, kind_field), f"{field}.{kind_field} must be one of {', '.join(HELP_KINDS)}")
    detail = x.get("detail")
    if detail is not None and (isinstance(detail, bool) or not isinstance(detail, int)):
        raise FieldError((*loc, "detail"), f"{field}.detail must be a whole number or null")
    if detail is not None and not 1 <= detail <= 4:
        raise FieldError((*loc, "detail"), f"{field}.detail is {detail}; it must be 1 to 4")
    if x["kind"] in ("hint", "stepper") and detail is None:
        raise FieldError((*loc, "detail"), f"{field}.detail is needed for {x['kind']}")
    return {"kind": x["kind"], "detail": detail}


def _helps(xs: object, loc: Loc) -> list[dict]:
    if not isinstance(xs, list) or len(xs) > MAX_HELP:
        raise FieldError(loc, f"{field_text(loc)} must be a list of at most {MAX_HELP} help records")
    return [_help(h, (*loc, i)) for i, h in enumerate(xs)]


def _checks(c: dict, xs: object, loc: Loc) -> list[dict]:
    """Validate an attempt's checks: each ``{"response": ..., "met": bool}``."""
    if not isinstance(xs, list) or len(xs) > MAX_CHECKS:
        raise FieldError(loc, f"{field_text(loc)} must be a list of at most {MAX_CHECKS} checks")
    out = []
    for i, x in enumerate(xs):
        at = (*loc, i)
        if not isinstance(x, dict) or not isinstance(x.get("met"), bool):
            raise FieldError((*at, "met"), f"{field_text(at)}.met must be true or false")
        response = x.get("response")
        if response is not None or c["response"] is not None:
            try:
                response = practice.validate_response(c, response)
            except FieldError as err:
                raise err.within(*at) from None
        out.append({"response": response, "met": x["met"]})
    return out


def study_from_dict(data: object) -> dict:
    """Validate a study sent back by the browser; raise ``FieldError`` located at the field."""
    if not isinstance(data, dict) or data.get("version") != 1:
        raise FieldError("study", "study must be an object with version 1")
    study = new_study()
    study["before"] = _helps(data.get("before", []), ("study", "before"))
    chs = data.get("challenges", {})
    if not isinstance(chs, dict):
        raise FieldError(("study", "challenges"), "study.challenges must be an object")
    for cid, entry in chs.items():
        loc = ("study", "challenges", str(cid))
        field = field_text(loc)
        try:
            c = practice.challenge(cid)
        except FieldError as err:
            raise FieldError(loc, str(err)) from None
        attempts = entry.get("attempts") if isinstance(entry, dict) else None
        if not isinstance(attempts, list) or not 1 <= len(attempts) <= MAX_ATTEMPTS:
            raise FieldError(
                (*loc, "attempts"), f"{field}.attempts must be a list of 1 to {MAX_ATTEMPTS} attempts"
            )
        current = entry.get("current")
        if isinstance(current, bool) or not isinstance(current, int):
            raise FieldError((*loc, "current"), f"{field}.current must be a whole number")
        if not 0 <= current < len(attempts):
            raise FieldError(
                (*loc, "current"), f"{field}.current is {current}; there are {len(attempts)} attempts"
            )
        clean = []
        for n, a in enumerate(attempts):
            at = (*loc, "attempts", n)
            if not isinstance(a, dict):
                raise FieldError(at, f"{field_text(at)} must be an object")
            response = a.get("response")
            if response is not None:
                try:
                    response = practice.validate_response(c, response)
                except FieldError as err:
                    raise err.within(*at) from None
            feedback = a.get("feedback")
            if feedback is not None:
                if not (
                    isinstance(feedback, dict)
                    and isinstance(feedback.get("met"), bool)
                    and isinstance(feedback.get("words"), str)
                    and len(feedback["words"]) <= MAX_WORDS
                    and isinstance(feedback.get("load", False), bool)
                ):
                    raise FieldError((*at, "feedback"), f"{field_text(at)}.feedback is malformed")
                feedback = {
                    "met": feedback["met"],
                    "words": feedback["words"],
                    "load": feedback.get("load", False),
                }
            answer = a.get("answer")
            if answer is not None and not (isinstance(answer, str) and len(answer) <= MAX_WORDS):
                raise FieldError(
                    (*at, "answer"), f"{field_text(at)}.answer must be text of at most {MAX_WORDS} characters"
                )
            clean.append(
                {
                    "response": response,
                    "feedback": feedback,
                    "help": _helps(a.get("help", []), (*at, "help")),
                    "checks": _checks(c, a.get("checks", []), (*at, "checks")),
                    "answer": answer,
                }
            )
        study["challenges"][cid] = {"current": current, "attempts": clean}
    active = data.get("active")
    if active is not None:
        if not isinstance(active, dict) or active.get("challenge") not in study["challenges"]:
            raise FieldError(("study", "active"), "study.active names no challenge with attempts")
        n = active.get("attempt")
        attempts = study["challenges"][active["challenge"]]["attempts"]
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < len(attempts):
            raise FieldError(
                ("study", "active", "attempt"), "study.active.attempt is not an attempt of that challenge"
            )
        study["active"] = {"challenge": active["challenge"], "attempt": n}
    return study


# --- actions ------------------------------------------------------------------


def _challenge(cid: object) -> dict:
    """The action's challenge, or a ``FieldError`` at ``("action", "challenge")``."""
    try:
        return practice.challenge(cid)
    except FieldError as err:
        raise err.within("action") from None


def _entry(study: dict, cid: object) -> dict:
    c = _challenge(cid)
    entry = study["challenges"].get(c["id"])
    if entry is None:
        entry = {"current": 0, "attempts": [_attempt()]}
        study["challenges"][c["id"]] = entry
    return entry


def _attempt() -> dict:
    return {"response": None, "feedback": None, "help": [], "checks": [], "answer": None}


def _activate(study: dict, cid: str) -> dict:
    entry = study["challenges"][cid]
    study["active"] = {"challenge": cid, "attempt": entry["current"]}
    return entry["attempts"][entry["current"]]


def _record(helps: list[dict], record: dict) -> None:
    if record not in helps:
        if len(helps) >= MAX_HELP:
            raise FieldError("action", f"help record is full ({MAX_HELP} entries)")
        helps.append(record)


def apply(study: dict, action: dict, held: Held) -> dict:
    """Return a new study with ``action`` applied; ``held`` is what ``submit`` checks.

    Actions: ``open`` (challenge), ``submit`` (challenge, response), ``clear``
    (challenge), ``retry`` (challenge), ``goto`` (challenge, attempt: 0-based),
    ``help`` (help: one of ``HELP_KINDS``, detail; a hint also names its challenge).
    Errors are located under ``("action", ...)``.
    """
    study = copy.deepcopy(study)
    if not isinstance(action, dict):
        raise FieldError("action", "action must be an object")
    kind = action.get("kind")
    if kind not in ACTIONS:
        raise FieldError(("action", "kind"), f"action.kind must be one of {', '.join(ACTIONS)}")
    if kind == "help":
        help_ = {"kind": action.get("help"), "detail": action.get("detail")}
        record = _help(help_, ("action",), kind_field="help")
        if record["kind"] in ("hint", "answer"):
            c = _challenge(action.get("challenge"))
            if record["kind"] == "hint" and record["detail"] > len(c["hints"]):
                raise FieldError(
                    ("action", "detail"), f"action.detail: challenge {c['id']} has {len(c['hints'])} hints"
                )
            _entry(study, c["id"])
            attempt = _activate(study, c["id"])
            _record(attempt["help"], record)
            if record["kind"] == "answer":
                attempt["answer"] = practice.answer(c["id"], held)
        elif study["active"] is None:
            _record(study["before"], record)
        else:
            a = study["active"]
            _record(study["challenges"][a["challenge"]]["attempts"][a["attempt"]]["help"], record)
        return study
    entry = _entry(study, action.get("challenge"))
    cid = _challenge(action.get("challenge"))["id"]
    if kind == "retry":
        if len(entry["attempts"]) >= MAX_ATTEMPTS:
            raise FieldError("action", f"action: at most {MAX_ATTEMPTS} attempts per challenge")
        entry["attempts"].append(_attempt())
        entry["current"] = len(entry["attempts"]) - 1
    elif kind == "goto":
        n = action.get("attempt")
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < len(entry["attempts"]):
            raise FieldError(
                ("action", "attempt"),
                f"action.attempt must be 0 to {len(entry['attempts']) - 1} for challenge {cid}",
            )
        entry["current"] = n
    attempt = _activate(study, cid)
    if kind == "submit":
        response = action.get("response")
        try:
            attempt["feedback"] = practice.check(cid, held, response)
        except FieldError as err:  # the response's error, e.g. action.response[2]
            raise err.within("action") from None
        if len(attempt["checks"]) >= MAX_CHECKS:
            raise FieldError("action", f"action: at most {MAX_CHECKS} checks per attempt")
        attempt["response"] = response
        if not attempt["feedback"]["load"]:  # a challenge the example cannot try is no check
            attempt["checks"].append({"response": response, "met": attempt["feedback"]["met"]})
    elif kind == "clear":
        attempt["response"] = None
        attempt["feedback"] = None
    return study


# --- the history as the page lists it --------------------------------------------


def help_label(record: dict, challenge_id: str | None = None) -> str:
    total = len(practice.challenge(challenge_id)["hints"]) if record["kind"] == "hint" else 0
    return HELP_KINDS[record["kind"]].format(detail=record["detail"], total=total)


def check_label(c: dict, n: int, record: dict) -> str:
    """E.g. ``Check 1 · [10, 10, 80] · not yet`` or ``Check 2 · “grows” · right``."""
    response = record["response"]
    form = c["response"]
    if response is None:
        said = "the example as it was"
    elif form["type"] == "choice":
        said = f"“{response}”"
    else:
        said = fmt.vector(response) + (" %" if form["type"] == "shares" else "")
    return f"Check {n} · {said} · {'right' if record['met'] else 'not yet'}"


def history(study: dict) -> list[dict]:
    """Return the checks and help, grouped: before any attempt, then per challenge and attempt.

    Each group is ``{"heading", "challenge", "attempt" (1-based or None), "checks":
    [{"label", "met"}], "help": [labels]}``; attempts without help say so.
    Challenges follow the page's order.
    """
    groups = []
    if study["before"]:
        groups.append(
            {
                "heading": "Before any attempt",
                "challenge": None,
                "attempt": None,
                "checks": [],
                "help": [help_label(h) for h in study["before"]],
            }
        )
    for c in practice.challenges():
        entry = study["challenges"].get(c["id"])
        if entry is None:
            continue
        for n, a in enumerate(entry["attempts"], start=1):
            groups.append(
                {
                    "heading": f"{c['title']} · attempt {n}",
                    "challenge": c["id"],
                    "attempt": n,
                    "checks": [
                        {"label": check_label(c, i, x), "met": x["met"]}
                        for i, x in enumerate(a["checks"], start=1)
                    ],
                    "help": [help_label(h, c["id"]) for h in a["help"]] or ["No help used"],
                }
            )
    return groups
