"""Serve a directory over HTTP with Starlette's StaticFiles under uvicorn.

    python serve_http.py ROOT [--latency-ms 20] [--mbytes-per-s 100]
                         [--require-query NAME=VALUE]
                         [--no-versions | --no-etag | --weak-etag]

A standard server, not one written for a client: single ranges are answered
with 206, several with multipart/byteranges (RFC 9110), HEAD too. Binds a
free port of 127.0.0.1 and prints it on stdout (one line) once the socket
listens; stops when stdin closes (its parent went away) or on SIGTERM.

--latency-ms adds that much delay before each response (a remote store's
round trip, for the benchmarks); --mbytes-per-s holds each response's body
to that many megabytes (10^6 bytes) a second, each request on its own (a
link where one connection's transfer takes time, as S3's per-connection
throughput does). GET /__stats answers {"requests": N,
"bytes": M, "most_at_once": K} (requests, response body bytes, and the
most requests under way at one time, since the last POST /__reset), for
counting what a reader fetched and how many requests it kept in flight.

--require-query answers 403 to every request whose query string lacks
NAME=VALUE (a SAS-style token; StaticFiles itself ignores query strings).
--no-versions strips ETag and Last-Modified from every response (a server
that gives no object version); --no-etag strips ETag only (a version by
Last-Modified alone). --weak-etag sends every ETag as a weak one (W/"...",
as servers that transform a file do) and compares If-Match as RFC 9110
says, strongly: a weak ETag never matches, so any If-Match but * is
answered 412.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading
import urllib.parse

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles


async def send_status(send, status: int) -> None:
    """An empty response with `status`."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", b"0")],
        }
    )
    await send({"type": "http.response.body", "body": b""})


class Counting:
    """ASGI middleware: latency, request / body byte counts, the required
    query parameter, and versions stripped."""

    def __init__(
        self,
        app,
        latency: float,
        required: tuple[str, str] | None = None,
        stripped: tuple[bytes, ...] = (),
        weak_etag: bool = False,
        bytes_per_s: float = 0.0,
    ) -> None:
        self.app = app
        self.latency = latency
        self.bytes_per_s = bytes_per_s
        self.required = required
        self.stripped = stripped
        self.weak_etag = weak_etag
        self.requests = 0
        self.bytes = 0
        self.at_once = 0
        self.most_at_once = 0

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path in ("/__stats", "/__reset"):
            if path == "/__reset":
                self.requests = self.bytes = self.most_at_once = 0
            stats = {"requests": self.requests, "bytes": self.bytes}
            stats["most_at_once"] = self.most_at_once
            body = json.dumps(stats).encode()
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
        self.at_once += 1
        self.most_at_once = max(self.most_at_once, self.at_once)
        try:
            await self.serve(scope, receive, send)
        finally:
            self.at_once -= 1

    async def serve(self, scope, receive, send) -> None:
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.required is not None:
            query = urllib.parse.parse_qsl(scope["query_string"].decode(), keep_blank_values=True)
            if self.required not in query:
                await send_status(send, 403)
                return
        if self.weak_etag:
            if_match = dict(scope["headers"]).get(b"if-match")
            if if_match is not None and if_match.strip() != b"*":
                await send_status(send, 412)
                return

        async def counting_send(message) -> None:
            if message["type"] == "http.response.body":
                self.bytes += len(message.get("body", b""))
                if self.bytes_per_s:
                    await asyncio.sleep(len(message.get("body", b"")) / self.bytes_per_s)
            if message["type"] == "http.response.start" and self.stripped:
                message = dict(message)
                message["headers"] = [
                    (k, v) for k, v in message["headers"] if k.lower() not in self.stripped
                ]
            if message["type"] == "http.response.start" and self.weak_etag:
                message = dict(message)
                message["headers"] = [
                    (k, b"W/" + v if k.lower() == b"etag" else v) for k, v in message["headers"]
                ]
            await send(message)

        await self.app(scope, receive, counting_send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--mbytes-per-s", type=float, default=0.0)
    parser.add_argument("--require-query", default=None)
    parser.add_argument("--no-versions", action="store_true")
    parser.add_argument("--no-etag", action="store_true")
    parser.add_argument("--weak-etag", action="store_true")
    args = parser.parse_args()
    required = None
    if args.require_query is not None:
        name, value = args.require_query.split("=", 1)
        required = (name, value)

    # Mounted in an application, so that a missing file is a 404 (StaticFiles
    # alone raises, which uvicorn answers with 500).
    files = Starlette(routes=[Mount("/", app=StaticFiles(directory=args.root))])
    stripped = (
        (b"etag", b"last-modified") if args.no_versions else (b"etag",) if args.no_etag else ()
    )
    app = Counting(
        files,
        args.latency_ms / 1000,
        required,
        stripped,
        args.weak_etag,
        args.mbytes_per_s * 1e6,
    )
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
