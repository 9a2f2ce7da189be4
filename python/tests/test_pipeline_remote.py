"""`CodecPipeline` over HTTP and S3 through the crate's remote layer.

zarr's `ObjectStore` over obstore's `HTTPStore` / `S3Store`, and
`FsspecStore` over fsspec's HTTP file system, are read by Rust from the
same URL (`zarrs_extension_codecs._remote`). Values are compared with
zarr's own default pipeline reading the files; requests are the test
server's counts (Starlette's StaticFiles under uvicorn, moto's S3 server,
both on 127.0.0.1, started here).
"""

from __future__ import annotations

import contextlib
import inspect
import multiprocessing
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import servers
import zarr
from zarr.storage import FsspecStore, LocalStore, ObjectStore

import zarrs_extension_codecs as zec
from zarrs_extension_codecs._remote import RemoteSource, remote_source, shared_store

obstore = pytest.importorskip("obstore")

OURS = {"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}
FILTERS: list[dict[str, Any]] = [
    {"name": "scale_offset", "configuration": {"scale": 100, "offset": 5}},
    {
        "name": "cast_value",
        "configuration": {
            "data_type": "uint16",
            "rounding": "nearest-even",
            "out_of_range": "clamp",
            "scalar_map": {"encode": [["NaN", 0]], "decode": [[0, "NaN"]]},
        },
    },
]


def values(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.round(rng.uniform(0, 600, (96, 80)) * 100) / 100 - 5
    data[rng.random(data.shape) < 0.05] = np.nan
    data[32:48, 16:32] = np.nan  # an inner chunk of fill values: not stored
    return data


def write(root: Path, seed: int = 1) -> None:
    """The product: a sharded band (index at the end, the last row of shards
    never written), the same with the index at the start, and an unsharded
    one, all written by zarr's default pipeline with zarr's own classes."""
    data = values(seed)
    common: dict[str, Any] = {
        "shape": data.shape,
        "dtype": "float64",
        "fill_value": np.nan,
        "filters": FILTERS,
        "compressors": [{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3}}],
    }
    arr = zarr.create_array(root, name="b04", chunks=(16, 16), shards=(32, 32), **common)
    arr[:64] = data[:64]
    from zarr.codecs import BytesCodec, ShardingCodec

    inner = [*FILTERS, BytesCodec(), *common["compressors"]]
    start = zarr.create_array(
        root,
        name="start",
        chunks=(32, 32),
        serializer=ShardingCodec(chunk_shape=(16, 16), codecs=inner, index_location="start"),
        **{**common, "filters": None, "compressors": None},
    )
    start[...] = data
    zarr.create_array(root, name="plain", chunks=(16, 16), **common)[...] = data
    # A name object_store would percent-encode in a key prefix.
    zarr.create_array(root, name="b~04", chunks=(16, 16), shards=(32, 32), **common)[...] = data


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pipeline_remote") / "product.zarr"
    write(root)
    return root


def expected(root: Path, name: str) -> np.ndarray:
    """zarr's own read of the files (its default pipeline, its classes)."""
    return zarr.open_array(LocalStore(root, read_only=True), path=name, mode="r")[...]


def serve_http(root: Path) -> Iterator[str]:
    yield from servers.http(root)


@pytest.fixture(scope="module")
def http(product: Path) -> Iterator[str]:
    yield from servers.http(product)


requests = servers.requests


def http_store(url: str) -> ObjectStore:
    return ObjectStore(
        obstore.store.HTTPStore.from_url(url, client_options={"allow_http": True}),
        read_only=True,
    )


def open_remote(store: Any, name: str) -> zarr.Array:
    with zarr.config.set(OURS):
        arr = zarr.open_array(store, path=name, mode="r")
    pipeline = arr._async_array.codec_pipeline
    assert isinstance(pipeline, zec.CodecPipeline)
    assert pipeline.native is not None
    assert pipeline.native.remote is not None
    return arr


SELECTIONS: list[Any] = [
    ...,
    (slice(0, 16), slice(0, 16)),  # one inner chunk
    (slice(5, 70), slice(3, 77)),  # parts of shards, a missing shard row
    (slice(40, 41), slice(20, 21)),  # one element of a missing inner chunk
    (7, slice(None)),
    (slice(90, 96), slice(70, 80)),  # the missing shards only
    (slice(None, None, 3), slice(1, 60, 7)),  # steps: through zarr's pipeline
]


def read_all(arr: zarr.Array, want: np.ndarray) -> None:
    with zarr.config.set({"codec_pipeline.fallback": "raise"}):
        for selection in SELECTIONS:
            got = np.asarray(arr[selection])
            assert got.tobytes() == want[selection].tobytes(), selection


# --- which stores are mapped ---------------------------------------------------------


def test_obstore_http_is_mapped_with_its_url() -> None:
    url = "http://127.0.0.1:9/data/product.zarr/?token=abc"
    source = remote_source(http_store(url))
    assert source == RemoteSource("http://127.0.0.1:9/data/product.zarr?token=abc")


def test_obstore_s3_is_mapped_with_its_settings() -> None:
    s3 = obstore.store.S3Store(
        "bucket",
        prefix="a/product.zarr",
        endpoint="http://127.0.0.1:9",
        region="eu-west-1",
        access_key_id="AKIDEXAMPLE",
        secret_access_key="very-secret",
        skip_signature=False,
        client_options={"allow_http": True},
    )
    source = remote_source(ObjectStore(s3, read_only=True))
    assert isinstance(source, RemoteSource)
    assert source.url == "s3://bucket/a/product.zarr"
    settings = dict(source.s3_config)
    assert settings["endpoint"] == "http://127.0.0.1:9"
    assert settings["region"] == "eu-west-1"
    assert settings["secret_access_key"] == "very-secret"
    assert settings["skip_signature"] == "false"
    assert "bucket" not in settings
    # obstore reads no AWS profile file: neither does the remote layer.
    assert source.read_profiles is False
    # Its repr (in logs, tracebacks) names the settings, never their values.
    shown = repr(source)
    assert "very-secret" not in shown
    assert "AKIDEXAMPLE" not in shown
    assert "secret_access_key" in shown


def test_a_url_shows_no_credentials() -> None:
    source = remote_source(http_store("http://user:pa55@127.0.0.1:9/p.zarr?sig=s3cr3t"))
    assert isinstance(source, RemoteSource)
    assert source.url == "http://user:pa55@127.0.0.1:9/p.zarr?sig=s3cr3t"
    shown = repr(source)
    assert "pa55" not in shown
    assert "s3cr3t" not in shown
    assert "http://***@127.0.0.1:9/p.zarr?***" in shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:pa?ss@host:9/p.zarr", "http://***@host:9/p.zarr"),
        # A password with a `/` (not percent-encoded, as it should be).
        ("https://user:pa/ss@host/x", "https://***@host/x"),
        ("https://user:pa/s#s@host/x?t=1", "https://***@host/x?***"),
        ("https://u:p@[::1]:9/a@b/p.zarr?t=1#f", "https://***@[::1]:9/a@b/p.zarr?***"),
        ("https://host/a@b/p.zarr", "https://host/a@b/p.zarr"),
        ("u:secret@host/p.zarr", "***@host/p.zarr"),
        ("u:pa/ss@host/p.zarr", "***@host/p.zarr"),
        ("bucket/a@b/p.zarr?x", "bucket/a@b/p.zarr?***"),
        ("http://host?sig=1", "http://host?***"),
        ("http://host/p.zarr#frag", "http://host/p.zarr#***"),
    ],
)
def test_redacted_urls(url: str, shown: str) -> None:
    """`_redacted` is the crate's `redact_url` (one implementation), which
    shows nothing of a password, a `/` or `?` in it or not."""
    from zarrs_extension_codecs._native import RemoteStore
    from zarrs_extension_codecs._remote import _redacted

    assert _redacted(url) == shown
    for part in ("pa", "ss", "secret", "sig=1", "frag", "t=1"):
        assert part not in shown, part
    if "://" in url:
        assert RemoteStore.redact_url(url) == shown


