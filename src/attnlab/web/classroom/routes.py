"""The class's pages and JSON API. Thin: check who is asking, call one lab function, answer.

Learner (their cookie, set by joining): ``GET /class/join`` (the join page),
``POST /api/class/join`` ``{nickname}``, ``GET /api/class/me`` (their own record,
and nobody else's). Teacher (the token: ``/class/teacher?token=…`` sets an HttpOnly
cookie and redirects to ``/class/teacher``, so the token leaves the address bar before
the page is projected; scripts may send ``Authorization: Bearer <token>``): the
page, ``GET /api/class/teacher/view``, ``…/learners/{id}``, ``…/export.csv``,
``…/export.json`` and ``POST …/pause``, ``…/anonymise``, ``…/pace``, ``…/push``,
``…/snapshot``, ``…/end``, ``…/delete``; every one is 403 without the token. Refusals
are the usual ``{"detail": [{loc, field, msg, type}]}``: 404 no class, 401 not a
learner of it, 403 not the teacher, 410 the class has ended, 429 too many joins (from one
address over the network: the server's own machine, loopback, is not limited).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

import anyio
import segno
from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from attnlab.classroom_store import ClassEnded, ClassFull, NicknameTaken
from attnlab.engine.errors import FieldError
from attnlab.lab.classroom import export, names, page, places, snapshot, view
from attnlab.lab.notebook import history as notebook_history
from attnlab.web.classroom.pages import JOIN, NOTICE, TEACHER, render
from attnlab.web.classroom.room import COOKIE_DAYS, MAX_LEARNERS, Room, digest, new_secret, now_ms
from attnlab.web.classroom.schema import AnonymiseIn, DeleteIn, JoinIn, PaceIn, PauseIn, PushIn, SnapshotIn
from attnlab.web.hosts import LOOPBACK_HOSTS
from attnlab.web.schema import errors
from attnlab.web.server import is_loopback

router = APIRouter(tags=["class"])

# The refusals each kind of class route answers, as the API's errors table documents them
_CLASS_SAID = {
    404: "No class runs on this lab (type no_class)",
    409: "The class is full (type class_full)",
    410: "The class has ended (type class_ended)",
}
JOINING = errors(404, 409, 410, 422, 429, said=_CLASS_SAID)
LEARNER = errors(404, 410, said=_CLASS_SAID)
TEACHING = errors(403, 404, 410, 422, said=_CLASS_SAID)


class Refused(Exception):
    """A class refusal: status, the problem (``lab.classroom.page``), its type."""

    def __init__(self, status: int, problem: str, type_: str, *, retry_after: int | None = None) -> None:
        super().__init__(problem)
        self.status, self.problem, self.type, self.retry_after = status, problem, type_, retry_after


def refused(error: Refused) -> JSONResponse:
    item = {"loc": ["class"], "field": "class", "msg": page.refusal(error.problem), "type": error.type}
    headers = {"retry-after": str(error.retry_after)} if error.retry_after else None
    return JSONResponse({"detail": [item]}, status_code=error.status, headers=headers)


async def refused_handler(request: Request, error: Refused) -> JSONResponse:
    return refused(error)


def room_of(request: Request) -> Room:
    room = getattr(request.app.state, "classroom", None)
    if room is None or room.deleted:
        raise Refused(404, page.NO_CLASS, "no_class")
    return room


def teacher_room(request: Request) -> Room:
    room = room_of(request)
    token = room.teacher_token(request.cookies, request.headers.get("authorization"))
    if not room.is_teacher(token):
        raise Refused(403, page.NOT_TEACHER, "not_teacher")
    return room


def open_room(room: Room) -> Room:
    if room.ended:
        raise Refused(410, page.ENDED, "class_ended")
    return room


def assets_of(request: Request):
    return request.app.state.classroom_assets


# --- pages -----------------------------------------------------------------------------


@router.get("/class", include_in_schema=False)
def get_class() -> RedirectResponse:
    return RedirectResponse("/class/join", status_code=303)


@router.get("/class/join", include_in_schema=False)
def get_join(request: Request) -> Response:
    room = getattr(request.app.state, "classroom", None)
    if room is None or room.deleted:
        return render(assets_of(request), request, NOTICE, page.none_page(), status=404)
    served = page.join_page(room.info.name, shared_database=room.shared)
    return render(assets_of(request), request, JOIN, served)


@router.get("/class/teacher", include_in_schema=False)
def get_teacher(request: Request, token: str | None = None) -> Response:
    room = getattr(request.app.state, "classroom", None)
    if room is None or room.deleted:
        return render(assets_of(request), request, NOTICE, page.none_page(), status=404)
    if token is not None:
        if not room.is_teacher(token):
            return render(assets_of(request), request, NOTICE, page.refused_page(), status=403)
        moved = RedirectResponse("/class/teacher", status_code=303)
        moved.set_cookie(room.teacher_cookie, token, httponly=True, samesite="strict", path="/")
        return moved
    if not room.is_teacher(room.teacher_token(request.cookies, request.headers.get("authorization"))):
        return render(assets_of(request), request, NOTICE, page.refused_page(), status=403)
    return render(assets_of(request), request, TEACHER, page.teacher_page(room.info.name, room.join_url))


@router.get("/class/qr.svg", include_in_schema=False)
def get_qr(request: Request) -> Response:
    """The join address as a QR code (segno), for the teacher's page and the projector."""
    room = room_of(request)
    svg = segno.make(room.join_url, error="m").svg_inline(scale=8, dark="#111", light="#fff")
    return Response(svg, media_type="image/svg+xml", headers={"cache-control": "no-store"})


