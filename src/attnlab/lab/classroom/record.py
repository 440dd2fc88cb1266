"""What a class records, read from the server's own answers to the practice routes.

The practice is checked on the server (``lab.study``): ``POST /api/notebook/study``,
``/api/block/study`` and ``/api/connections/<name>/study`` take the visit's study
and an action, and answer the new study. A class records, for a learner in it,
what that answer says happened, never what the page claims:

- ``check``: a Check of a challenge (``submit``), with the response, whether the
  goal was met, the attempt, and on the main page the query q the explorer held;
  a check the held example cannot try (``load``) is no check and is not recorded;
- ``hint``: a hint opened (which one); ``answer``: "Show answer";
- the learner's study after the action, so a reloaded page continues from it.

Nothing else of the page is recorded (drags, typing, the other help): the statement
a learner reads before joining (:func:`recorded_words`) says exactly this, and a
test holds :func:`study_event` to it.
"""

from __future__ import annotations

from attnlab.engine.errors import FieldError
from attnlab.lab.explorer.sequence import held_from_dict
from attnlab.lab.said import said

STUDY_ROUTES = {"/api/notebook/study": "notebook", "/api/block/study": "block"}
CONNECTIONS = "/api/connections/"
KINDS = ("check", "hint", "answer")


def part_of(path: str) -> str | None:
    """The part of the lab a study route belongs to (``notebook``, ``block``, ``connections/flash``)."""
    if path in STUDY_ROUTES:
        return STUDY_ROUTES[path]
    if path.startswith(CONNECTIONS) and path.endswith("/study"):
        name = path[len(CONNECTIONS):-len("/study")]
        return f"connections/{name}" if name and "/" not in name else None
    return None


def _active(study: dict) -> tuple[str, int, dict] | None:
    active = study.get("active")
    if not isinstance(active, dict):
        return None
    entry = study.get("challenges", {}).get(active.get("challenge"))
    n = active.get("attempt")
    if not entry or not isinstance(n, int) or not 0 <= n < len(entry.get("attempts", [])):
        return None
    return active["challenge"], n, entry["attempts"][n]


def _query(request: dict) -> list[float] | None:
    """The query q the explorer held when the learner checked (the main page's practice)."""
    held = request.get("held")
    if held is None:
        return None
    try:
        return list(held_from_dict(held).explorer_trace().q)
    except (FieldError, TypeError, ValueError, AttributeError):
        return None


def study_event(part: str, request: dict, answer: dict) -> dict | None:
    """The event one study exchange records, or None: ``{"kind", "challenge", "data", "study"}``.

    ``request`` is the route's body (``{..., "study", "action"}``), ``answer`` its 200 answer
    (``{"study", "history", ...}``): the new study is the server's, so its feedback is too.
    """
    action = request.get("action")
    study = answer.get("study")
    if not isinstance(action, dict) or not isinstance(study, dict):
        return None
    active = _active(study)
    kind = action.get("kind")
    if kind == "submit" and active is not None:
        challenge, n, attempt = active
        feedback = attempt.get("feedback")
        if not isinstance(feedback, dict) or feedback.get("load"):
            return None
        data = {"met": bool(feedback.get("met")), "response": attempt.get("response"), "attempt": n + 1}
        if part == "notebook":
            data["q"] = _query(request)
        return {"kind": "check", "challenge": challenge, "data": data, "study": study}
    if kind == "help" and action.get("help") in ("hint", "answer") and active is not None:
        challenge, n, _ = active
        if action["help"] == "hint":
            data = {"detail": action.get("detail"), "attempt": n + 1}
            return {"kind": "hint", "challenge": challenge, "data": data, "study": study}
        return {"kind": "answer", "challenge": challenge, "data": {"attempt": n + 1}, "study": study}
    return None


def recorded_words(*, shared_database: bool) -> dict:
    """What joining means, said before a learner joins: what is recorded, and where it is kept."""
    where = (
        "in the class's database, which the teacher runs"
        if shared_database
        else "in a file on the teacher's computer"
    )
    return {
        "title": "What this class records",
        "items": [
            "The nickname you type (no account, no e-mail).",
            "Each Check you make in practice: your answer, whether it met the goal, and where your "
            "query q was.",
            "Each hint you open and each answer you show.",
            "Your practice record, so a reload or a lost connection continues where you were.",
            "While your page is connected: which part of the lab it is on.",
        ],
        "not": "Nothing else: not your drags, not what you type anywhere else in the lab.",
        "where": said(f"It is kept {where}, and sent nowhere else.", shared_database=shared_database),
    }
