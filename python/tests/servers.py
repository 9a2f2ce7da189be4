"""The repository's test servers (scripts/servers) for the Python tests:
Starlette's StaticFiles under uvicorn, moto's S3 server; each on 127.0.0.1,
started here, stopped when its stdin closes."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "servers"


class Server:
    """A server process that prints its port and stops when stdin closes."""

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPTS / script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        # The port, then what else the server says of itself.
        self.said = self.process.stdout.readline().split()
        self.port = int(self.said[0])
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


def serving(script: str, *args: str) -> Iterator[str]:
    """The URL of `script` started with `args`, until the generator closes."""
    server = Server(script, *args)
    try:
        yield server.url
    finally:
        server.stop()


def http(root: Path) -> Iterator[str]:
    """`root` served over HTTP."""
    yield from serving("serve_http.py", str(root))


def s3(bucket: str, root: Path) -> Iterator[str]:
    """moto's S3 endpoint, with `bucket` holding the stores under `root`."""
    yield from serving("serve_s3.py", f"{bucket}={root}")


def s3_private(bucket: str, root: Path) -> Iterator[tuple[str, str, str]]:
    """moto's S3 endpoint with authentication enforced, `bucket` holding
    the stores under `root`: the URL, and the access key and secret of
    the one IAM user that may read them."""
    server = Server("serve_s3.py", "--auth", f"{bucket}={root}")
    try:
        yield server.url, server.said[1], server.said[2]
    finally:
        server.stop()


def stats(server: str) -> dict[str, int]:
    """The HTTP server's counts since the last call (`requests`, `bytes`,
    `most_at_once`), which it then resets."""
    with urllib.request.urlopen(f"{server}/__stats") as r:
        counts = json.load(r)
    urllib.request.urlopen(urllib.request.Request(f"{server}/__reset", method="POST")).read()
    return counts


def requests(server: str) -> int:
    """Requests the HTTP server answered since the last call."""
    return stats(server)["requests"]


def moto_s3store(endpoint: str, bucket: str, prefix: str) -> Any:
    """obstore's S3Store of `bucket`/`prefix` at moto's `endpoint`. Keys
    given, so that no credential provider is asked (no instance metadata
    address is contacted): only the loopback server."""
    import obstore

    return obstore.store.S3Store(
        bucket,
        prefix=prefix,
        endpoint=endpoint,
        region="us-east-1",
        access_key_id="testing",
        secret_access_key="testing",
        client_options={"allow_http": True},
    )
