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

Each answer is the client's work, in its share of the server's time
(``attnlab.web.fairness``): past its budget, nothing more is read from a socket and
its next answer waits until the budget has refilled; the states read before then
are coalesced into the newest, the rest wait in the network. A large state
(``fairness.HEAVY_BYTES``) is the last one read until it is taken to be answered, and its
answer waits for the heavy lane (one such answer at a time, clients in turn): reading
a flood costs no more than answering it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from attnlab.web.explorer import messages
from attnlab.web.explorer.messages import MAX_MESSAGE_CHARS
from attnlab.web.fairness import Client, Shares, shares_of

router = APIRouter(prefix="/api", tags=["lab"])

BINARY = (1003, "send each state as a text message of JSON, not binary")
TOO_BIG = (1009, f"a message may have at most {MAX_MESSAGE_CHARS} characters")


class Latest:
    """The one message waiting to be answered: ``put`` replaces it, ``take`` waits for one."""

    def __init__(self) -> None:
        self._text: str | None = None
        self._ready = anyio.Event()
        self._taken = anyio.Event()
        self.replaced = 0  # messages dropped for a newer one (never answered)

    def put(self, text: str) -> None:
        if self._text is not None:
            self.replaced += 1
        self._text = text
        self._ready.set()
        self._taken = anyio.Event()

    async def wait(self) -> None:
        """Wait until a message is waiting (it stays waiting: a newer one may still replace it)."""
        await self._ready.wait()

    async def take(self) -> str:
        await self._ready.wait()
        text, self._text = self._text, None
        self._ready = anyio.Event()  # an anyio Event cannot be cleared
        self._taken.set()
        assert text is not None
        return text

    async def taken(self) -> None:
        """Wait until the message waiting now has been taken (at once when none waits)."""
        if self._text is not None:
            await self._taken.wait()


def answer_text(text: str, kind: str = "state") -> str:
    """Answer one message's text with the answer's JSON text (run in a worker thread).

    ``{"status": 200, "body": ...}`` with the body exactly as the POST's bytes, or 422's.
    """
    status, body = messages.reply(text, kind)
    return f'{{"status": {status}, "body": {body.decode()}}}'


async def answer_latest(
    send: Callable[[str], Awaitable[None]], latest: Latest, kind: str, shares: Shares, client: Client | None
) -> None:
    """Answer the newest waiting message, again and again, each in the client's share.

    A client past its budget waits here before its next answer; what it sends
    meanwhile waits in ``latest``, the newest replacing the rest.
    """
    while True:
        await latest.wait()
        await shares.within_budget(client)
        text = await latest.take()
        await send(await shares.run(client, answer_text, text, kind, size=len(text)))


async def _answer(
    socket: WebSocket, latest: Latest, kind: str, shares: Shares, client: Client | None
) -> None:
    try:
        await answer_latest(socket.send_text, latest, kind, shares, client)
    except WebSocketDisconnect:  # the client left mid-answer: _read sees it go too
        return


async def _read(
    socket: WebSocket, latest: Latest, shares: Shares, client: Client | None
) -> tuple[int, str] | None:
    """Queue each text message; return the close code and reason for a bad one, None when the client left.

    A client past its budget is not read from until it has refilled: what it sends meanwhile
    waits in the network (TCP holds the sender back). Each message read is charged; after a
    large one (``shares.heavy_bytes``), nothing more is read until it is taken to be answered.
    """
    while True:
        await shares.within_budget(client)
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        text = message.get("text")
        if text is None:
            return BINARY
        if len(text) > MAX_MESSAGE_CHARS:
            return TOO_BIG
        shares.read(client, len(text))
        latest.put(text)
        if len(text) >= shares.heavy_bytes:
            await latest.taken()


async def _serve(socket: WebSocket, kind: str) -> None:
    await socket.accept()
    latest = Latest()
    shares = shares_of(socket.scope)
    client = shares.client(socket.scope)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_answer, socket, latest, kind, shares, client)
        close = await _read(socket, latest, shares, client)
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
