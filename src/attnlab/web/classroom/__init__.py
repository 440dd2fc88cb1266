"""A class served with the lab: the running class (``room``), its routes and sockets, the recorder.

``mount(app, assets, room)`` adds it all to an app (``web/app.py``): the class's
pages and API (``routes``), its two WebSockets (``socket``) and the middleware that
records a learner's practice from the server's own answers and puts the class bar
on their lab pages (``recorder``). Without a class the routes answer that none is
running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from attnlab.web.assets import Assets
    from attnlab.web.classroom.room import Room


def mount(app: FastAPI, assets: Assets, room: Room | None = None) -> None:
    """Add the class's routes, sockets and recorder to ``app``; ``room``: the class it serves, if any.

    Call it before the app's own outer middleware (gzip, the guard) is added: the recorder
    then sees plain answers, and the guard has refused foreign hosts and origins first.
    """
    from attnlab.web.classroom import routes, socket
    from attnlab.web.classroom.recorder import ClassMiddleware

    app.state.classroom = room
    app.state.classroom_assets = assets
    app.include_router(routes.router)
    app.include_router(socket.router)
    app.add_exception_handler(routes.Refused, routes.refused_handler)
    app.add_middleware(ClassMiddleware, holder=app.state)
