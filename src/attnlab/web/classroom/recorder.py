"""The middleware that records a learner's practice and puts the class bar on their lab pages.

For a request carrying the cookie of a learner of the running class (and only then):

- ``POST`` to a practice route (``lab.classroom.record.part_of``): refused with 409 and
  the class's words while the room is paused, or while it is kept to places that do not
  include this part; otherwise the route runs as ever, and when it answers 200 the
  exchange is read (``lab.classroom.record.study_event``: the server's own new study and
  its feedback) and the event is committed to the class's store *before* the answer is
  sent, with its number in ``X-Attnlab-Class-Event``: an acknowledged check is a kept one.
- ``GET`` of a lab page: the page as ever, with the class bar's style and module added
  (``pages.with_bar``), and its own ETag.

Every request of a learner carries ``request.state.class_learner`` (``class:<public
id>:<number>``): a key a route can serve clients by (the model line's session, say).
Everything else passes through untouched, and so does everything once the class has
ended or been deleted (the learner is then a visitor like any other).
"""

from __future__ import annotations

import json
from http.cookies import SimpleCookie

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attnlab.classroom_store import ClassEnded
from attnlab.lab.classroom import page, places
from attnlab.lab.classroom.record import part_of, study_event
from attnlab.web.assets import PAGES
from attnlab.web.classroom.pages import with_bar

EVENT_HEADER = b"x-attnlab-class-event"
LEARNER_STATE = "class_learner"  # request.state.class_learner: "class:<public id>:<learner number>"


def _cookies(scope: Scope) -> dict[str, str]:
    jar: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            parsed = SimpleCookie()
            try:
                parsed.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 - a malformed cookie header names no learner
                continue
            jar.update({k: m.value for k, m in parsed.items()})
    return jar


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ClassMiddleware:
    def __init__(self, app: ASGIApp, *, holder) -> None:
        self.app = app
        self.holder = holder  # the app's state: its ``classroom`` is the running Room or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        room = getattr(self.holder, "classroom", None) if scope["type"] == "http" else None
        if room is None or room.deleted or room.ended or room.learner_cookie.encode() not in _raw(scope):
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        cookies = _cookies(scope)
        learner = room.known_learner(cookies)
        if learner is False:  # not met by this process yet: one query, off the event loop
            learner = await anyio.to_thread.run_sync(lambda: room.learner_of(cookies))
        if learner is None:
            await self.app(scope, receive, send)
            return
        # who asks, for any route that serves clients in turn: this learner of this class
        scope.setdefault("state", {})[LEARNER_STATE] = f"class:{room.store.public_id}:{learner.number}"
        part = part_of(path) if method == "POST" else None
        if part is None and not (method == "GET" and path in PAGES):
            await self.app(scope, receive, send)
            return
        if part is None:
            await self._page(room, scope, receive, send)
        else:
            await self._practice(room, learner.id, part, scope, receive, send)

    async def _page(self, room, scope: Scope, receive: Receive, send: Send) -> None:
        asked = dict(scope["headers"]).get(b"if-none-match")
        headers = [(k, v) for k, v in scope["headers"] if k != b"if-none-match"]
        start, body = await _run(self.app, {**scope, "headers": headers}, receive)
        if start["status"] != 200:
            await _answer(send, start["status"], body, start.get("headers", []))
            return
        html, etag = with_bar(body, self.holder.classroom_assets.version())
        kept = [(k, v) for k, v in start.get("headers", []) if k not in (b"content-length", b"etag")]
        tag = (b"etag", etag.encode())
        if asked == etag.encode():
            await _answer(send, 304, b"", [*[(k, v) for k, v in kept if k != b"content-type"], tag])
            return
        await _answer(send, 200, html, [*kept, tag, (b"content-length", str(len(html)).encode())])

    async def _practice(
        self, room, learner_id: int, part: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        state = room.state
        problem, kind = None, None
        if state.get("paused"):
            problem, kind = page.PAUSED, "class_paused"
        elif not places.allowed(places.part_place(part), state.get("pace")):
            problem, kind = page.paced(state.get("pace")), "class_paced"
        if problem is not None:
            item = {"loc": ["class"], "field": "class", "msg": page.refusal(problem), "type": kind}
            body = json.dumps({"detail": [item]}).encode()
            await _answer(send, 409, body, [(b"content-type", b"application/json"),
                                            (b"content-length", str(len(body)).encode())])
            return
        chunks: list[bytes] = []

        async def reading() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        start, body = await _run(self.app, scope, reading)
        headers = list(start.get("headers", []))
        if start["status"] == 200:
            try:
                event = study_event(part, json.loads(b"".join(chunks)), json.loads(body))
            except ValueError:
                event = None
            if event is not None:
                try:
                    kept = await room.record(
                        learner_id, event["kind"], part=part, challenge=event["challenge"],
                        data=event["data"], study=event["study"],
                    )
                    headers.append((EVENT_HEADER, str(kept.seq).encode()))
                except ClassEnded:
                    pass  # ended meanwhile: the learner's own answer still stands
        await _answer(send, start["status"], body, headers)


def _raw(scope: Scope) -> bytes:
    return b";".join(v for k, v in scope.get("headers", []) if k == b"cookie")


async def _run(app: ASGIApp, scope: Scope, receive: Receive) -> tuple[Message, bytes]:
    """Run ``app`` and keep its whole answer: its start message and its body."""
    start: Message = {}
    parts: list[bytes] = []

    async def keep(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
        elif message["type"] == "http.response.body":
            parts.append(message.get("body", b""))

    await app(scope, receive, keep)
    return start, b"".join(parts)
