"""Run moto's S3 server on 127.0.0.1 and upload directories to it.

    python serve_s3.py BUCKET=DIR [BUCKET=DIR ...]

Starts moto's server mode (a real S3 API over HTTP) on a free port,
creates each BUCKET and uploads the Zarr stores under DIR to it (the files
inside directories named *.zarr, keys relative to DIR, '/'-separated), then prints the port on stdout (one line). Stops when
stdin closes (its parent went away) or on SIGTERM. Credentials are moto's:
any access key works, and the buckets are public (a bucket policy lets
anyone read), so unsigned requests work too.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
from moto.server import ThreadedMotoServer


def main() -> None:
    # moto's server mode logs every request through werkzeug.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://{host}:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    uploads = []
    for spec in sys.argv[1:]:
        bucket, directory = spec.split("=", 1)
        s3.create_bucket(Bucket=bucket)
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
        root = Path(directory)
        for dirpath, _, files in os.walk(root):
            if ".zarr" not in Path(dirpath).relative_to(root).as_posix():
                continue
            for name in files:
                path = Path(dirpath) / name
                uploads.append((bucket, path.relative_to(root).as_posix(), path))

    def upload(item) -> None:
        bucket, key, path = item
        s3.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(upload, uploads))
    print(port, flush=True)
    sys.stdin.read()
    server.stop()


if __name__ == "__main__":
    main()
