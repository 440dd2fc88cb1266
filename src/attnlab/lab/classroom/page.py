"""Every word the class's pages show: the join page, the teacher's view, the learner's class bar.

Pages get their words the lab's usual way (``web/assets.py``): fixed sentences at
``<!-- fill:name -->`` markers, escaped, and the modules' words as one JSON data
block. The class bar on a learner's lab page gets its words with the learner's
record (``GET /api/class/me``), as it is added to pages that are not the class's.
Refusals are problems of a ``FieldError`` at ``class`` (or the field at fault), for
the page's usual error line.
"""

from __future__ import annotations

from attnlab.lab.classroom import names, places
from attnlab.lab.classroom.record import recorded_words
from attnlab.lab.notebook import practice
from attnlab.lab.page import shared_fills, shared_words
from attnlab.lab.said import said

# --- refusals (a FieldError's problem, at "class" unless said) -------------------------------

NO_CLASS = "is not running on this lab: ask your teacher for the class's address"
NOT_TEACHER = "needs the teacher's address (the one with the token, printed when the class started)"
NOT_LEARNER = "does not know this page: join the class first, at its join address"
ENDED = "has ended: it records nothing more (your work in the lab is still yours)"
PAUSED = "is paused by the teacher: your work is kept; carry on when the class resumes"
DELETED = "was deleted by the teacher"


def paced(pace: list[str]) -> str:
    shown = "; ".join(places.place(p)["name"] for p in pace if places.place(p))
    return f"is kept to {shown} for now: this part opens again when the teacher moves the class on"


def too_many_joins(seconds: int) -> str:
    unit = "second" if seconds == 1 else "seconds"
    return f"has had too many joins from this computer: try again in {seconds} {unit}"


def full(limit: int) -> str:
    return f"is full: it takes at most {limit:,} learners"


# --- the join page -----------------------------------------------------------------------


def join_page(class_name: str, *, shared_database: bool) -> dict:
    recorded = recorded_words(shared_database=shared_database)
    fills = {
        **shared_fills(),
        "title": f"Join the class “{class_name}”",
        "lede": "Pick a nickname: no account, no e-mail. Your teacher sees your checks and hints "
                "as you work.",
        "recorded_title": recorded["title"],
        **{f"recorded_{i}": item for i, item in enumerate(recorded["items"], start=1)},
        "recorded_not": recorded["not"],
        "recorded_where": recorded["where"]["text"],
        "nickname_label": "Your nickname",
        "nickname_hint": (
            f"Letters, digits, spaces and {' '.join(names.PUNCTUATION)}; at most {names.MAX_NICKNAME} "
            "characters. Your teacher can show the class's answers without names."
        ),
        "join": "Join the class",
    }
    words = {
        "joining": "Joining…",
        "continue": "Continue to the lab",
        "offline": "The lab's server cannot be reached; try again in a moment.",
    }
    return {"words": {**shared_words(), "classroom": words}, "fills": fills}


def none_page() -> dict:
    return {
        "words": shared_words(),
        "fills": {
            **shared_fills(),
            "title": "No class is running here",
            "lede": "This lab is not running a class. Ask your teacher for the class's join address.",
            "home": "Open the lab on its own",
        },
    }


def refused_page() -> dict:
    return {
        "words": shared_words(),
        "fills": {
            **shared_fills(),
            "title": "This is the teacher's page",
            "lede": "It opens only from the teacher's address, the one with the token that `attnlab class` "
                    "printed. Learners join at the class's join address.",
            "home": "Open the lab",
        },
    }


# --- the teacher's view --------------------------------------------------------------------