# --- the learner ------------------------------------------------------------------------


@router.post("/api/class/join", status_code=201, responses=JOINING)
async def post_join(body: JoinIn, request: Request) -> JSONResponse:
    """Join with a nickname: 201 and the learner's cookie, or the refusal in words."""
    room = open_room(room_of(request))
    shown, folded = names.nickname(body.nickname)
    address = request.client.host if request.client else "?"
    wait = 0 if is_loopback(address) else room.limiter.take(address)  # a flood comes over the network
    if wait:
        raise Refused(429, page.too_many_joins(wait), "too_many_joins", retry_after=wait)
    key = new_secret()
    try:
        learner = await anyio.to_thread.run_sync(
            lambda: room.store.join(shown, folded, digest(key), now_ms(), limit=MAX_LEARNERS)
        )
    except NicknameTaken:
        raise FieldError("nickname", names.taken()) from None
    except ClassFull:
        raise Refused(409, page.full(MAX_LEARNERS), "class_full") from None
    except ClassEnded:
        raise Refused(410, page.ENDED, "class_ended") from None
    answer = JSONResponse(
        {"nickname": learner.nickname, "words": page.joined_words(room.info.name, learner.nickname),
         "next": "/"},
        status_code=201,
    )
    answer.set_cookie(room.learner_cookie, key, httponly=True, samesite="strict", path="/",
                      max_age=COOKIE_DAYS * 86400)
    return answer


@router.get("/api/class/me", responses=LEARNER)
async def get_me(request: Request) -> dict[str, Any]:
    """The asking learner's own record and the class's state as their page shows it
    (``{"joined": false}`` for anyone else: no record of anybody's)."""
    room = room_of(request)
    learner = await anyio.to_thread.run_sync(lambda: room.learner_of(request.cookies))
    if learner is None:  # not a learner of this class: nothing of anybody's
        return {"joined": False}
    studies = await anyio.to_thread.run_sync(lambda: room.store.studies(learner.id))
    kept = {}
    if "notebook" in studies:
        study = notebook_history.study_from_dict(studies["notebook"])
        kept["notebook"] = {"study": study, "history": notebook_history.history(study)}
    return {
        "joined": True,
        **page.learner_state(room.class_record(), learner.nickname),
        "studies": kept,
        "sections": places.sections(),
        "places": [{"id": p["id"], "page": p["page"], "section": p["section"]} for p in places.places()],
        "words": page.bar_words(),
    }


# --- the teacher ------------------------------------------------------------------------


@router.get("/api/class/teacher/view", responses=TEACHING)
def get_view(request: Request) -> dict:
    room = teacher_room(request)
    cls, learners, events = room.records()
    return view.teacher_view(cls, learners, events, now=now_ms())


@router.get("/api/class/teacher/learners/{learner_id}", responses=TEACHING)
def get_learner(learner_id: Annotated[int, Path(ge=0, le=2**63 - 1)], request: Request) -> dict:
    room = teacher_room(request)
    cls, learners, events = room.records()
    learner = next((x for x in learners if x["id"] == learner_id), None)
    if learner is None:
        raise FieldError(("path", "learner_id"), "is not a learner of this class")
    mine = [e for e in events if e["learner_id"] == learner_id]
    return view.learner_detail(learner, mine, anonymised=bool(cls["state"].get("anonymised")))


