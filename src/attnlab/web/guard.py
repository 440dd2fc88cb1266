"""The guard around the lab's app: only its own names and pages, bounded bodies, security headers.

``GuardMiddleware`` answers only the lab's own names and pages (DNS rebinding:
``attnlab.web.hosts``), caps request bodies at ``MAX_BODY_BYTES`` and times
their arrival, and puts on every answer, 500s included, a strict
Content-Security-Policy (no 'unsafe-inline', nothing from other origins) and
the usual hardening headers. ``HEAD`` is answered as ``GET`` is, headers and all,
without the body: wherever ``GET`` works, so does ``HEAD``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import anyio
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attnlab.web.errors import body_error
from attnlab.web.hosts import HostRules, host_port, in_process

# 64 sources x 64 coordinates for keys and values, written out long-hand, fit well within.
MAX_BODY_BYTES = 512 * 1024

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]

BODY_TIMEOUT_S = 10.0  # a body still unsent after this long is a stalled client, not a slow one
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # methods that change nothing here


def header_error(name: str, msg: str, type_: str) -> dict:
    """Return an error in the project's shape located at request header ``name``."""
    return {"detail": [{"loc": ["header", name], "field": name, "msg": f"{name}: {msg}", "type": type_}]}


class GuardMiddleware:
    """Refuse other sites, cap and time request bodies, and add the security headers to every answer.

    HTTP, in order: a Host that is not one of the lab's names (``hosts.HostRules``)
    is 403; so is a state-changing method (not GET, HEAD or OPTIONS) sent with
    a foreign Origin: another name, or another scheme or port than the request's
    own. Then ``early`` may refuse it before its body is read (a client past its share
    of the server's time: ``web/fairness.early_refusal``), closing the connection.
    The body is then read here, whole, before the app runs: over ``max_body``
    bytes is 413 and not all sent within ``body_timeout`` seconds (a
    Content-Length promising more than arrives) is 408; these answers close the
    connection, as the rest of the body is never read. An exception the app lets
    escape is answered with a clean 500 JSON before it goes on to the server's
    log; that answer says ``Connection: close``, as the server then closes the
    connection, so a keep-alive client knows to open a
    new one rather than send its next request into a closed one.

    WebSocket: a foreign Host, or an Origin that is present and foreign, is
    refused before the handshake: HTTP 403 where the server supports that
    (the ``websocket.http.response`` extension), else close code 1008.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: HostRules,
        max_body: int = MAX_BODY_BYTES,
        body_timeout: float = BODY_TIMEOUT_S,
        early: Callable[[Scope], Awaitable[JSONResponse | None]] | None = None,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.max_body = max_body
        self.body_timeout = body_timeout
        self.early = early  # a refusal before the body is read (a client past its share: web/fairness)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            refusal = self._refusal(scope, check_origin=True)
            if refusal is None:
                await self.app(scope, receive, send)
            else:
                await _refuse_socket(scope, send, refusal)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        started = False
        head = scope["method"] == "HEAD"
        if head:  # answered as GET, without its body: HEAD works wherever GET does
            scope = {**scope, "method": "GET"}

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                names = {name for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            elif head and message["type"] == "http.response.body":
                message = {**message, "body": b""}  # the GET's headers (its length included), no body
            await send(message)

        refusal = self._refusal(scope, check_origin=scope["method"] not in SAFE_METHODS)
        if refusal is not None:
            await _answer(send_with_headers, 403, refusal, close=True)
            return
        early = await self.early(scope) if self.early is not None else None
        if early is not None:  # its body is never read: the connection closes after the answer
            early.headers["connection"] = "close"
            await early({"type": "http"}, _no_receive, send_with_headers)
            return
        body = await self._read_body(scope, receive)
        if isinstance(body, int):
            await _answer(send_with_headers, body, self._body_error(body), close=True)
            return
        if body is None:  # the client left before its body was sent: nobody to answer
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return body
            return await receive()  # after the body: the disconnect, when it comes

        try:
            await self.app(scope, replay, send_with_headers)
        except Exception:
            if not started:
                failed = body_error("the server failed on this request", "server_error")
                await _answer(send_with_headers, 500, failed, close=True)
            raise

    def _refusal(self, scope: Scope, *, check_origin: bool) -> dict | None:
        """Return the 403 error for a foreign Host or (when checked) Origin, or None."""
        headers = Headers(scope=scope)
        local = in_process(scope)
        if not self.hosts.allows_host(headers.get("host"), in_process=local):
            return header_error(
                "host",
                "this lab answers only to its own names (localhost, 127.0.0.1, [::1], the address it "
                "listens on); to serve another name, start it with --allow-host NAME",
                "host_refused",
            )
        origin = headers.get("origin")
        scheme = {"ws": "http", "wss": "https"}.get(scope.get("scheme", "http"), scope.get("scheme", "http"))
        port = host_port(headers.get("host"), scheme)
        if check_origin and origin is not None and not self.hosts.allows_origin(
            origin, scheme=scheme, port=port, in_process=local
        ):
            return header_error("origin", "requests from another site's page are refused", "origin_refused")
        return None

    async def _read_body(self, scope: Scope, receive: Receive) -> Message | int | None:
        """Return the whole body as one message, a status (413, 408), or None when the client left."""
        length = Headers(scope=scope).get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return 413
        chunks: list[bytes] = []
        size = 0
        with anyio.move_on_after(self.body_timeout):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    return None
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_body:
                    return 413
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        return 408

    def _body_error(self, status: int) -> dict:
        if status == 413:
            return body_error(f"the request body is larger than {self.max_body} bytes", "too_large")
        return body_error(
            f"the request body was not all sent within {self.body_timeout:g} seconds", "body_timeout"
        )


async def _answer(send: Send, status: int, content: dict, *, close: bool = False) -> None:
    """Send ``content`` as a JSON answer; ``close`` ends the connection after it."""
    response = JSONResponse(content, status_code=status, headers={"connection": "close"} if close else None)
    await response({"type": "http"}, _no_receive, send)


async def _refuse_socket(scope: Scope, send: Send, content: dict) -> None:
    """Refuse a WebSocket handshake: 403 with ``content`` if the server can say so, else close 1008."""
    if "websocket.http.response" not in (scope.get("extensions") or {}):
        await send({"type": "websocket.close", "code": 1008, "reason": content["detail"][0]["type"]})
        return
    body = json.dumps(content).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
    ]
    await send({"type": "websocket.http.response.start", "status": 403, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})


async def _no_receive() -> Message:  # pragma: no cover - a JSONResponse never reads
    return {"type": "http.disconnect"}
