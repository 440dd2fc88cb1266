"""Attempts and the study history for one visit.

The browser holds the study (it lives for one visit: reloading clears it) and
sends it with each action; this module applies the action and returns the new
study, so the rules live in one tested place. A study is plain data::

    {"version": 1,
     "active": {"challenge": "equal-ac", "attempt": 0} or None,
     "before": [help, ...],              # help used before any attempt
     "challenges": {"equal-ac": {"current": 0, "attempts": [
         {"response": ..., "feedback": {"met": ..., "words": ...} or None,
          "help": [help, ...]}]}}}

with ``help = {"kind": ..., "detail": int or None}``. Rules (the page's):

- each attempt keeps its own response, feedback and help record;
- clearing a response clears its feedback and keeps its help;
- a hint is recorded on its challenge's current attempt;
- any other help (playback, stepper, the panels) is a *study detour* and
  counts as consultation for the attempt you leave: the active attempt, or
  ``before`` when no attempt is active yet;
- the same help is recorded once per attempt.

It records which help was used, not completion or learning scores.
"""

from __future__ import annotations

import copy

from attnlab.engine.errors import FieldError, Loc, field_text
from attnlab.lab import practice
from attnlab.lab.sequence import Held

HELP_KINDS = {
    "hint": "Opened hint {detail} of {total}",
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
                    and len(feedback["words"]) <= 2000
                ):
                    raise FieldError((*at, "feedback"), f"{field_text(at)}.feedback is malformed")
                feedback = {"met": feedback["met"], "words": feedback["words"]}
            clean.append(
                {
                    "response": response,
                    "feedback": feedback,
                    "help": _helps(a.get("help", []), (*at, "help")),
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
    return {"response": None, "feedback": None, "help": []}


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
        if record["kind"] == "hint":
            c = _challenge(action.get("challenge"))
            if record["detail"] > len(c["hints"]):
                raise FieldError(
                    ("action", "detail"), f"action.detail: challenge {c['id']} has {len(c['hints'])} hints"
                )
            _entry(study, c["id"])
            _record(_activate(study, c["id"])["help"], record)
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
        attempt["response"] = response
    elif kind == "clear":
        attempt["response"] = None
        attempt["feedback"] = None
    return study


# --- the history as the page lists it --------------------------------------------


def help_label(record: dict, challenge_id: str | None = None) -> str:
    total = len(practice.challenge(challenge_id)["hints"]) if record["kind"] == "hint" else 0
    return HELP_KINDS[record["kind"]].format(detail=record["detail"], total=total)


def history(study: dict) -> list[dict]:
    """Return the help used, grouped: before any attempt, then per challenge and attempt.

    Each group is ``{"heading", "challenge", "attempt" (1-based or None), "help": [labels]}``;
    attempts without help say so. Challenges follow the page's order.
    """
    groups = []
    if study["before"]:
        groups.append(
            {
                "heading": "Before any attempt",
                "challenge": None,
                "attempt": None,
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
                    "help": [help_label(h, c["id"]) for h in a["help"]] or ["No help used"],
                }
            )
    return groups
