"""Attempts and help for the block's challenges, in ``lab.history``'s study shape.

A study is the same plain data as the notebook's (``attnlab.lab.history``)::

    {"version": 1, "active": {"challenge", "attempt"} or None, "before": [help, ...],
     "challenges": {id: {"current": n, "attempts": [{"response", "feedback", "help": [help]}]}}}

with ``help = {"kind", "detail"}`` and the same rules (each attempt keeps its
own response, feedback and help; clearing keeps help; a hint or a shown answer
is recorded on its challenge's current attempt; other help counts for the
active attempt, or ``before``; the same help is recorded once per attempt).
The challenges are the block's (``lab.block_practice``) and one more help kind
exists: ``answer``, the explicit "show the answer", which returns the answer's
words and is recorded as help.
"""

from __future__ import annotations

import copy

from attnlab.engine.errors import FieldError, Loc, field_text
from attnlab.lab import block_practice as practice

HELP_KINDS = {
    "hint": "Opened hint {detail} of {total}",
    "answer": "Showed the answer",
    "stepper": "Visited the block stepper: step {detail} of 8",
    "playback": "Watched the block playback",
    "python": "Opened the block's Python",
    "explorer": "Opened a head's row in the explorer",
}
ACTIONS = ("open", "submit", "clear", "retry", "goto", "help")
MAX_ATTEMPTS = 50
MAX_HELP = 200
MAX_DETAIL = 8


def new_study() -> dict:
    return {"version": 1, "active": None, "before": [], "challenges": {}}


def _help(x: object, loc: Loc, kind_field: str = "kind") -> dict:
    field = field_text(loc)
    if not isinstance(x, dict) or x.get("kind") not in HELP_KINDS:
        raise FieldError((*loc, kind_field), f"{field}.{kind_field} must be one of {', '.join(HELP_KINDS)}")
    detail = x.get("detail")
    if detail is not None and (isinstance(detail, bool) or not isinstance(detail, int)):
        raise FieldError((*loc, "detail"), f"{field}.detail must be a whole number or null")
    if detail is not None and not 1 <= detail <= MAX_DETAIL:
        raise FieldError((*loc, "detail"), f"{field}.detail is {detail}; it must be 1 to {MAX_DETAIL}")
    if x["kind"] in ("hint", "stepper") and detail is None:
        raise FieldError((*loc, "detail"), f"{field}.detail is needed for {x['kind']}")
    return {"kind": x["kind"], "detail": detail if x["kind"] in ("hint", "stepper") else None}


def _helps(xs: object, loc: Loc) -> list[dict]:
    if not isinstance(xs, list) or len(xs) > MAX_HELP:
        raise FieldError(loc, f"{field_text(loc)} must be a list of at most {MAX_HELP} help records")
    return [_help(h, (*loc, i)) for i, h in enumerate(xs)]


def study_from_dict(data: object) -> dict:
    """Validate a study sent back by the browser; raise ``FieldError`` located under ``study``."""
    if not isinstance(data, dict) or data.get("version") != 1:
        raise FieldError("study", "study must be an object with version 1")
    study = new_study()
    study["before"] = _helps(data.get("before", []), ("study", "before"))
    chs = data.get("challenges", {})
    if not isinstance(chs, dict):
        raise FieldError(("study", "challenges"), "study.challenges must be an object")
    for cid, entry in chs.items():
        loc = ("study", "challenges", str(cid))
        try:
            c = practice.challenge(cid)
        except FieldError as err:
            raise FieldError(loc, f"{field_text(loc)}: {err}") from None
        attempts = entry.get("attempts") if isinstance(entry, dict) else None
        if not isinstance(attempts, list) or not 1 <= len(attempts) <= MAX_ATTEMPTS:
            raise FieldError(
                (*loc, "attempts"), f"{field_text(loc)}.attempts must list 1 to {MAX_ATTEMPTS} attempts"
            )
        current = entry.get("current")
        if isinstance(current, bool) or not isinstance(current, int) or not 0 <= current < len(attempts):
            raise FieldError((*loc, "current"), f"{field_text(loc)}.current is not an attempt's index")
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
                {"response": response, "feedback": feedback, "help": _helps(a.get("help", []), (*at, "help"))}
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


def _challenge(cid: object) -> dict:
    try:
        return practice.challenge(cid)
    except FieldError as err:
        raise err.within("action") from None


def _entry(study: dict, cid: str) -> dict:
    entry = study["challenges"].get(cid)
    if entry is None:
        entry = {"current": 0, "attempts": [_attempt()]}
        study["challenges"][cid] = entry
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
            raise FieldError("action", f"action: the help record is full ({MAX_HELP} entries)")
        helps.append(record)


def apply(study: dict, action: dict, state: dict) -> tuple[dict, str | None]:
    """Return ``(new study, answer words or None)`` with ``action`` applied; ``state`` is what submit checks.

    Actions as in ``lab.history.apply``; ``help`` with ``help="answer"`` (naming its
    challenge) returns the answer's words. Errors are located under ``("action", ...)``.
    """
    study = copy.deepcopy(study)
    if not isinstance(action, dict):
        raise FieldError("action", "action must be an object")
    kind = action.get("kind")
    if kind not in ACTIONS:
        raise FieldError(("action", "kind"), f"action.kind must be one of {', '.join(ACTIONS)}")
    if kind == "help":
        record = _help({"kind": action.get("help"), "detail": action.get("detail")}, ("action",), "help")
        if record["kind"] in ("hint", "answer"):
            c = _challenge(action.get("challenge"))
            if record["kind"] == "hint" and record["detail"] > len(c["hints"]):
                raise FieldError(
                    ("action", "detail"), f"action.detail: challenge {c['id']} has {len(c['hints'])} hints"
                )
            _entry(study, c["id"])
            _record(_activate(study, c["id"])["help"], record)
            return study, practice.answer(c["id"]) if record["kind"] == "answer" else None
        if study["active"] is None:
            _record(study["before"], record)
        else:
            a = study["active"]
            _record(study["challenges"][a["challenge"]]["attempts"][a["attempt"]]["help"], record)
        return study, None
    cid = _challenge(action.get("challenge"))["id"]
    entry = _entry(study, cid)
    if kind == "retry":
        if len(entry["attempts"]) >= MAX_ATTEMPTS:
            raise FieldError("action", f"action: at most {MAX_ATTEMPTS} attempts per challenge")
        entry["attempts"].append(_attempt())
        entry["current"] = len(entry["attempts"]) - 1
    elif kind == "goto":
        n = action.get("attempt")
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < len(entry["attempts"]):
            raise FieldError(
                ("action", "attempt"), f"action.attempt must be 0 to {len(entry['attempts']) - 1}"
            )
        entry["current"] = n
    attempt = _activate(study, cid)
    if kind == "submit":
        response = action.get("response")
        try:
            attempt["feedback"] = practice.check(cid, state, response)
        except FieldError as err:
            raise (err if err.loc and err.loc[0] == "block" else err.within("action")) from None
        attempt["response"] = response
    elif kind == "clear":
        attempt["response"] = None
        attempt["feedback"] = None
    return study, None


def help_label(record: dict, challenge_id: str | None = None) -> str:
    total = len(practice.challenge(challenge_id)["hints"]) if record["kind"] == "hint" else 0
    return HELP_KINDS[record["kind"]].format(detail=record["detail"], total=total)


def history(study: dict) -> list[dict]:
    """Return the help used, grouped as ``lab.history.history`` does (block challenges' order)."""
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
