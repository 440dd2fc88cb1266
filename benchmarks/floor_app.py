"""The machine's floor for the lab's HTTP benchmarks: a minimal ASGI app, served as the lab is.

    python benchmarks/floor_app.py PORT

Answers every HTTP request with a small text body and echoes WebSocket
messages. It is served the way ``attnlab serve`` serves the lab (the same
listening socket from ``attnlab.web.server.bind_socket``, the same uvicorn
settings), so the difference between the two is the lab's own work, not the
HTTP stack, the socket options or the machine.
"""

from __future__ import annotations

import sys

BODY = b"body { margin: 0 }\n" * 40  # about the size of a small stylesheet


async def app(scope, receive, send) -> None:
    if scope["type"] == "http":
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/css"), (b"content-length", str(len(BODY)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": BODY})
    elif scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] != "websocket.receive":
                return
            await send({"type": "websocket.send", "text": message.get("text") or ""})


def main() -> int:
    import uvicorn

    from attnlab.web.server import bind_socket

    port = int(sys.argv[1])
    sock, _ = bind_socket("127.0.0.1", port)
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