def test_an_http_path_that_is_not_a_url_is_named_redacted() -> None:
    """The reason an fsspec HTTP store is not mapped (logged) shows its path
    redacted, then cut: no part of a password."""
    from fsspec.implementations.http import HTTPFileSystem

    fs = HTTPFileSystem(asynchronous=True)
    for path in ["user:pa/ss@host/product.zarr", "user:" + "p" * 50 + "/q@host/x"]:
        reason = remote_source(FsspecStore(fs, path=path, read_only=True))
        assert isinstance(reason, str), reason
        assert reason.startswith("fsspec HTTP store at a path that is not a URL"), reason
        assert "***@host" in reason, reason
        assert "pa/ss" not in reason
        assert "pp" not in reason
        assert "/q" not in reason


def test_array_names_the_url_carries_as_they_are() -> None:
    source = RemoteSource("http://127.0.0.1:9/p.zarr")
    for prefix in ["", "b04", "measurements/r10m/b04", "a.b_c-d~e"]:
        assert source.accepts(prefix), prefix
    for prefix in ["band 4", "a#b", "a?b", "%41", "a//b", "é", "..", "a/./b"]:
        assert not source.accepts(prefix), prefix


def test_fsspec_http_is_mapped() -> None:
    store = FsspecStore.from_url("http://127.0.0.1:9/product.zarr", read_only=True)
    assert remote_source(store) == RemoteSource("http://127.0.0.1:9/product.zarr")


@pytest.mark.parametrize(
    "store",
    [
        pytest.param(
            lambda: obstore.store.HTTPStore.from_url(
                "http://127.0.0.1:9/p.zarr",
                client_options={"allow_http": True, "default_headers": {"x-a": "b"}},
            ),
            id="client-option",
        ),
        pytest.param(
            lambda: obstore.store.HTTPStore.from_url(
                "http://127.0.0.1:9/p.zarr",
                client_options={"allow_http": True},
                retry_config={"max_retries": 9, "retry_timeout": timedelta(seconds=1)},
            ),
            id="retry-config",
        ),
        pytest.param(
            lambda: obstore.store.S3Store("bucket", credential_provider=_async_provider),
            id="asynchronous-credential-provider",
        ),
    ],
)
def test_stores_configured_beyond_what_carries_over_are_not_mapped(store: Any) -> None:
    reason = remote_source(ObjectStore(store(), read_only=True))
    assert isinstance(reason, str), reason


async def _async_provider() -> dict[str, Any]:
    return {"access_key_id": "a", "secret_access_key": "b", "expires_at": None}


def test_obstore_s3_with_a_credential_provider_is_mapped_with_it() -> None:
    def provider() -> dict[str, Any]:
        return {"access_key_id": "a", "secret_access_key": "b", "expires_at": None}

    source = remote_source(ObjectStore(obstore.store.S3Store("b", credential_provider=provider)))
    assert isinstance(source, RemoteSource)
    assert source.credential_provider is provider


def test_arrays_share_a_store_only_with_the_same_credential_provider(
    quiet_environment: pytest.MonkeyPatch,
) -> None:
    def provider() -> dict[str, Any]:
        return {"access_key_id": "a", "secret_access_key": "b", "expires_at": None}

    def another() -> dict[str, Any]:
        return provider()

    settings = (("endpoint", "http://127.0.0.1:9"), ("region", "us-east-1"))
    first = RemoteSource("s3://b/p.zarr", settings, credential_provider=provider)
    same = RemoteSource("s3://b/p.zarr", settings, credential_provider=provider)
    other = RemoteSource("s3://b/p.zarr", settings, credential_provider=another)
    none = RemoteSource("s3://b/p.zarr", settings)
    assert shared_store(first) is shared_store(same)
    assert shared_store(other) is not shared_store(first)
    assert shared_store(none) is not shared_store(first)


def test_fsspec_http_with_a_client_of_its_own_is_not_mapped() -> None:
    from fsspec.implementations.http import get_client

    async def authenticated(**kwargs: Any) -> Any:
        return await get_client(**kwargs)

    store = FsspecStore.from_url(
        "http://127.0.0.1:9/product.zarr",
        read_only=True,
        storage_options={"get_client": authenticated},
    )
    assert isinstance(remote_source(store), str)


def test_fsspec_http_with_request_arguments_is_not_mapped() -> None:
    store = FsspecStore.from_url(
        "http://127.0.0.1:9/product.zarr",
        read_only=True,
        storage_options={"headers": {"Authorization": "Bearer x"}},
    )
    assert isinstance(remote_source(store), str)


def s3fs_store(url: str, **options: Any) -> FsspecStore:
    return FsspecStore.from_url(url, read_only=True, storage_options=options)


