"""Serve a directory over HTTP with Starlette's StaticFiles under uvicorn.

    python serve_http.py ROOT [--latency-ms 20]

A standard server, not one written for a client: single ranges are answered
with 206, several with multipart/byteranges (RFC 9110), HEAD too. Binds a
free port of 127.0.0.1 and prints it on stdout (one line) once the socket
listens; stops when stdin closes (its parent went away) or on SIGTERM.

--latency-ms adds that much delay before each response (a remote store's
round trip, for the benchmarks). GET /__stats answers {"requests": N,
"bytes": M} (requests and response body bytes since the last
POST /__reset), for counting what a reader fetched.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles


class Counting:
    """ASGI middleware: latency, and request / body byte counts."""

    def __init__(self, app, latency: float) -> None:
        self.app = app
        self.latency = latency
        self.requests = 0
        self.bytes = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path in ("/__stats", "/__reset"):
            if path == "/__reset":
                self.requests = self.bytes = 0
            body = json.dumps({"requests": self.requests, "bytes": self.bytes}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        self.requests += 1
        if self.latency:
            await asyncio.sleep(self.latency)

        async def counting_send(message) -> None:
            if message["type"] == "http.response.body":
                self.bytes += len(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, counting_send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()

    # Mounted in an application, so that a missing file is a 404 (StaticFiles
    # alone raises, which uvicorn answers with 500).
    files = Starlette(routes=[Mount("/", app=StaticFiles(directory=args.root))])
    app = Counting(files, args.latency_ms / 1000)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted sockets inherit this on Linux: without it, a response written
    # as headers then body waits for the client's delayed ACK (Nagle), 40 ms
    # a request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_keep_alive=30)
    server = uvicorn.Server(config)

    def stop_when_stdin_closes() -> None:
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    # Connections wait in the listen backlog until uvicorn accepts them, so
    # the port is ready as soon as it is printed.
    print(sock.getsockname()[1], flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    main()
