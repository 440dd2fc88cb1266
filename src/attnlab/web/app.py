"""The lab's FastAPI app: the JSON API, the static page and the guard around them.

``create_app()`` builds a fresh app. Each API part is a router; adding one is
one line in ``ROUTERS`` (or ``app.include_router(router)`` on the result).
``attnlab.web.guard.GuardMiddleware`` wraps it: only the lab's own names and
pages (DNS rebinding), bounded request bodies, and the security headers on
every answer, 500s included. Bad input is 4xx, never 5xx: validation errors
are 422 with the field path, JSON nested too deeply to read is 422 at ``body``.
The interactive docs pages are off (they load scripts from a CDN); the
OpenAPI schema is at ``/api/openapi.json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware

from attnlab import __version__
from attnlab.lab.fields import TOO_DEEP, shape_of_route
from attnlab.web.assets import PAGES, Assets
from attnlab.web.block import routes as api_block
from attnlab.web.circuits import routes as api_circuits
from attnlab.web.classroom import mount as mount_classroom
from attnlab.web.classroom.room import Room
from attnlab.web.connections import routes as api_connections
from attnlab.web.errors import (
    FieldError,
    body_error,
    field_error_handler,
    field_path,
    route_limits,
    unreadable_body_detail,
    validation_detail,
)
from attnlab.web.explorer import routes as api
from attnlab.web.explorer import socket
from attnlab.web.fairness import Shares, early_refusal
from attnlab.web.guard import BODY_TIMEOUT_S, CSP, MAX_BODY_BYTES, GuardMiddleware
from attnlab.web.hosts import LOOPBACK_HOSTS, HostRules
from attnlab.web.limits import router as limits_router
from attnlab.web.notebook import routes as api_notebook
from attnlab.web.realmodel import bridge as api_bridge
from attnlab.web.realmodel import jobs as api_models
from attnlab.web.realmodel import programs as api_programs
from attnlab.web.realmodel import views as api_views

__all__ = ["BODY_TIMEOUT_S", "CSP", "MAX_BODY_BYTES", "ROUTERS", "create_app", "field_path"]

STATIC_DIR = Path(__file__).parent / "static"
# The routers that make up the app, in order. Part 2 and the models part add theirs here.
ROUTERS = [
    api.router,
    socket.router,
    api_notebook.router,
    api_models.router,
    api_views.router,
    api_bridge.router,
    api_programs.router,
    api_circuits.router,
    api_block.router,
    api_connections.router,
    limits_router,
]


async def validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
    """Answer 422 with each problem's location and the page's sentence for it (no echo of input)."""
    shape = shape_of_route(request.url.path)
    limits = route_limits(request.scope.get("route"))  # a number's examples inside the field's range
    detail = validation_detail(error.errors(), shape=shape, request_body=error.body, limits=limits)
    return JSONResponse({"detail": detail}, status_code=422)


async def http_error(request: Request, error: StarletteHTTPException):
    """Answer a body FastAPI cannot parse (bad UTF-8, nested too deeply, an over-long integer) as 422."""
    if error.status_code == 400 and request.url.path.startswith("/api/"):
        if isinstance(error.__cause__, RecursionError):  # FastAPI's json.loads ran out of stack
            return JSONResponse(body_error(TOO_DEEP, "json_too_deep"), status_code=422)
        # the body was read (and kept) before its JSON failed: read it again to say why
        detail = unreadable_body_detail(await request.body(), shape=shape_of_route(request.url.path))
        return JSONResponse({"detail": [detail]}, status_code=422)
    return await http_exception_handler(request, error)


async def too_deep(request: Request, error: RecursionError) -> JSONResponse:
    """Answer 422 at ``body`` when a route's own parsing of the input (a JSON string field) recursed too far.

    Only input nests without bound here (the engine and the lab loop, they do not recurse), so
    a RecursionError is the request's, not the server's.
    """
    return JSONResponse(body_error(TOO_DEEP, "json_too_deep"), status_code=422)


def create_app(
    *, allowed_hosts: Iterable[str] = LOOPBACK_HOSTS, body_timeout: float = BODY_TIMEOUT_S,
    shares: Shares | None = None, classroom: Room | None = None,
) -> FastAPI:
    """Build the lab's app: API routers, the page at ``/``, assets under ``/static``.

    ``allowed_hosts``: the names answered besides the loopback ones (``attnlab serve``
    passes the bound address and each ``--allow-host``); ``body_timeout``: seconds a
    request body may take to arrive; ``shares``: each client's budget of the server's
    time (``attnlab.web.fairness``; a fresh ``Shares()`` by default); ``classroom``: the class
    this lab serves (``attnlab.web.classroom``), if any. Static files are served from memory
    (``attnlab.web.assets``) under versioned URLs the browser keeps, each page gets a
    modulepreload link for every module it imports, and answers are gzipped for a
    client that accepts it.
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
    app.add_exception_handler(RecursionError, too_deep)
    # The engine's and the lab's FieldErrors: 422 at their loc, never parsed from the message.
    app.add_exception_handler(FieldError, field_error_handler)
    for router in ROUTERS:
        app.include_router(router)
    app.state.shares = budgets = shares if shares is not None else Shares()  # the explorer's work, per client

    assets = Assets(root=STATIC_DIR)
    for route in PAGES:  # "/" and "/real-model", with versioned static URLs
        app.add_api_route(route, assets.page, methods=["GET"], include_in_schema=False)
    app.add_api_route("/static/{path:path}", assets.file, methods=["GET"], include_in_schema=False)
    mount_classroom(app, assets, classroom)  # a class (web/classroom): routes and recorder, inside gzip
    app.add_middleware(GZipMiddleware, minimum_size=500)  # inside the guard: its headers go on as they are
    app.add_middleware(GuardMiddleware, hosts=HostRules.of(allowed_hosts), body_timeout=body_timeout,
                       early=lambda scope: early_refusal(budgets, scope))  # fmt: skip
    return app