@pytest.fixture
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No ``AWS_*`` variable (whether an s3fs store is mapped depends on
    them) and no profile files (botocore's profile too); the monkeypatch,
    to set some."""
    import os

    for name in [n for n in os.environ if n.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


def test_s3fs_is_mapped_with_its_settings(no_aws_environment: pytest.MonkeyPatch) -> None:
    store = s3fs_store(
        "s3://bucket/a/product.zarr/",
        key="AKIDEXAMPLE",
        secret="very-secret",
        token="a-session",
        endpoint_url="http://127.0.0.1:9",
        client_kwargs={"region_name": "eu-west-1"},
        default_block_size=1 << 20,
    )
    source = remote_source(store)
    assert source == RemoteSource(
        "s3://bucket/a/product.zarr",
        (
            ("access_key_id", "AKIDEXAMPLE"),
            ("endpoint", "http://127.0.0.1:9"),
            ("region", "eu-west-1"),
            ("secret_access_key", "very-secret"),
            ("session_token", "a-session"),
            ("skip_signature", "false"),
        ),
    )
    for secret in ["very-secret", "a-session", "AKIDEXAMPLE"]:
        assert secret not in repr(source)


def test_s3fs_anonymous_is_mapped_unsigned(no_aws_environment: pytest.MonkeyPatch) -> None:
    # Keys beside anon are not used by s3fs: not carried over either.
    store = s3fs_store(
        "s3a://bucket/p.zarr",
        anon=True,
        key="AKIDEXAMPLE",
        secret="very-secret",
        client_kwargs={"region_name": "us-west-2"},
    )
    source = remote_source(store)
    assert isinstance(source, RemoteSource)
    assert source.url == "s3://bucket/p.zarr"
    assert dict(source.s3_config) == {"region": "us-west-2", "skip_signature": "true"}


def test_s3fs_settings_as_s3fs_reads_them(no_aws_environment: pytest.MonkeyPatch) -> None:
    # `username` / `password` for `key` / `secret`; the endpoint in
    # client_kwargs; AWS_SKIP_SIGNATURE cannot unsign a signed store.
    no_aws_environment.setenv("AWS_SKIP_SIGNATURE", "true")
    no_aws_environment.setenv("AWS_REGION", "eu-west-1")
    store = s3fs_store(
        "s3://bucket/p~1.zarr",
        username="AKIDEXAMPLE",
        password="very-secret",
        client_kwargs={"endpoint_url": "http://127.0.0.1:9"},
    )
    got = remote_source(store)
    assert isinstance(got, str), got  # AWS_SKIP_SIGNATURE: object_store reads it
    no_aws_environment.delenv("AWS_SKIP_SIGNATURE")
    # botocore takes the region from AWS_DEFAULT_REGION, not AWS_REGION.
    got = remote_source(store)
    assert isinstance(got, str), got
    assert "AWS_DEFAULT_REGION" in got
    no_aws_environment.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    source = remote_source(store)
    assert isinstance(source, RemoteSource)
    assert source.url == "s3://bucket/p~1.zarr"
    assert dict(source.s3_config) == {
        "access_key_id": "AKIDEXAMPLE",
        "endpoint": "http://127.0.0.1:9",
        "region": "eu-central-1",
        "secret_access_key": "very-secret",
        "skip_signature": "false",
    }


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        pytest.param({"anon": True}, "without a region", id="no-region"),
        pytest.param(
            {"anon": True, "client_kwargs": {"region_name": "eu-west-1", "verify": False}},
            "client_kwargs ['verify']",
            id="client-kwargs",
        ),
        pytest.param(
            {"anon": True, "endpoint_url": "http://h:9", "requester_pays": True},
            "settings ['requester_pays']",
            id="requester-pays",
        ),
        pytest.param(
            {"endpoint_url": "http://h:9", "config_kwargs": {"retries": {"max_attempts": 9}}},
            "settings ['config_kwargs']",
            id="config-kwargs",
        ),
        pytest.param(
            {"endpoint_url": "http://h:9", "client_kwargs": {"endpoint_url": "http://g:9"}},
            "endpoint_url given twice",
            id="endpoint-twice",
        ),
    ],
)
def test_s3fs_configured_beyond_what_carries_over_is_not_mapped(
    no_aws_environment: pytest.MonkeyPatch, options: dict[str, Any], reason: str
) -> None:
    got = remote_source(s3fs_store("s3://bucket/p.zarr", **options))
    assert isinstance(got, str), got
    assert reason in got


def test_s3fs_with_credentials_botocore_finds_is_mapped_with_them(
    no_aws_environment: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without `anon` or keys, or with a `profile`, s3fs signs with what
    botocore finds (SSO, assumed roles, processes, ...): the remote layer
    asks botocore for the same, through one provider per profile."""
    from zarrs_extension_codecs._remote import _BotocoreCredentials

    config = tmp_path / "config"
    config.write_text(
        "[profile sso-user]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = r\n"
        "[sso-session corp]\nsso_start_url = https://corp.example/start\n"
        "sso_region = eu-west-1\n"
    )
    no_aws_environment.setenv("AWS_CONFIG_FILE", str(config))

    region = {"client_kwargs": {"region_name": "eu-west-1"}}
    chain = remote_source(s3fs_store("s3://bucket/p.zarr", **region))
    named = remote_source(s3fs_store("s3://bucket/p.zarr", profile="sso-user", **region))
    again = remote_source(s3fs_store("s3://bucket/q.zarr", profile="sso-user", **region))
    for source, profile in [(chain, None), (named, "sso-user")]:
        assert isinstance(source, RemoteSource)
        assert isinstance(source.credential_provider, _BotocoreCredentials)
        assert source.credential_provider.profile == profile
        assert dict(source.s3_config) == {"region": "eu-west-1", "skip_signature": "false"}
    assert isinstance(again, RemoteSource)
    assert isinstance(named, RemoteSource)
    assert again.credential_provider is named.credential_provider
    # Keys in the environment: read by the remote layer as botocore reads
    # them, unless a profile is named (botocore then passes them over).
    no_aws_environment.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    no_aws_environment.setenv("AWS_SECRET_ACCESS_KEY", "very-secret")
    keys = remote_source(s3fs_store("s3://bucket/p.zarr", **region))
    assert isinstance(keys, RemoteSource)
    assert keys.credential_provider is None
    named = remote_source(s3fs_store("s3://bucket/p.zarr", profile="sso-user", **region))
    assert isinstance(named, RemoteSource)
    assert isinstance(named.credential_provider, _BotocoreCredentials)


def test_s3fs_reads_botocores_profile_as_s3fs_does(
    no_aws_environment: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The profile s3fs's botocore session reads: its region is used; a
    profile that says where requests go, or is not there, is not mapped;
    its provider is the same after pickling."""
    import pickle

    config = tmp_path / "config"
    config.write_text(
        "[profile eu]\nregion = eu-central-1\nrole_arn = arn:aws:iam::1:role/r\n"
        "source_profile = keys\n"
        "[profile minio]\nendpoint_url = http://127.0.0.1:9\n"
        "[profile path]\nregion = us-east-1\ns3 =\n  addressing_style = path\n"
    )
    no_aws_environment.setenv("AWS_CONFIG_FILE", str(config))
    source = remote_source(s3fs_store("s3://bucket/p.zarr", profile="eu"))
    assert isinstance(source, RemoteSource)
    assert dict(source.s3_config) == {"region": "eu-central-1", "skip_signature": "false"}
    provider = source.credential_provider
    assert pickle.loads(pickle.dumps(provider)) is provider
    # The profile is read again when its file changes (what was read is
    # kept per environment, the files' contents included).
    config.write_text(config.read_text().replace("eu-central-1", "eu-north-1"))
    source = remote_source(s3fs_store("s3://bucket/p.zarr", profile="eu"))
    assert isinstance(source, RemoteSource)
    assert dict(source.s3_config)["region"] == "eu-north-1"
    for profile, reason in [
        ("minio", "a profile that sets ['endpoint_url']"),
        ("path", "a profile that sets ['s3']"),
        ("gone", "a profile that is not there ('gone')"),
    ]:
        got = remote_source(s3fs_store("s3://bucket/p.zarr", profile=profile, anon=True, **EU_WEST))
        assert isinstance(got, str), got
        assert reason in got
    # The region of the environment over the profile's, as botocore reads.
    no_aws_environment.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    source = remote_source(s3fs_store("s3://bucket/p.zarr", profile="eu"))
    assert isinstance(source, RemoteSource)
    assert dict(source.s3_config)["region"] == "ap-south-1"


EU_WEST = {"client_kwargs": {"region_name": "eu-west-1"}}


@pytest.mark.parametrize(
    ("environment", "reason"),
    [
        # botocore sends no token with keys given alone; object_store would
        # send the environment's.
        pytest.param({"AWS_SESSION_TOKEN": "t"}, "AWS_SESSION_TOKEN", id="token"),
        # botocore reads AWS_ENDPOINT_URL_S3, object_store AWS_ENDPOINT.
        pytest.param({"AWS_ENDPOINT_URL_S3": "http://h:9"}, "AWS_ENDPOINT_URL_S3", id="endpoint"),
        pytest.param({"AWS_REQUEST_PAYER": "true"}, "AWS_REQUEST_PAYER", id="payer"),
    ],
)
def test_s3fs_with_an_environment_read_differently_is_not_mapped(
    no_aws_environment: pytest.MonkeyPatch, environment: dict[str, str], reason: str
) -> None:
    for name, value in environment.items():
        no_aws_environment.setenv(name, value)
    store = s3fs_store(
        "s3://bucket/p.zarr", key="k", secret="s", client_kwargs={"region_name": "eu-west-1"}
    )
    got = remote_source(store)
    assert isinstance(got, str), got
    assert reason in got


def test_s3fs_at_a_path_the_url_cannot_carry_is_not_mapped(
    no_aws_environment: pytest.MonkeyPatch,
) -> None:
    options = {"anon": True, "client_kwargs": {"region_name": "eu-west-1"}}
    for path in ["s3://bucket/a#b.zarr", "s3://bucket/a?b.zarr"]:
        got = remote_source(s3fs_store(path, **options))
        assert isinstance(got, str), (path, got)


def test_s3fs_with_keys_in_the_environment_is_mapped(
    no_aws_environment: pytest.MonkeyPatch,
) -> None:
    no_aws_environment.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    no_aws_environment.setenv("AWS_SECRET_ACCESS_KEY", "very-secret")
    no_aws_environment.setenv("AWS_SESSION_TOKEN", "a-session")
    store = s3fs_store("s3://bucket/p.zarr", client_kwargs={"region_name": "eu-west-1"})
    source = remote_source(store)
    assert isinstance(source, RemoteSource)
    # The keys stay where they are: the remote layer reads the environment.
    assert dict(source.s3_config) == {"region": "eu-west-1", "skip_signature": "false"}


def test_other_stores_are_not_remote(tmp_path: Path) -> None:
    assert remote_source(LocalStore(tmp_path)) is None
    assert remote_source(ObjectStore(obstore.store.LocalStore(str(tmp_path)))) is None


# --- reads -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["b04", "start", "plain"])
def test_obstore_http_reads_zarrs_values(http: str, product: Path, name: str) -> None:
    read_all(open_remote(http_store(http), name), expected(product, name))


def test_fsspec_http_reads_zarrs_values(http: str, product: Path) -> None:
    store = FsspecStore.from_url(http, read_only=True)
    read_all(open_remote(store, "b04"), expected(product, "b04"))


def window_requests(http: str, arr: zarr.Array, want: np.ndarray, rows: slice, cols: slice) -> int:
    """Read `arr[rows, cols]`, check it against `want`'s, and return the
    server's requests for it."""
    requests(http)
    assert np.asarray(arr[rows, cols]).tobytes() == want[rows, cols].tobytes()
    return requests(http)


def test_a_window_of_a_shard_seen_before_is_one_request(http: str, product: Path) -> None:
    """The index is kept: with no read-ahead, the first window of a shard
    costs its index and its inner chunk, a window of another inner chunk of
    it one request."""
    with zarr.config.set({"codec_pipeline.remote_read_ahead_bytes": 0}):
        arr = open_remote(http_store(http), "b04")
    want = expected(product, "b04")
    assert window_requests(http, arr, want, slice(0, 16), slice(0, 16)) == 2
    assert window_requests(http, arr, want, slice(16, 32), slice(16, 32)) == 1
    # Four inner chunks of that shard: still one request (coalesced).
    assert window_requests(http, arr, want, slice(8, 24), slice(8, 24)) == 1
    # The store's own counts agree with the server's.
    native = arr._async_array.codec_pipeline.native
    (remote,) = native.arrays.values()
    assert remote.remote_fetched()[0] == 4


def test_read_ahead_reads_a_first_window_of_a_small_shard_in_one_request(
    http: str, product: Path
) -> None:
    """By default (the crate's 1 MiB), or with
    `codec_pipeline.remote_read_ahead_bytes` at least a shard's size, the
    shard comes whole with its index: the first window of it in one
    request. At 0, its index, then its chunk."""
    want = expected(product, "b04")
    for config, first in [
        ({}, 1),
        ({"codec_pipeline.remote_read_ahead_bytes": 1 << 16}, 1),
        ({"codec_pipeline.remote_read_ahead_bytes": 0}, 2),
    ]:
        with zarr.config.set(config):
            arr = open_remote(http_store(http), "b04")
        assert window_requests(http, arr, want, slice(0, 16), slice(16, 32)) == first, config
        read_all(arr, want)


@pytest.mark.parametrize("key", ["remote_read_ahead_bytes", "remote_stores_kept"])
@pytest.mark.parametrize("value", [-1, "lots"])
def test_a_bad_remote_setting_is_an_error_when_the_array_opens(
    http: str, key: str, value: object
) -> None:
    with (
        zarr.config.set({**OURS, f"codec_pipeline.{key}": value}),
        pytest.raises(ValueError, match=key),
    ):
        zarr.open_array(http_store(http), path="b04", mode="r")


def test_a_bad_remote_setting_leaves_arrays_zarrs_is_not_given_alone(tmp_path: Path) -> None:
    """The remote settings are checked at open for the arrays the remote
    layer reads: an array of strings (zarr's pipeline reads it) opens and
    reads whatever they are, as before the pipeline built its part lazily."""
    root = tmp_path / "strings.zarr"
    zarr.create_array(LocalStore(root), shape=(2,), chunks=(2,), dtype=str)[...] = np.array(
        ["x", "y"]
    )
    for url in servers.http(root):
        with zarr.config.set({**OURS, "codec_pipeline.remote_read_ahead_bytes": -1}):
            arr = zarr.open_array(http_store(url), mode="r")
            assert list(arr[...]) == ["x", "y"]


def test_shard_indexes_at_the_start_are_kept_too(http: str, product: Path) -> None:
    """The pipeline hands zarrs the metadata zarr read, not the store: the
    store is told of it, so it knows these indexes are at the start (with
    no read-ahead, which would bring the small shards whole)."""
    with zarr.config.set({"codec_pipeline.remote_read_ahead_bytes": 0}):
        arr = open_remote(http_store(http), "start")
    want = expected(product, "start")
    assert window_requests(http, arr, want, slice(0, 16), slice(0, 16)) == 2
    assert window_requests(http, arr, want, slice(16, 32), slice(16, 32)) == 1


def test_an_array_whose_name_needs_escaping_is_read_through_zarrs_store(
    tmp_path: Path,
) -> None:
    root = tmp_path / "odd.zarr"
    data = values(3)
    zarr.create_array(
        root, name="band 4", shape=data.shape, chunks=(16, 16), shards=(32, 32), dtype="float64"
    )[...] = data
    server = serve_http(root)
    url = next(server)
    try:
        arr = open_remote(http_store(url), "band 4")
        # Parts of shards through zarr's store: zarr's pipeline reads them
        # (byte ranges), a fallback `raise` reports.
        with (
            zarr.config.set({"codec_pipeline.fallback": "raise"}),
            pytest.raises(zec.FallbackError, match="parts of shards"),
        ):
            arr[0:16, 0:16]
        with zarr.config.set({"codec_pipeline.fallback": "allow"}):
            for selection in SELECTIONS:
                assert np.asarray(arr[selection]).tobytes() == data[selection].tobytes()
        assert arr._async_array.codec_pipeline.native.arrays == {}
    finally:
        next(server, None)


def test_fetches_in_flight_beyond_the_decode_threads(product: Path) -> None:
    """One decode thread (`threading.max_workers` 1), 30 ms a request: once
    fetches wait on the network, up to `async.concurrency` are in flight
    (the server sees more than 3 at once; one thread alone shows 2 at
    most, see tests/remote/read_engine_remote.rs)."""
    server = servers.serving("serve_http.py", str(product), "--latency-ms", "30")
    url = next(server)
    try:
        with zarr.config.set({"threading.max_workers": 1}):
            arr = open_remote(http_store(url), "b04")
            servers.stats(url)
            got = np.asarray(arr[...])
            counts = servers.stats(url)
        assert got.tobytes() == expected(product, "b04").tobytes()
        assert counts["most_at_once"] > 3, counts
    finally:
        next(server, None)


def test_the_same_read_through_zarrs_store_api(http: str, product: Path) -> None:
    """`codec_pipeline.remote = "zarr"`: zarr's store API fetches, as before."""
    with zarr.config.set({**OURS, "codec_pipeline.remote": "zarr"}):
        arr = zarr.open_array(http_store(http), path="b04", mode="r")
    assert arr._async_array.codec_pipeline.native.remote is None
    want = expected(product, "b04")
    requests(http)
    assert np.asarray(arr[16:32, 16:32]).tobytes() == want[16:32, 16:32].tobytes()
    assert np.asarray(arr[0:16, 0:16]).tobytes() == want[0:16, 0:16].tobytes()
    assert requests(http) == 4  # index, then chunk, each time


def _pipeline_threads() -> int:
    """Threads of the pipeline's pools alive in this process (Linux)."""
    count = 0
    for comm in Path("/proc/self/task").glob("*/comm"):
        # A thread that ended meanwhile has no name to read.
        with contextlib.suppress(OSError):
            count += comm.read_text().startswith("zec-pipeline")
    return count


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_pools_of_ever_new_sizes_are_released(http: str, product: Path) -> None:
    """A remote read's pool is as large as `async.concurrency`; a process
    that changes it on every read made a pool each time and kept them all
    (75 threads for the sizes 3 to 12). At most 4 pools are kept: the
    threads of the others end."""
    arr = open_remote(http_store(http), "b04")
    want = expected(product, "b04")
    for concurrency in range(3, 13):
        with zarr.config.set({"async.concurrency": concurrency}):
            assert np.asarray(arr[...]).tobytes() == want.tobytes()
    kept_at_most = 12 + 11 + 10 + 9
    deadline = time.monotonic() + 20
    while _pipeline_threads() > kept_at_most and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pipeline_threads() <= kept_at_most


def test_missing_chunks_raise_when_zarr_is_asked_to(http: str) -> None:
    """With `read_missing_chunks` false zarr needs to know which chunks are
    stored: the pipeline asks the remote store then (and only then)."""
    with zarr.config.set(OURS):
        arr = zarr.open_array(
            http_store(http), path="b04", mode="r", config={"read_missing_chunks": False}
        )
    assert arr._async_array.codec_pipeline.native.remote is not None
    arr[0:32, 0:32]  # a stored shard
    with pytest.raises(zarr.errors.ChunkNotFoundError, match="c/2/0"):
        arr[64:96, 0:32]


def test_a_shard_rewritten_on_the_server_reads_its_new_values(tmp_path: Path) -> None:
    """The kept index is conditional on the shard's version: a shard
    rewritten between two reads of one open array is read anew."""
    root = tmp_path / "product.zarr"
    write(root, seed=1)
    server = serve_http(root)
    url = next(server)
    try:
        arr = open_remote(http_store(url), "b04")
        old = expected(root, "b04")
        assert np.asarray(arr[0:16, 0:16]).tobytes() == old[0:16, 0:16].tobytes()
        writer = zarr.open_array(LocalStore(root), path="b04", mode="r+")
        writer[0:32, 0:32] = values(seed=2)[0:32, 0:32]
        new = expected(root, "b04")
        assert new[0:16, 0:16].tobytes() != old[0:16, 0:16].tobytes()
        for window in [(slice(0, 16), slice(0, 16)), (slice(16, 32), slice(0, 32))]:
            assert np.asarray(arr[window]).tobytes() == new[window].tobytes()
        # Rewritten again, then opened again: the store kept (with the
        # index of the second version) reads the third.
        writer[0:32, 0:32] = values(seed=3)[0:32, 0:32]
        third = expected(root, "b04")
        assert third[0:16, 0:16].tobytes() != new[0:16, 0:16].tobytes()
        again = open_remote(http_store(url), "b04")
        assert shared_store(again._async_array.codec_pipeline.native.remote) is shared_store(
            arr._async_array.codec_pipeline.native.remote
        )
        assert np.asarray(again[0:16, 0:32]).tobytes() == third[0:16, 0:32].tobytes()
    finally:
        next(server, None)


# --- stores kept for arrays opened later ----------------------------------------------


def test_an_array_opened_again_reads_a_shard_seen_before_in_one_request(
    http: str, product: Path
) -> None:
    """A tile server opens the product for each request: the store of the
    first open is kept (with the indexes it read), and the arrays of the
    same URL and settings opened later read through it. With
    `codec_pipeline.remote_stores_kept` 0 each opens its own."""
    want = expected(product, "b04")
    with zarr.config.set({"codec_pipeline.remote_read_ahead_bytes": 0}):
        first = open_remote(http_store(http), "b04")
        assert window_requests(http, first, want, slice(0, 16), slice(0, 16)) == 2
        again = open_remote(http_store(http), "b04")
        assert window_requests(http, again, want, slice(16, 32), slice(16, 32)) == 1
        # Another array of the product: the same store, its own indexes.
        other = open_remote(http_store(http), "start")
        assert shared_store(other._async_array.codec_pipeline.native.remote) is shared_store(
            first._async_array.codec_pipeline.native.remote
        )
        start = expected(product, "start")
        assert window_requests(http, other, start, slice(0, 16), slice(0, 16)) == 2
        assert window_requests(http, again, want, slice(0, 16), slice(16, 32)) == 1
        with zarr.config.set({"codec_pipeline.remote_stores_kept": 0}):
            alone = open_remote(http_store(http), "b04")
        assert window_requests(http, alone, want, slice(16, 32), slice(0, 16)) == 2
        read_all(again, want)


@pytest.fixture
def quiet_environment(no_aws_environment: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No ``AWS_*``, proxy or certificate variable, and a home directory
    with no profile files."""
    import os

    from zarrs_extension_codecs._remote import _ENV_READ

    for name in [n for n in os.environ if n.upper() in _ENV_READ]:
        no_aws_environment.delenv(name)
    no_aws_environment.setenv("HOME", str(tmp_path))
    return no_aws_environment


def test_arrays_share_a_store_only_when_every_request_would_be_the_same(
    quiet_environment: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Kept stores are found by URL, settings, signing choice, read-ahead
    and the environment the remote layer reads; anything else different
    gets a store of its own (none of these fetch anything)."""
    import certifi

    keys = (("region", "eu-west-1"), ("access_key_id", "A"), ("secret_access_key", "S1"))
    base = RemoteSource("s3://bucket/product.zarr", keys)
    store = shared_store(base)
    assert shared_store(RemoteSource("s3://bucket/product.zarr", keys)) is store
    others = [
        RemoteSource("s3://bucket/other.zarr", keys),
        replace(base, s3_config=(*keys[:2], ("secret_access_key", "S2"))),
        replace(base, s3_config=keys[:1]),
        replace(base, anonymous=True),
        replace(base, read_ahead=0),
        # An obstore `S3Store`'s: the profile files not read.
        replace(base, read_profiles=False),
        RemoteSource("http://127.0.0.1:9/product.zarr"),
        RemoteSource("http://127.0.0.1:9/product.zarr?token=2"),
    ]
    opened = [shared_store(o) for o in others]
    assert len({id(s) for s in [store, *opened]}) == len(others) + 1
    # A variable the remote layer does not read changes nothing; nor does
    # an `AWS_*` one for an HTTP store.
    quiet_environment.setenv("ZEC_UNRELATED", "1")
    assert shared_store(base) is store
    http = others[-2]
    quiet_environment.setenv("AWS_PROFILE", "other")
    assert shared_store(http) is opened[-2]
    quiet_environment.delenv("AWS_PROFILE")
    # One it reads does, and the store of the old one is found again.
    for name, value in [
        ("AWS_PROFILE", "other"),
        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
        ("https_proxy", "http://127.0.0.1:9"),
        ("SSL_CERT_FILE", certifi.where()),  # a bundle that loads
    ]:
        quiet_environment.setenv(name, value)
        assert shared_store(base) is not store, name
        quiet_environment.delenv(name)
        assert shared_store(base) is store, name
    # So does a profile file written or changed (in place, to as many
    # bytes: its contents count, not its size or time), also one named
    # with a leading `~/`, as the remote layer reads it.
    credentials = tmp_path / ".aws" / "credentials"
    credentials.parent.mkdir()
    credentials.write_text("[default]\naws_access_key_id = B\naws_secret_access_key = T\n")
    written = shared_store(base)
    assert written is not store
    credentials.write_text("[default]\naws_access_key_id = C\naws_secret_access_key = U\n")
    changed = shared_store(base)
    assert changed is not written
    quiet_environment.setenv("AWS_SHARED_CREDENTIALS_FILE", "~/keys")
    named = shared_store(base)
    (tmp_path / "keys").write_text("[default]\naws_access_key_id = D\n")
    assert shared_store(base) is not named


def test_a_store_that_reads_no_profile_is_kept_whatever_the_profile_files_say(
    quiet_environment: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An obstore `S3Store`'s store (`read_profiles=False`) reads no profile
    file: a profile file written or changed gives it no store of its own
    (nor is it read for its key), while one that reads them gets another;
    `AWS_*` variables count for both."""
    keys = (("region", "eu-west-1"), ("access_key_id", "A"), ("secret_access_key", "S1"))
    obstore_like = RemoteSource("s3://bucket/product.zarr", keys, read_profiles=False)
    profiled = replace(obstore_like, read_profiles=True)
    store, other = shared_store(obstore_like), shared_store(profiled)
    assert store is not other
    credentials = tmp_path / ".aws" / "credentials"
    credentials.parent.mkdir()
    credentials.write_text("[default]\naws_access_key_id = B\naws_secret_access_key = T\n")
    (tmp_path / ".aws" / "config").write_text("[default]\nendpoint_url = http://127.0.0.1:9\n")
    assert shared_store(obstore_like) is store
    assert shared_store(profiled) is not other
    quiet_environment.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert shared_store(obstore_like) is not store
    quiet_environment.delenv("AWS_ENDPOINT_URL")
    assert shared_store(obstore_like) is store


def test_kept_stores_are_bounded_and_can_be_dropped(quiet_environment: pytest.MonkeyPatch) -> None:
    sources = [RemoteSource(f"http://127.0.0.1:9/p{i}.zarr", stores_kept=2) for i in range(3)]
    first = [shared_store(s) for s in sources[:2]]
    assert shared_store(sources[0]) is first[0]  # now the most recently used
    shared_store(sources[2])  # drops the least recently used: p1
    assert shared_store(sources[0]) is first[0]
    assert shared_store(sources[1]) is not first[1]
    zec.clear_remote_stores()
    assert shared_store(sources[0]) is not first[0]
    none = replace(sources[0], stores_kept=0)
    assert shared_store(none) is not shared_store(none)


@pytest.fixture(scope="module")
def s3_endpoint(product: Path) -> Iterator[str]:
    yield from servers.s3("products", product.parent)


def test_obstore_s3_reads_zarrs_values(s3_endpoint: str, product: Path) -> None:
    s3 = servers.moto_s3store(s3_endpoint, "products", product.name)
    for name in ["b04", "start", "b~04"]:
        read_all(open_remote(ObjectStore(s3, read_only=True), name), expected(product, name))


def test_s3fs_reads_zarrs_values(
    s3_endpoint: str, product: Path, no_aws_environment: pytest.MonkeyPatch
) -> None:
    store = s3fs_store(
        f"s3://products/{product.name}",
        key="testing",
        secret="testing",
        endpoint_url=s3_endpoint,
        client_kwargs={"region_name": "us-east-1"},
    )
    for name in ["b04", "start", "plain", "b~04"]:
        read_all(open_remote(store, name), expected(product, name))


def test_an_array_pickles_and_the_copy_reads_through_the_remote_layer(
    http: str, product: Path
) -> None:
    """dask and multiprocessing send arrays pickled: the copy maps its store
    again and reads through the remote layer (the stores opened by the
    original are not part of the pickle)."""
    import pickle

    arr = open_remote(http_store(http), "b04")
    want = expected(product, "b04")
    assert np.asarray(arr[5:70, 3:77]).tobytes() == want[5:70, 3:77].tobytes()
    copy = pickle.loads(pickle.dumps(arr))
    native = copy._async_array.codec_pipeline.native
    assert native.remote is not None
    assert native.arrays == {}
    read_all(copy, want)
    assert list(native.arrays) == ["b04"]


_INHERITED: list[zarr.Array] = []


def _read_inherited() -> bytes:
    return np.asarray(_INHERITED[0][5:70, 3:77]).tobytes()


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_reads_an_array_its_parent_read(http: str, product: Path) -> None:
    """The remote store's runtime has threads in the parent only: a child
    made by fork() that reads the very array object (not a pickled copy)
    opens a store of its own instead of waiting for them."""
    arr = open_remote(http_store(http), "b04")
    want = expected(product, "b04")[5:70, 3:77].tobytes()
    assert np.asarray(arr[5:70, 3:77]).tobytes() == want
    _INHERITED[:] = [arr]
    try:
        with multiprocessing.get_context("fork").Pool(1) as pool:
            assert pool.apply_async(_read_inherited).get(timeout=60) == want
    finally:
        _INHERITED.clear()


# Opens an array on the server at argv[1] (its store kept), then forks a
# child that drops every store it inherited (those the parent kept, and
# those of the parent's arrays, which a child never uses) and exits.
_CHILD_DROPS_STORES = """
import gc, os, sys, time
import obstore, zarr
from zarr.storage import ObjectStore
from zarrs_extension_codecs import _pipeline, _remote

http = obstore.store.HTTPStore.from_url(sys.argv[1], client_options={"allow_http": True})
with zarr.config.set({"codec_pipeline.path": "zarrs_extension_codecs.CodecPipeline"}):
    arr = zarr.open_array(ObjectStore(http, read_only=True), path="b04", mode="r")
    arr[0:16, 0:16]
pid = os.fork()
if pid == 0:
    arr[0:16, 0:16]  # the child's own store
    assert len(_remote._LEFT_BY_PARENT) == 1
    del arr
    _remote._LEFT_BY_PARENT.clear()
    _pipeline._LEFT_BY_PARENT.clear()
    gc.collect()
    os._exit(0)
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        sys.exit(os.waitstatus_to_exitcode(status))
    time.sleep(0.05)
os.kill(pid, 9)
sys.exit("the child did not exit")
"""


def test_a_forked_child_may_drop_the_stores_it_inherited(http: str) -> None:
    """The runtime of a remote store has threads in the parent only: a
    child made by fork() that drops the store (as a worker's interpreter
    may on exit) must neither wait for them nor take their locks."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", _CHILD_DROPS_STORES, http],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]


def test_a_failing_server_falls_back_to_zarrs_error(tmp_path: Path) -> None:
    """Nothing listens at the URL: the read fails as zarr's own would,
    with the remote layer's account as a note."""
    root = tmp_path / "product.zarr"
    write(root)
    server = serve_http(root)
    url = next(server)
    arr = open_remote(http_store(url), "b04")
    next(server, None)  # the server stops
    with pytest.raises(Exception) as info:  # noqa: PT011 (zarr's error, whatever it is)
        arr[0:16, 0:16]
    assert any("zarrs_extension_codecs.CodecPipeline" in n for n in info.value.__notes__)
    shutil.rmtree(root)


# --- obstore's credential providers ---------------------------------------------------


@pytest.fixture(scope="module")
def s3_private_server(product: Path) -> Iterator[servers.Server]:
    """moto's S3 with authentication enforced (`servers.s3_private`), and
    its stand-in for the instance metadata service (`said[3]`, its port)."""
    server = servers.Server("serve_s3.py", "--auth", f"private={product.parent}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def s3_private(s3_private_server: servers.Server) -> tuple[str, str, str]:
    """The endpoint, and the access key and secret of its one reader."""
    return s3_private_server.url, s3_private_server.said[1], s3_private_server.said[2]


def provided_store(endpoint: str, prefix: str, provider: Any) -> ObjectStore:
    store = obstore.store.S3Store(
        "private",
        prefix=prefix,
        endpoint=endpoint,
        region="us-east-1",
        client_options={"allow_http": True},
        credential_provider=provider,
    )
    return ObjectStore(store, read_only=True)


def test_a_credential_provider_signs_the_remote_layers_requests(
    s3_private: tuple[str, str, str], product: Path, no_aws_environment: pytest.MonkeyPatch
) -> None:
    """obstore's `credential_provider` is called by the remote layer (once
    for keys that expire in an hour; when they expire within the minute,
    by each request that finds no call under way), on a thread of its own,
    and signs its requests against a server that enforces them."""
    no_aws_environment.setenv("AWS_EC2_METADATA_DISABLED", "true")
    endpoint, key_id, secret = s3_private
    for lasting, most in [(timedelta(hours=1), 1), (timedelta(seconds=30), None)]:
        calls: list[int] = []

        def provider(lasting: timedelta = lasting, calls: list[int] = calls) -> dict[str, Any]:
            calls.append(threading.get_ident())
            return {
                "access_key_id": key_id,
                "secret_access_key": secret,
                "token": None,
                "expires_at": datetime.now(UTC) + lasting,
            }

        arr = open_remote(provided_store(endpoint, product.name, provider), "b04")
        # zarr read the metadata through obstore, which asked the provider.
        del calls[:]
        want = expected(product, "b04")
        # Basic selections only: the others go through zarr's store, where
        # obstore asks the provider itself.
        for selection in SELECTIONS[:3]:
            assert np.asarray(arr[selection]).tobytes() == want[selection].tobytes()
        native = arr._async_array.codec_pipeline.native
        (remote,) = native.arrays.values()
        requests_sent = remote.remote_fetched()[0]
        assert requests_sent > 1
        assert threading.get_ident() not in calls
        if most is not None:
            assert len(calls) == most
        else:
            # Keys within the minute are fetched again by every request
            # that finds no call under way; those sent while one runs use
            # the keys still valid (30 s) rather than wait behind it.
            assert len(SELECTIONS[:3]) <= len(calls) <= requests_sent


def test_a_failing_credential_provider_is_named(
    s3_private: tuple[str, str, str],
    product: Path,
    no_aws_environment: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What the remote layer could not get from the provider is said, and
    the read goes through zarr's store (where obstore kept the keys the
    provider gave it first, when zarr read the metadata)."""
    no_aws_environment.setenv("AWS_EC2_METADATA_DISABLED", "true")
    endpoint, key_id, secret = s3_private
    want = expected(product, "b04")

    def wrong_kind() -> Any:
        return [key_id, "s3cr3t-value"]

    def locked() -> Any:
        raise PermissionError("the vault is locked")

    def naive() -> Any:
        return {"access_key_id": key_id, "secret_access_key": secret, "expires_at": datetime.now()}

    def no_secret() -> Any:
        return {"access_key_id": key_id, "expires_at": None}

    async def later() -> Any:
        return {"access_key_id": key_id, "secret_access_key": secret, "expires_at": None}

    made: list[Any] = []

    def awaitable() -> Any:
        # A synchronous function that returns a coroutine: obstore takes it,
        # the remote layer cannot (and closes it).
        made.append(later())
        return made[-1]

    for then, says in [
        (wrong_kind, "obstore's credential_provider returned a list, not a dict"),
        (locked, "obstore's credential_provider raised PermissionError: the vault is locked"),
        (naive, "returned an expires_at that is not a datetime with a time zone"),
        (no_secret, "obstore's credential_provider returned no secret_access_key"),
        (awaitable, "returned an awaitable: only synchronous providers are called"),
    ]:
        calls: list[int] = []

        def provider(then: Any = then, calls: list[int] = calls) -> Any:
            calls.append(1)
            if len(calls) > 1:
                return then()
            return {
                "access_key_id": key_id,
                "secret_access_key": secret,
                "expires_at": datetime.now(UTC) + timedelta(hours=1),
            }

        arr = open_remote(provided_store(endpoint, product.name, provider), "b04")
        caplog.clear()
        with caplog.at_level("DEBUG", logger="zarrs_extension_codecs._pipeline"):
            got = np.asarray(arr[0:16, 0:16])
        assert got.tobytes() == want[0:16, 0:16].tobytes()
        assert len(calls) == 2
        logged = caplog.text
        assert says in logged, logged
        assert "s3cr3t-value" not in logged
        assert secret not in logged
    # Closed, not left to warn that it was never awaited.
    assert made
    assert all(inspect.getcoroutinestate(c) == inspect.CORO_CLOSED for c in made)


def test_s3fs_with_a_profile_reads_through_the_remote_layer(
    s3_private: tuple[str, str, str],
    product: Path,
    no_aws_environment: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A profile of the shared files, as s3fs is given it: botocore's keys
    sign the remote layer's requests against a server that enforces them."""
    endpoint, key_id, secret = s3_private
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[reader]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"
    )
    no_aws_environment.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    no_aws_environment.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    no_aws_environment.setenv("AWS_EC2_METADATA_DISABLED", "true")
    store = s3fs_store(
        f"s3://private/{product.name}",
        profile="reader",
        endpoint_url=endpoint,
        client_kwargs={"region_name": "us-east-1"},
    )
    arr = open_remote(store, "b04")
    want = expected(product, "b04")
    with caplog.at_level("DEBUG", logger="zarrs_extension_codecs._pipeline"):
        for selection in SELECTIONS[:3]:
            assert np.asarray(arr[selection]).tobytes() == want[selection].tobytes()
    # Read by the remote layer, not after its error by zarr's store.
    assert "after zarrs' error" not in caplog.text
    native = arr._async_array.codec_pipeline.native
    (remote,) = native.arrays.values()
    assert remote.remote_fetched()[0] > 1
    assert native.remote.credential_provider._credentials is not None


# --- obstore's S3Store signs as obstore does: no AWS profile file -----------------------


def other_profile(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, region: str = "cn-north-1", keys: bool = True
) -> Path:
    """Profile files (`AWS_CONFIG_FILE`, `AWS_SHARED_CREDENTIALS_FILE`)
    whose default profile is another identity: other keys (unless not
    `keys`), a `credential_process` that leaves a mark and gives other
    keys (which the AWS CLI runs only without the keys), an
    `endpoint_url` where nothing listens and a `region` (`cn-north-1` is
    another partition to moto, whose reader is unknown there). Where the
    process's mark would be."""
    import socket

    with socket.socket() as sock:  # a loopback port, closed again
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    mark = tmp_path / "credential_process_ran"
    process = tmp_path / "keys.sh"
    process.write_text(
        f"#!/bin/sh\ntouch '{mark}'\n"
        'echo \'{"Version": 1, "AccessKeyId": "AKIAOTHER", "SecretAccessKey": "other"}\'\n'
    )
    process.chmod(0o755)
    config = tmp_path / "profile-config"
    config.write_text(
        f"[default]\nregion = {region}\nendpoint_url = http://127.0.0.1:{closed}\n"
        f"credential_process = {process}\n"
    )
    credentials = tmp_path / "profile-credentials"
    other_keys = "aws_access_key_id = AKIAOTHER\naws_secret_access_key = o\n" if keys else ""
    credentials.write_text(f"[default]\n{other_keys}")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    return mark


def read_by_the_remote_layer(arr: zarr.Array, want: np.ndarray) -> None:
    """The basic selections, read by the remote layer (`raise`: no
    fallback to zarr's store), which sent its own requests."""
    with zarr.config.set({"codec_pipeline.fallback": "raise"}):
        for selection in SELECTIONS[:6]:
            got = np.asarray(arr[selection])
            assert got.tobytes() == want[selection].tobytes(), selection
    native = arr._async_array.codec_pipeline.native
    (remote,) = native.arrays.values()
    assert remote.remote_fetched()[0] > 1


def test_obstore_s3_with_keys_signs_without_the_profile_files(
    s3_private: tuple[str, str, str],
    product: Path,
    no_aws_environment: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """An obstore `S3Store` with keys and an endpoint, and no region
    (obstore's default, us-east-1), beside a default profile of another
    identity, endpoint and region: the remote layer signs as obstore does,
    for obstore's region (the profile's is refused by the server)."""
    endpoint, key_id, secret = s3_private
    mark = other_profile(no_aws_environment, tmp_path)
    no_aws_environment.setenv("AWS_EC2_METADATA_DISABLED", "true")
    s3 = obstore.store.S3Store(
        "private",
        prefix=product.name,
        endpoint=endpoint,
        access_key_id=key_id,
        secret_access_key=secret,
        client_options={"allow_http": True},
    )
    for name in ["b04", "plain"]:
        arr = open_remote(ObjectStore(s3, read_only=True), name)
        read_by_the_remote_layer(arr, expected(product, name))
        assert arr._async_array.codec_pipeline.native.remote.read_profiles is False
    assert not mark.exists()


def test_obstore_s3_with_instance_credentials_runs_no_credential_process(
    s3_private_server: servers.Server,
    product: Path,
    no_aws_environment: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """An obstore `S3Store` with no keys signs with the instance role's
    (obstore asks the instance metadata service, at `AWS_METADATA_ENDPOINT`);
    so does the remote layer, never with the profile's keys nor its
    `credential_process`, which obstore never runs."""
    mark = other_profile(no_aws_environment, tmp_path, region="us-east-1", keys=False)
    imds = f"http://127.0.0.1:{s3_private_server.said[3]}"
    no_aws_environment.setenv("AWS_METADATA_ENDPOINT", imds)
    s3 = obstore.store.S3Store(
        "private",
        prefix=product.name,
        endpoint=s3_private_server.url,
        region="us-east-1",
        client_options={"allow_http": True},
    )
    arr = open_remote(ObjectStore(s3, read_only=True), "b04")
    read_by_the_remote_layer(arr, expected(product, "b04"))
    assert not mark.exists()
