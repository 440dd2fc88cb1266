"""The drag sockets: one JSON text message per state, answered exactly as its POST.

``/api/state/ws`` is the page's: each text message is a ``StateRequest`` (the
held example and its edits) and each answer is ``{"status": 200, "body":
StateAnswer}`` or ``{"status": 422, "body": ErrorResponse}``, exactly as
``POST /api/state`` would answer (``messages.answer_state``). ``/api/trace/ws`` is
the same for ``POST /api/trace`` (a ``LabState``, ``messages.answer_trace``), for
scripts and the benchmarks. Each socket takes one kind of message, so nothing
has to guess what a message is. Closing codes: 1003 for a binary
message, 1009 for one over ``MAX_MESSAGE_CHARS``, each with a reason. Which
pages may connect is the guard's job (``app.GuardMiddleware``: a foreign Host
or Origin never reaches this handler).

One client cannot stall the rest: the engine's work and the JSON encoding run
in a worker thread, never on the event loop, and a socket has at most one
message being answered. Back-pressure keeps only the latest state: a state
that arrives while another is being answered replaces any older one still
waiting, which is never answered. A drag only needs where the pointer is now,
and the page keeps one message in flight anyway; a client that sends faster
than answers come costs one thread and one waiting message, however fast it sends.
"""

from __future__ import annotations

import json

import anyio
from anyio.to_thread import run_sync
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from attnlab.web.explorer import messages
from attnlab.web.explorer.messages import MAX_MESSAGE_CHARS

router = APIRouter(prefix="/api", tags=["lab"])

BINARY = (1003, "send each state as a text message of JSON, not binary")
TOO_BIG = (1009, f"a message may have at most {MAX_MESSAGE_CHARS} characters")


class Latest:
    """The one message waiting to be answered: ``put`` replaces it, ``take`` waits for one."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._ready = anyio.Event()
        self.replaced = 0  # messages dropped for a newer one (never answered)

    def put(self, text: str) -> None:
        if self._text is not None:
            self.replaced += 1
        self._text = text
        self._ready.set()

    async def take(self) -> str:
        await self._ready.wait()
        text, self._text = self._text, None
        self._ready = anyio.Event()  # an anyio Event cannot be cleared
        assert text is not None
        return text


ANSWERS = {"state": messages.answer_state, "trace": messages.answer_trace}


def answer_text(text: str, kind: str = "state") -> str:
    """Answer one message's text with the answer's JSON text (run in a worker thread)."""
    return json.dumps(ANSWERS[kind](text))


async def _answer(socket: WebSocket, latest: Latest, kind: str) -> None:
    while True:
        text = await latest.take()
        try:
            await socket.send_text(await run_sync(answer_text, text, kind))
        except WebSocketDisconnect:  # the client left mid-answer: _read sees it go too
            return


async def _read(socket: WebSocket, latest: Latest) -> tuple[int, str] | None:
    """Queue each text message; return the close code and reason for a bad one, None when the client left."""
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        text = message.get("text")
        if text is None:
            return BINARY
        if len(text) > MAX_MESSAGE_CHARS:
            return TOO_BIG
        latest.put(text)


async def _serve(socket: WebSocket, kind: str) -> None:
    await socket.accept()
    latest = Latest()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_answer, socket, latest, kind)
        close = await _read(socket, latest)
        tasks.cancel_scope.cancel()  # an answer being computed is dropped: the socket is going
    if close is not None:
        await socket.close(*close)


@router.websocket("/state/ws")
async def state_socket(socket: WebSocket) -> None:
    """The same as ``POST /api/state``, one JSON message per state: the page's drags (see the module)."""
    await _serve(socket, "state")


@router.websocket("/trace/ws")
async def trace_socket(socket: WebSocket) -> None:
    """The same as ``POST /api/trace``, one JSON message per state (see the module)."""
    await _serve(socket, "trace")