def teacher_page(class_name: str, join_url: str) -> dict:
    fills = {
        **shared_fills(),
        "title": f"Teacher's view · {class_name}",
        "join_title": "Learners join at",
        "join_url": join_url,
        "qr_alt": f"A QR code for {join_url}",
        "big": "Show the join address large",
        "controls_title": "The room",
        "pause": "Pause the room",
        "anonymise": "Hide names (for the projector)",
        "pace_title": "Keep the class to",
        "pace_apply": "Keep to these",
        "pace_clear": "Stop pacing",
        "push_title": "Push to every screen",
        "push_link_label": "A share link or a lab's address",
        "push_link": "Push the link",
        "push_challenge_label": "A practice challenge",
        "push_challenge": "Push the challenge",
        "push_clear": "Stop pushing",
        "snapshot_title": "Snapshot",
        "snapshot_hint": "Pick checks in a learner's record, then show them to the room side by side, "
                         "without names.",
        "snapshot_show": "Show the picked answers",
        "snapshot_clear": "Clear the snapshot",
        "results_title": "Results",
        "export_csv": "Export CSV (a row per learner and challenge)",
        "export_json": "Export JSON (every study and event)",
        "end": "End the class",
        "delete": "Delete the class and its data",
        "learners_title": "Learners",
        "filter_label": "Filter by name or place",
        "challenges_title": "Challenges",
        "predictions_title": "Predictions",
        "detail_title": "One learner's record",
        "room_title": "Answers from the class",
    }
    words = {
        "live": "Live",
        "reconnecting": "Reconnecting…",
        "resume": "Resume the room",
        "pause": fills["pause"],
        "sorted_up": "sorted, smallest first",
        "sorted_down": "sorted, largest first",
        "no_learners": "No learner has joined yet.",
        "no_predictions": "No answers to a prediction yet.",
        "confirm_end": "End the class? Learners' pages stop recording; the results are kept.",
        "confirm_delete": "Delete the class and every learner's record? This cannot be undone.",
        "deleted": "The class and its data were deleted.",
        "ended": "The class has ended.",
        "close": "Close",
        "challenges": [{"id": c["id"], "title": c["title"]} for c in practice.challenges()],
        "places": [{"id": p["id"], "name": p["name"]} for p in places.places()],
    }
    return {"words": {**shared_words(), "classroom": words}, "fills": fills}


# --- the class bar on a learner's page -------------------------------------------------------


def bar_words() -> dict:
    return {
        "label": "Your class",
        "connected": "connected",
        "reconnecting": "reconnecting…",
        "paused": "Your teacher has paused the room: the page is read-only until they resume.",
        "ended": "The class has ended. Your work in the lab is still yours.",
        "deleted": "The teacher closed the class.",
        "open": "Open it",
        "dismiss": "Keep working",
        "back": "Back to my work",
        "restored": "Your practice record is back where you left it.",
    }


def pushed_title(push: dict) -> str:
    """What a push is called on a learner's bar: the challenge's title, or the page it opens."""
    if push.get("title"):
        return push["title"]
    found = places.place(push.get("place", ""))
    return found["name"] if found else push["href"]




def refusal(problem: str) -> str:
    """A refusal about the class as the page shows it: "The class is paused by the teacher: …"."""
    return "The class " + problem


def joined_words(class_name: str, nickname: str) -> dict:
    return said(f"You are in the class “{class_name}” as {nickname}.", nickname=nickname)


def learner_state(cls: dict, nickname: str | None = None) -> dict:
    """The class as a learner's page shows it: paused, ended, where it is kept, what was pushed.

    Every sentence is here, whole; the bar only places them.
    """
    state = cls.get("state", {})
    pace = [places.place(p) for p in state.get("pace") or [] if places.place(p)]
    push = state.get("push")
    out = {
        "class": cls["name"],
        "paused": bool(state.get("paused")),
        "ended": bool(cls.get("ended")),
        "pace": [p["id"] for p in pace],
        "open": sorted({x for p in pace for x in (p["id"], *places.INCLUDES.get(p["id"], ()))}),
        "paced": said(
            f"Your teacher is keeping the class to: {'; '.join(p['name'] for p in pace)}.",
            pace=[p["id"] for p in pace],
        ) if pace else None,
        "go": [
            {"href": p["page"] + (f"#{p['section']}" if p["section"] else ""), "text": f"Go to {p['name']}"}
            for p in pace
        ],
        "push": push,
        "pushed": said(f"Your teacher pushed: {pushed_title(push)}", href=push["href"]) if push else None,
    }
    if nickname is not None:
        out["in_class"] = said(f"In class “{cls['name']}” as {nickname}", nickname=nickname)
    return out
