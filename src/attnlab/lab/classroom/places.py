"""Where a learner can be in the lab, what a class can be kept to, and what a push may open.

A *place* is a section of the main page (the explorer, practice, the transformer
block) or a whole lab page (the real model, circuits, each connection lab):
``{"id", "page", "section", "name"}``. A learner's page says where it is as
``{"page": path, "section": id or None}``; :func:`place_of` reads that as a place.
Pacing keeps a class to a set of places; practice includes the explorer (its
challenges are done there), so a class kept to practice can still drag q.

A push opens a link on every learner's screen: a path of this lab (one of its
pages, with its query and its ``#example=`` share link as they are; a whole address
copied from the teacher's browser, naming one of the lab's own hosts, is cut to its
path), or a practice challenge of
the main page. Errors are ``FieldError``s at the field the teacher filled in.
"""

from __future__ import annotations

from functools import cache
from urllib.parse import urlsplit

from attnlab.engine.errors import FieldError
from attnlab.lab.connections.registry import ENTRIES
from attnlab.lab.notebook import practice

MAX_LINK = 8000
MAX_PACE = 20
INCLUDES = {"practice": ("explorer",)}  # a class kept to practice keeps the explorer too
# the study routes' parts of the lab, as places (the recorded checks say which part they came from)
PART_PLACES = {"notebook": "practice", "block": "block"}


@cache
def places() -> tuple[dict, ...]:
    """Every place, in the order the teacher's pace picker lists them."""
    main = [
        {"id": "explorer", "page": "/", "section": "explorer", "name": "The explorer (drag q)"},
        {"id": "practice", "page": "/", "section": "practice", "name": "Practice (with the explorer)"},
        {"id": "block", "page": "/", "section": "block", "name": "The transformer block"},
        {"id": "real-model", "page": "/real-model", "section": None, "name": "Inside a real model"},
        {"id": "circuits", "page": "/circuits", "section": None, "name": "Circuits"},
    ]
    labs = [
        {"id": f"lab:{e.name}", "page": e.route, "section": None, "name": e.title.split(":")[0]}
        for e in ENTRIES
    ]
    return tuple(main + labs)


def place(place_id: str) -> dict | None:
    return next((p for p in places() if p["id"] == place_id), None)


def pages() -> tuple[str, ...]:
    """The lab's page paths a push may open."""
    return tuple(dict.fromkeys(p["page"] for p in places()))


def sections() -> dict[str, list[str]]:
    """Each page's sections a learner's page reports (``{"/": ["explorer", "practice", "block"]}``)."""
    out: dict[str, list[str]] = {}
    for p in places():
        if p["section"]:
            out.setdefault(p["page"], []).append(p["section"])
    return out


@cache
def _by_page() -> dict[tuple[str, str | None], dict]:
    return {(p["page"], p["section"]): p for p in places()}


def place_of(where: dict | None) -> dict | None:
    """The place a page's report ``{"page", "section"}`` is in, or None (a page outside the list)."""
    if not where:
        return None
    found = _by_page()
    page, section = where.get("page"), where.get("section")
    if section is not None and (page, section) in found:
        return found[(page, section)]
    return found.get((page, None))


def part_place(part: str) -> str:
    """The place a study part's checks belong to: notebook -> practice, connections/flash -> lab:flash."""
    if part.startswith("connections/"):
        return "lab:" + part.removeprefix("connections/")
    return PART_PLACES.get(part, part)


def allowed(place_id: str | None, pace: list[str] | None) -> bool:
    """Whether a class kept to ``pace`` (None or empty: not paced) lets a learner be at ``place_id``."""
    if not pace:
        return True
    if place_id is None:
        return False
    open_ = set(pace)
    for p in pace:
        open_.update(INCLUDES.get(p, ()))
    return place_id in open_


def check_pace(ids: list[str]) -> list[str]:
    """The places a class is kept to, checked (in the picker's order), or ``FieldError`` at ``places``."""
    known = [p["id"] for p in places()]
    if len(ids) > MAX_PACE:
        raise FieldError("places", f"may name at most {MAX_PACE} places")
    for i, x in enumerate(ids):
        if x not in known:
            raise FieldError(("places", i), "is not a place of this lab")
    return [k for k in known if k in ids]


def push_link(text: str, hosts: frozenset[str] = frozenset()) -> dict:
    """A pushed link, ``{"href", "place"}`` (a path of this lab), or ``FieldError`` at ``link``."""
    text = text.strip()
    if not text:
        raise FieldError("link", "is empty: paste a share link or a lab's address")
    if len(text) > MAX_LINK:
        raise FieldError("link", f"has more than {MAX_LINK} characters")
    try:
        parts = urlsplit(text)
    except ValueError:
        raise FieldError("link", "is not an address") from None
    if parts.scheme not in ("", "http", "https") or (parts.scheme and not parts.netloc):
        raise FieldError("link", "must be an address of this lab (http://…/ or a path such as /real-model)")
    if parts.netloc and (parts.hostname or "").lower() not in hosts:
        raise FieldError("link", "is another site's address: push an address of this lab")
    path = parts.path or "/"
    if path not in pages():
        raise FieldError("link", "is not a page of this lab (the main page, a real model, circuits, a lab)")
    href = path + (f"?{parts.query}" if parts.query else "")
    href += f"#{parts.fragment}" if parts.fragment else ""
    where = place_of({"page": path, "section": None}) or place("explorer")
    return {"href": href, "place": where["id"]}


def push_challenge(challenge_id: str) -> dict:
    """A practice challenge the teacher pushes: ``{"href", "challenge", "title", "place"}``."""
    try:
        c = practice.challenge(challenge_id)
    except FieldError:
        raise FieldError("challenge", "is not a practice challenge of the main page") from None
    return {"href": "/#practice", "challenge": c["id"], "title": c["title"], "place": "practice"}
