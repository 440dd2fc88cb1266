"""A class's results as CSV (one row per learner and challenge) and as JSON (every study and event).

CSV: a row for every learner and every practice challenge of the main page, and
for any other challenge that learner checked; times are UTC in ISO 8601. A cell a
spreadsheet would read as a formula (starting with ``= + - @``, a tab or a carriage
return) is written with a leading apostrophe, so a nickname cannot run in the
teacher's spreadsheet.

JSON: the class, and for each learner their nickname, alias and latest study of each
part of the lab, in the study format the lab's own export uses (``lab.study``),
with every recorded event.
"""

from __future__ import annotations

import csv
import io
import time

from attnlab.lab.classroom import names
from attnlab.lab.classroom.view import challenge, notebook_challenges, response_text

COLUMNS = (
    "class", "learner", "alias", "part", "challenge", "title", "checks", "solved", "first_answer",
    "last_answer", "hints", "answer_shown", "first_check_utc", "last_check_utc",
)
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def iso(ms: int | None) -> str:
    return "" if ms is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


def safe(cell: object) -> str:
    text = "" if cell is None else str(cell)
    return "'" + text if text.startswith(FORMULA) else text


def csv_rows(cls: dict, learners: list[dict], events: list[dict]) -> list[list[str]]:
    """The rows under :data:`COLUMNS`, learners in joining order, challenges in the page's order."""
    rows = []
    base = [("notebook", c["id"]) for c in notebook_challenges()]
    for learner in learners:
        mine = [e for e in events if e["learner_id"] == learner["id"]]
        keys = dict.fromkeys(base)
        for e in mine:
            if e["kind"] in ("check", "hint", "answer") and challenge(e["part"] or "", e["challenge"] or ""):
                keys.setdefault((e["part"], e["challenge"]), None)
        for part, cid in keys:
            c = challenge(part, cid)
            these = [e for e in mine if (e["part"], e["challenge"]) == (part, cid)]
            checks = [e for e in these if e["kind"] == "check"]
            rows.append([safe(x) for x in (
                cls["name"], learner["nickname"], names.alias(learner["number"]), part, cid, c["title"],
                len(checks), "yes" if any(e["data"].get("met") for e in checks) else "no",
                response_text(c, checks[0]["data"]) if checks else "",
                response_text(c, checks[-1]["data"]) if checks else "",
                sum(e["kind"] == "hint" for e in these),
                "yes" if any(e["kind"] == "answer" for e in these) else "no",
                iso(checks[0]["at"]) if checks else "", iso(checks[-1]["at"]) if checks else "",
            )])
    return rows


def to_csv(cls: dict, learners: list[dict], events: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    writer.writerows(csv_rows(cls, learners, events))
    return out.getvalue()


def to_json(cls: dict, learners: list[dict], events: list[dict], studies: dict[int, dict]) -> dict:
    """The class's whole record: ``studies`` maps a learner's id to ``{part: study}``."""
    return {
        "format": "attnlab-class",
        "version": 1,
        "class": {"name": cls["name"], "created_utc": iso(cls.get("created_at")),
                  "ended_utc": iso(cls.get("ended_at"))},
        "learners": [
            {"number": x["number"], "nickname": x["nickname"], "alias": names.alias(x["number"]),
             "joined_utc": iso(x["joined_at"]), "studies": studies.get(x["id"], {})}
            for x in learners
        ],
        "events": [
            {"seq": e["seq"], "learner": _number(learners, e["learner_id"]), "at_utc": iso(e["at"]),
             "kind": e["kind"], "part": e["part"], "challenge": e["challenge"], "data": e["data"]}
            for e in events
        ],
    }


def _number(learners: list[dict], learner_id: int | None) -> int | None:
    return next((x["number"] for x in learners if x["id"] == learner_id), None)