async def _act(room: Room, kind: str, data: dict, **changes) -> dict:
    open_room(room)
    state = await anyio.to_thread.run_sync(lambda: room.set_state(**changes))
    try:
        await room.record(None, kind, data=data)
    except ClassEnded:
        raise Refused(410, page.ENDED, "class_ended") from None
    return state


@router.post("/api/class/teacher/pause", responses=TEACHING)
async def post_pause(body: PauseIn, request: Request) -> dict:
    room = teacher_room(request)
    return {"state": await _act(room, "pause" if body.paused else "resume", {}, paused=body.paused)}


@router.post("/api/class/teacher/anonymise", responses=TEACHING)
async def post_anonymise(body: AnonymiseIn, request: Request) -> dict:
    room = teacher_room(request)
    data = {"anonymised": body.anonymised}
    return {"state": await _act(room, "anonymise", data, anonymised=body.anonymised)}


@router.post("/api/class/teacher/pace", responses=TEACHING)
async def post_pace(body: PaceIn, request: Request) -> dict:
    room = teacher_room(request)
    pace = places.check_pace(body.places)
    return {"state": await _act(room, "pace", {"places": pace}, pace=pace)}


@router.post("/api/class/teacher/push", responses=TEACHING)
async def post_push(body: PushIn, request: Request) -> dict:
    room = teacher_room(request)
    if body.link is not None and body.challenge is not None:
        raise FieldError("challenge", "cannot be pushed with a link: push one or the other")
    push = None
    if body.link is not None:
        own = {*LOOPBACK_HOSTS, "localhost", urlsplit(room.join_url).hostname or ""}
        push = places.push_link(body.link, frozenset(own))
    elif body.challenge is not None:
        push = places.push_challenge(body.challenge)
    if push is not None:
        push["id"] = room.store.info().last_seq + 1  # a new push shows again where the last was set aside
    return {"state": await _act(room, "push", {"push": push}, push=push)}


@router.post("/api/class/teacher/snapshot", responses=TEACHING)
async def post_snapshot(body: SnapshotIn, request: Request) -> dict:
    room = teacher_room(request)
    cls, learners, events = room.records()
    picked: list[dict] = []
    if body.events:
        by_seq = {e["seq"]: e for e in events}
        seqs = snapshot.check_picks(body.events, by_seq)
        picked = [by_seq[s] for s in seqs]
    shown = snapshot.snapshot(picked) if picked else None
    await _act(room, "snapshot", {"events": body.events}, snapshot=shown)
    return {"snapshot": shown}


@router.post("/api/class/teacher/end", responses=TEACHING)
async def post_end(request: Request) -> dict:
    room = open_room(teacher_room(request))
    await room.record(None, "end", data={})
    await anyio.to_thread.run_sync(lambda: room.store.end(now_ms()))
    room.info = room.store.info()
    return {"ended": True}


@router.post("/api/class/teacher/delete", responses=TEACHING)
async def post_delete(body: DeleteIn, request: Request) -> dict:
    room = teacher_room(request)
    if body.confirm != room.info.name:
        raise FieldError("confirm", "must be the class's name, to confirm")
    await anyio.to_thread.run_sync(lambda: room.classes.delete(room.store))
    room.deleted = True
    room._bump()
    return {"deleted": True}


@router.get("/api/class/teacher/export.csv", responses=TEACHING)
def get_csv(request: Request) -> Response:
    room = teacher_room(request)
    text = export.to_csv(*room.records())
    return Response(text, media_type="text/csv; charset=utf-8", headers={
        "content-disposition": f'attachment; filename="{room.info.name}.csv"', "cache-control": "no-store"})


@router.get("/api/class/teacher/export.json", responses=TEACHING)
def get_json(request: Request) -> JSONResponse:
    room = teacher_room(request)
    cls, learners, events = room.records()
    studies = {x["id"]: room.store.studies(x["id"]) for x in learners}
    return JSONResponse(export.to_json(cls, learners, events, studies), headers={
        "content-disposition": f'attachment; filename="{room.info.name}.json"', "cache-control": "no-store"})
