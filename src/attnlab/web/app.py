"""The lab's FastAPI app: the JSON API, the static page and the security headers.

``create_app()`` builds a fresh app. Each API part is a router; adding one is
one line in ``ROUTERS`` (or ``app.include_router(router)`` on the result).
Every response carries a strict Content-Security-Policy (no 'unsafe-inline',
nothing from other origins) and the usual hardening headers. Request bodies
are capped at ``MAX_BODY_BYTES``; validation errors are 422 with the field
path, never 5xx. The interactive docs pages are off (they load scripts from a
CDN); the OpenAPI schema is at ``/api/openapi.json``.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from attnlab import __version__
from attnlab.web import api, api_models, api_notebook
from attnlab.web.assets import Assets
from attnlab.web.errors import body_error, field_path, validation_detail

__all__ = ["CSP", "MAX_BODY_BYTES", "ROUTERS", "create_app", "field_path"]

STATIC_DIR = Path(__file__).parent / "static"
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

# The routers that make up the app, in order. Part 2 and the models part add theirs here.
ROUTERS = [api.router, api_notebook.router, api_models.router, api_models.page_router]


class _BodyTooLarge(Exception):
    pass


class GuardMiddleware:
    """Add the security headers to every response and cap request bodies.

    A body over ``max_body`` (by Content-Length, or counted while streaming)
    is answered 413 before the app sees it.
    """

    def __init__(self, app: ASGIApp, *, max_body: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._too_large(send_with_headers)
            return
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise _BodyTooLarge
            return message

        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send_with_headers(message)

        try:
            await self.app(scope, counted_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await self._too_large(send_with_headers)

    async def _too_large(self, send: Send) -> None:
        response = JSONResponse(
            body_error(f"the request body is larger than {self.max_body} bytes", "too_large"),
            status_code=413,
        )
        await response({"type": "http"}, _no_receive, send)


async def _no_receive() -> Message:  # pragma: no cover - a JSONResponse never reads
    return {"type": "http.disconnect"}


async def validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
    """Answer 422 with each problem's field path and a readable message (no echo of input)."""
    return JSONResponse({"detail": validation_detail(error.errors())}, status_code=422)


async def http_error(request: Request, error: StarletteHTTPException):
    """Answer a body FastAPI cannot parse (bad UTF-8) like any other bad body: 422."""
    if error.status_code == 400 and request.url.path.startswith("/api/"):
        return JSONResponse(
            body_error("the request body is not valid UTF-8 JSON text", "json_invalid"),
            status_code=422,
        )
    return await http_exception_handler(request, error)


def create_app() -> FastAPI:
    """Build the lab's app: API routers, the page at ``/``, assets under ``/static``.

    Static files are served from memory (``attnlab.web.assets``); the page gets a
    modulepreload link for every module in ``static/js/``.
    """
    app = FastAPI(
        title="attnlab",
        version=__version__,
        description=(
            "An exact, explorable lab for scaled dot-product attention. Every number is a "
            "Python float computed by attnlab's engine; the page only draws it."
        ),
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
    )
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    for router in ROUTERS:
        app.include_router(router)

    assets = Assets(root=STATIC_DIR)
    app.add_api_route("/", assets.page, methods=["GET"], include_in_schema=False)
    app.add_api_route("/static/{path:path}", assets.file, methods=["GET"], include_in_schema=False)
    app.add_middleware(GuardMiddleware)
    return app
