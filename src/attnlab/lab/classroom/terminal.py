"""``attnlab class``'s words: its help, the two addresses it prints, its refusals."""

from __future__ import annotations

from attnlab.lab import numbers as fmt
from attnlab.lab.classroom import names

HELP = {
    "command": "start a class: a teacher's address, a join address with a QR code, results kept",
    "name": f"the class's name (1 to {names.MAX_CLASS_NAME} of a-z, 0-9, - and _; default: class-<date>)",
    "--resume": "reopen an existing class (its learners, records and state), after a stop or a crash",
    "--database": "keep classes in this PostgreSQL database (postgresql://…) instead of a file per class",
    "--list": "list the classes kept here, and stop",
    "--class": "serve a class with the lab (see `attnlab class`)",
}


def started(name: str, teacher_url: str, join_url: str, *, resumed: bool, where: str) -> list[str]:
    """The lines printed when a class starts: its two addresses and what each is for."""
    how = "reopened" if resumed else "started"
    return [
        f"attnlab: class “{name}” {how}; its records are kept in {where}.",
        f"attnlab: teacher's address (keep it to yourself): {teacher_url}",
        f"attnlab: learners join at {join_url} (or with the QR code below)",
    ]


def wildcard_needs_name() -> str:
    return (
        "a class served on every address needs the name learners will type: add --allow-host NAME "
        "(this computer's name or address on the network)"
    )


def listing(rows: list[tuple[str, int, bool]]) -> list[str]:
    if not rows:
        return ["No classes are kept here yet."]
    return [f"{name}  {fmt.plural(learners, 'learner')}  {'ended' if ended else 'open'}"
            for name, learners, ended in rows]


def exists(name: str) -> str:
    return f"a class named “{name}” already exists: reopen it with --resume, or pick another name"


def missing(name: str) -> str:
    return f"no class named “{name}” is kept here (attnlab class --list shows them)"


def too_new(found: int, latest: int) -> str:
    return f"this class was written by a newer attnlab (schema {found}; this one knows up to {latest})"


def bad_database() -> str:
    return "--database must be a postgresql:// address (leave it out to keep a file per class)"
