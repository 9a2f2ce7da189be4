"""Run moto's S3 server on 127.0.0.1 and upload directories to it.

    python serve_s3.py [--auth] BUCKET=DIR [BUCKET=DIR ...]

Starts moto's server mode (a real S3 API over HTTP) on a free port,
creates each BUCKET and uploads the Zarr stores under DIR to it (the files
inside directories named *.zarr, keys relative to DIR, '/'-separated), then prints the port on stdout (one line). Stops when
stdin closes (its parent went away) or on SIGTERM. Credentials are moto's:
any access key works, and the buckets are public (a bucket policy lets
anyone read), so unsigned requests work too.

With --auth, authentication is enforced (moto's IAM checks, as
INITIAL_NO_AUTH_ACTION_COUNT=0 would do, switched on once the uploads are
done): the buckets are private, one IAM user may read them, and so may a
role. The line printed is `PORT ACCESS_KEY_ID SECRET_ACCESS_KEY IMDS_PORT`:
the user's keys, and the port (127.0.0.1) of a stand-in for the EC2
instance metadata service (IMDSv2: a token, then the role's temporary
credentials, which moto's STS made). Requests signed with other keys, or
unsigned, are refused.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
from moto.server import ThreadedMotoServer


def stores_in(bucket: str, root: Path) -> list[tuple[str, str, Path]]:
    """(bucket, key, file) of the files inside directories named *.zarr."""
    out = []
    for dirpath, _, files in os.walk(root):
        if ".zarr" not in Path(dirpath).relative_to(root).as_posix():
            continue
        for name in files:
            path = Path(dirpath) / name
            out.append((bucket, path.relative_to(root).as_posix(), path))
    return out


def reader_keys(endpoint: str) -> tuple[str, str]:
    """An IAM user allowed to read every bucket; its access key."""
    iam = boto3.client(
        "iam",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    iam.create_user(UserName="reader")
    iam.put_user_policy(UserName="reader", PolicyName="read", PolicyDocument=READ_POLICY)
    key = iam.create_access_key(UserName="reader")["AccessKey"]
    return key["AccessKeyId"], key["SecretAccessKey"]


READ_POLICY = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": ["s3:GetObject", "s3:ListBucket"], "Resource": "*"}
        ],
    }
)


def role_credentials(endpoint: str) -> dict:
    """Temporary credentials of a role allowed to read every bucket."""
    client = dict(
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }
    iam = boto3.client("iam", **client)
    role = iam.create_role(RoleName="instance-role", AssumeRolePolicyDocument=json.dumps(trust))
    iam.put_role_policy(RoleName="instance-role", PolicyName="read", PolicyDocument=READ_POLICY)
    sts = boto3.client("sts", **client)
    response = sts.assume_role(RoleArn=role["Role"]["Arn"], RoleSessionName="instance")
    return response["Credentials"]


def serve_metadata(credentials: dict) -> int:
    """A stand-in for the instance metadata service on 127.0.0.1 (IMDSv2,
    as object_store asks it), and for a container agent at
    /container-credentials (token `container-token`); its port."""
    token = "metadata-session-token"
    path = "/latest/meta-data/iam/security-credentials/"
    document = json.dumps(
        {
            "Code": "Success",
            "AccessKeyId": credentials["AccessKeyId"],
            "SecretAccessKey": credentials["SecretAccessKey"],
            "Token": credentials["SessionToken"],
            "Expiration": credentials["Expiration"].strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    ).encode()

    class Metadata(BaseHTTPRequestHandler):
        def answer(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_PUT(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/latest/api/token":
                self.answer(200, token.encode())
            else:
                self.answer(404, b"")

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            # A container agent's endpoint too (AWS_CONTAINER_CREDENTIALS_FULL_URI),
            # which hands out the same keys for its authorization token only.
            if self.path == "/container-credentials":
                if self.headers.get("Authorization") == "container-token":
                    self.answer(200, document)
                else:
                    self.answer(401, b"")
            elif self.headers.get("X-aws-ec2-metadata-token") != token:
                self.answer(401, b"")
            elif self.path == path:
                self.answer(200, b"instance-role")
            elif self.path == path + "instance-role":
                self.answer(200, document)
            else:
                self.answer(404, b"")

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Metadata)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


def main() -> None:
    # moto's server mode logs every request through werkzeug.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    args = sys.argv[1:]
    auth = "--auth" in args
    specs = [a for a in args if a != "--auth"]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    uploads = []
    for spec in specs:
        bucket, directory = spec.split("=", 1)
        s3.create_bucket(Bucket=bucket)
        if auth:
            uploads.extend(stores_in(bucket, Path(directory)))
            continue
        policy = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": "*",
                    "Action": ["s3:GetObject", "s3:ListBucket"],
                    "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
                }
            ],
        }
        s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps(policy))
        uploads.extend(stores_in(bucket, Path(directory)))

    def upload(item) -> None:
        bucket, key, path = item
        s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(upload, uploads))
    if auth:
        keys = reader_keys(endpoint)
        metadata_port = serve_metadata(role_credentials(endpoint))
        # From here on every request is authenticated (moto's own switch).
        request = urllib.request.Request(
            f"{endpoint}/moto-api/reset-auth",
            data=b"0",
            method="POST",
            # Not a form: moto reads the count from the raw body.
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(request).read()
        print(port, *keys, metadata_port, flush=True)
    else:
        print(port, flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
