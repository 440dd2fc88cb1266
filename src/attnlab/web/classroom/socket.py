"""The class's two WebSockets: a learner's page hears the class's state; the teacher's view hears all.

``/api/class/ws`` (a learner, by their cookie): the server sends ``{"type": "state",
...}`` (``lab.classroom.page.learner_state``) at once and on every change of the
class's state; the page sends ``{"type": "where", "page", "section"}`` when it
moves and ``{"type": "ping"}`` every 15 s (its presence). ``/api/class/teacher/ws``
(the teacher, by their cookie, or a first message ``{"token": ...}``): the server
sends ``{"type": "view", "view": ...}`` (``lab.classroom.view.teacher_view``) at once
and after every change, at most every ``COALESCE_S`` (changes meanwhile go in one
view). A socket not allowed is closed with 4401 (not a learner of the class), 4403
(not the teacher) or 4404 (no class); the class's end and its deletion are states
like any other, and the socket stays open.
"""

from __future__ import annotations

import asyncio
import json

import anyio
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from attnlab.lab.classroom import page, places, view
from attnlab.web.classroom.room import Room, now_ms

router = APIRouter()

COALESCE_S = 0.1  # a burst of checks gives the teacher one view, at most this late
MAX_MESSAGE = 2000
REFRESH_S = 15.0


async def _both(*jobs) -> None:
    """Run the socket's jobs until one ends (the page left, or the server has nothing more to say)."""
    async with anyio.create_task_group() as tasks:
        for job in jobs:
            async def run(job=job) -> None:
                try:
                    await job()
                except (WebSocketDisconnect, RuntimeError):
                    pass  # the page went away (a close while sending is a RuntimeError)
                finally:
                    tasks.cancel_scope.cancel()

            tasks.start_soon(run)


def _room(ws: WebSocket) -> Room | None:
    room = getattr(ws.app.state, "classroom", None)
    return None if room is None else room


def learner_message(room: Room) -> str:
    state = page.learner_state(room.class_record())
    return json.dumps({"type": "state", "deleted": room.deleted, **state}, ensure_ascii=False)


@router.websocket("/api/class/ws")
async def learner_socket(ws: WebSocket) -> None:
    room = _room(ws)
    if room is None or room.deleted:
        await ws.close(code=4404)
        return
    learner = room.known_learner(ws.cookies)
    if learner is False:
        learner = await anyio.to_thread.run_sync(lambda: room.learner_of(ws.cookies))
    if learner is None:
        await ws.close(code=4401)
        return
    await ws.accept()
    room.attach(asyncio.get_running_loop())
    await room.presence(learner.id, opened=1)
    sent = ""

    async def send_state() -> None:
        nonlocal sent
        seen = -1
        while True:
            seen = room.version if seen < 0 else await room.wait(seen)
            text = learner_message(room)
            if text != sent:
                sent = text
                await ws.send_text(text)

    async def read() -> None:
        while True:
            text = await ws.receive_text()
            if len(text) > MAX_MESSAGE:
                continue
            try:
                message = json.loads(text)
            except ValueError:
                continue
            if not isinstance(message, dict) or room.deleted:
                continue
            if message.get("type") == "where":
                where = {"page": str(message.get("page", ""))[:200], "section": message.get("section")}
                if where["section"] is not None:
                    where["section"] = str(where["section"])[:64]
                if places.place_of(where) is None and where["page"] not in places.pages():
                    where = None
                await room.presence(learner.id, place=where)
            elif message.get("type") == "ping":
                await room.presence(learner.id)

    try:
        await _both(send_state, read)
    finally:
        if not room.deleted:
            with anyio.CancelScope(shield=True):
                await room.presence(learner.id, opened=-1)


@router.websocket("/api/class/teacher/ws")
async def teacher_socket(ws: WebSocket) -> None:
    room = _room(ws)
    if room is None or room.deleted:
        await ws.close(code=4404)
        return
    token = room.teacher_token(ws.cookies, ws.headers.get("authorization"))
    if token is None:  # a script: the token as the first message
        await ws.accept()
        try:
            with anyio.fail_after(10):
                first = json.loads(await ws.receive_text())
            token = first.get("token") if isinstance(first, dict) else None
        except (ValueError, TimeoutError, WebSocketDisconnect):
            token = None
        if not await anyio.to_thread.run_sync(lambda: room.is_teacher(token)):
            await ws.close(code=4403)
            return
    elif not await anyio.to_thread.run_sync(lambda: room.is_teacher(token)):
        await ws.close(code=4403)
        return
    else:
        await ws.accept()
    room.attach(asyncio.get_running_loop())

    async def send_views() -> None:
        seen = -1
        while True:
            if seen >= 0:
                with anyio.move_on_after(REFRESH_S):  # "connected" goes stale with time alone
                    await room.wait(seen)
                await anyio.sleep(COALESCE_S)
            seen = room.version
            if room.deleted:
                await ws.send_text(json.dumps({"type": "deleted"}))
                return
            answer = await anyio.to_thread.run_sync(lambda: view.teacher_view(*room.records(), now=now_ms()))
            await ws.send_text(json.dumps({"type": "view", "view": answer}, ensure_ascii=False))

    async def drain() -> None:
        while True:
            await ws.receive_text()

    await _both(send_views, drain)
