"""Which of zarr's stores `CodecPipeline` reads through the Rust crate's
remote layer, and how: the store's URL and settings, carried over.

Mapped: zarr's `ObjectStore` over obstore's `HTTPStore` or `S3Store`, and
zarr's `FsspecStore` over fsspec's HTTP file system or s3fs's
`S3FileSystem`, each exactly (not a subclass) and only when every setting
it holds can be carried over:

- obstore's S3 settings are object_store's (obstore is object_store too),
  so they are passed as they are (`endpoint`, `region`, `access_key_id`,
  `secret_access_key`, `session_token`, `skip_signature`, ...);
- client options: only `allow_http` (the remote layer allows plain HTTP
  for an `http://` URL or endpoint);
- an `S3Store`'s `credential_provider`, when calling it returns the
  keys (not an awaitable): the remote layer calls it, with the GIL, on a
  thread of its own, when it first needs keys and again a minute before
  their `expires_at` or after 5 minutes (obstore's
  `Boto3CredentialProvider` and `StsCredentialProvider` are such
  providers: SSO, assumed roles, every source boto3 knows); arrays share
  a store only with the same provider object;
- s3fs: `anon`, `key` / `secret` / `token`, `profile`, `endpoint_url`
  (also in `client_kwargs`) and `client_kwargs={"region_name": ...}`, and
  settings that change nothing of what is fetched or how it is signed
  (caches, block sizes, the event loop). It is mapped only when the region
  is known (`client_kwargs`, else botocore's for the profile:
  `AWS_DEFAULT_REGION` or the profile's `region`), or an endpoint is given
  (an S3-compatible server, signed for botocore's region), because s3fs
  follows S3's redirect to a bucket's region and the remote layer does
  not. Keys
  given (or in `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`, with no
  `profile`) are passed on; otherwise the remote layer signs with what
  botocore finds for the `profile` (or its default chain): s3fs's own
  source of keys, SSO, assumed roles and processes included, through one
  provider per profile (`_BotocoreCredentials`). It is mapped only when
  no ``AWS_*`` variable is set
  that object_store and botocore read differently (object_store reads
  every one it knows: `AWS_ENDPOINT`, `AWS_REQUEST_PAYER`,
  `AWS_SKIP_SIGNATURE`, ...; `AWS_SESSION_TOKEN` beside keys given
  without a token); signing is always said (`skip_signature`);
- a retry configuration, an asynchronous credential provider, any other
  client option,
  fsspec client or request arguments (headers, authentication), any other
  s3fs setting (`config_kwargs`, `s3_additional_kwargs`, `requester_pays`,
  `session`, `version_aware`, ...), a profile whose configuration says
  more than where keys and the region come from (`endpoint_url`,
  `services`, an `s3 =` section, ...): not mapped; zarr's store API
  fetches the chunks, as before.

What is not mapped is named in a debug log line (a subclass of a mapped
store is not looked at: zarr's store reads it). Nothing is fetched when
the remote store is set up; it reads what obstore or fsspec would read,
from the same URL, signed the same way: a mapped obstore `S3Store` signs
with its settings, its `credential_provider`, the ``AWS_*`` environment
and container or instance credentials, as obstore does, never with what
the AWS profile files say (`read_profiles=False`: obstore does not read
them, so neither their keys, `credential_process`, region nor
`endpoint_url` apply); an s3fs store with botocore's keys for its
profile, as s3fs.

The remote stores opened are kept (`shared_store`): an array opened later
at the same URL, with the same settings, in the same environment, reads
through the store opened first, with its connections and the shard
indexes it read (tile servers open a product for each request).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import zarr

from zarrs_extension_codecs._native import ChunkArray, RemoteStore

if TYPE_CHECKING:
    from zarr.abc.store import Store

__all__ = ["RemoteSource", "clear_remote_stores", "remote_source", "shared_store"]

# A path segment the URL carries as it is.
_SAFE = re.compile(r"[A-Za-z0-9._~-]+")

# obstore client options the remote layer has the same behaviour for.
_CLIENT_OPTIONS = frozenset({"allow_http"})

# s3fs settings carried over (as object_store's S3 settings, in `_s3fs`) ...
_S3FS_SETTINGS = frozenset(
    {
        "anon",
        "key",
        "username",
        "secret",
        "password",
        "token",
        "endpoint_url",
        "client_kwargs",
        "profile",
    }
)
# ... and those that change nothing of which bytes are fetched or how a
# request is signed: caching, listing, block sizes, the event loop.
_S3FS_HARMLESS = frozenset(
    {
        "asynchronous",
        "loop",
        "skip_instance_cache",
        "use_listings_cache",
        "listings_expiry_time",
        "max_paths",
        "default_block_size",
        "default_fill_cache",
        "default_cache_type",
        "cache_regions",
        "max_concurrency",
    }
)

# Environment variables botocore and the remote layer read alike (the keys
# and their token; the region, which `_s3fs` sets as botocore reads it) or
# that decide only where keys come from (profiles, roles, containers,
# instance metadata): where neither keys nor `anon` decide, botocore finds
# the keys for the remote layer (`_BotocoreCredentials`).
_AWS_ENV_ALIKE = frozenset(
    {
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
        "AWS_ROLE_SESSION_NAME",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        "AWS_STS_REGIONAL_ENDPOINTS",
        "AWS_EC2_METADATA_DISABLED",
        "AWS_PAGER",
        # Read by botocore alone, deciding only whether a request gets
        # through (trusted certificates, retries): a read the remote layer
        # fails is read again through zarr's store.
        "AWS_CA_BUNDLE",
        "AWS_MAX_ATTEMPTS",
        "AWS_RETRY_MODE",
        "AWS_METADATA_SERVICE_TIMEOUT",
        "AWS_METADATA_SERVICE_NUM_ATTEMPTS",
    }
)


@dataclass(frozen=True)
class RemoteSource:
    """Where the crate's remote layer reads a zarr store: the store's root
    URL (no trailing slash), for S3 its settings and signing choice, and
    the read-ahead (`read_ahead_bytes`, taken when the array is opened;
    `None`: the crate's default), and how many stores are kept for arrays
    opened later (`stores_kept`)."""

    url: str
    s3_config: tuple[tuple[str, str], ...] = ()
    anonymous: bool | None = None
    # Whether the remote layer may read the AWS profile files (keys,
    # `credential_process`, region, `endpoint_url`): not for an obstore
    # `S3Store`, which never reads them.
    read_profiles: bool = True
    read_ahead: int | None = None
    # How many stores `shared_store` keeps (`stores_kept`, taken when the
    # array is opened).
    stores_kept: int = 16
    # obstore's `credential_provider` of an `S3Store` (a synchronous
    # callable), which signs every request; stores share it by identity.
    credential_provider: Any = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        # A URL's user-info and query string (a token), and settings, may
        # hold credentials: the URL without them, the settings' names only.
        names = ", ".join(name for name, _ in self.s3_config)
        return f"RemoteSource({_redacted(self.url)!r}, s3_config=[{names}])"

    def accepts(self, prefix: str) -> bool:
        """Whether the array at `prefix` can be read at `url`/`prefix`:
        names of letters, digits and ``._-~`` (others would need escaping in
        the URL, which object_store and zarr's store may not do alike:
        those arrays are read through zarr's store API)."""
        if not prefix:
            return True
        parts = prefix.split("/")
        # `.` and `..` would be resolved by an HTTP client, not by the store.
        return all(_SAFE.fullmatch(p) and p not in (".", "..") for p in parts)

    def open(self, metadata: str, prefix: str) -> ChunkArray:
        """The zarrs array at `prefix` (the array's path in the store), on
        the store `shared_store` gives."""
        return ChunkArray(metadata, store=shared_store(self), path=prefix)


def read_ahead_bytes() -> int | None:
    """`codec_pipeline.remote_read_ahead_bytes`: bytes of a shard read with
    its index, so that a shard no larger is read whole in that request (see
    the crate's `RemoteOptions::shard_read_ahead_bytes`); 0 reads the index
    alone. `None` when not set: the crate's default (1 MiB)."""
    value = zarr.config.get("codec_pipeline.remote_read_ahead_bytes", None)
    if value is None:
        return None
    return _count("codec_pipeline.remote_read_ahead_bytes", value, "bytes")


def _count(key: str, value: object, unit: str) -> int:
    """The configuration `key`'s `value` as a count of `unit`, 0 or more."""
    try:
        n = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ValueError(f"{key}: {value!r} is not a number of {unit}") from None
    if n < 0:
        raise ValueError(f"{key}: {n} is negative")
    return n


def remote_source(store: Store) -> RemoteSource | str | None:
    """Where the remote layer reads `store`; a reason when it is a remote
    store that cannot be mapped; `None` when it is no remote store."""
    from zarr.storage import FsspecStore, ObjectStore

    if type(store) is ObjectStore:
        source = _obstore(store.store)
    elif type(store) is FsspecStore:
        source = _fsspec(store)
    else:
        return None
    if isinstance(source, RemoteSource):
        source = replace(source, read_ahead=read_ahead_bytes(), stores_kept=stores_kept())
    return source


def _redacted(url: str) -> str:
    """`url` as the remote layer shows it (the crate's `redact_url`, one
    implementation for both): its user-info as ``***`` (also a password
    with a ``/``, ``?`` or ``#`` not percent-encoded), its query string
    and fragment as ``***``. Text without a scheme is read as what follows
    one (a path may hold user-info: ``user:pw@host/p``)."""
    if "://" in url:
        return RemoteStore.redact_url(url)
    return RemoteStore.redact_url(f"x://{url}").removeprefix("x://")


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _obstore(inner: object) -> RemoteSource | str | None:
    try:
        from obstore.store import HTTPStore, S3Store
    except ImportError:
        return None
    if type(inner) not in (HTTPStore, S3Store):
        return None
    name = type(inner).__name__
    options = dict(getattr(inner, "client_options", None) or {})
    unknown = sorted(set(options) - _CLIENT_OPTIONS)
    if unknown:
        return f"obstore {name} with client options {unknown}"
    if getattr(inner, "retry_config", None) is not None:
        return f"obstore {name} with a retry configuration"
    provider = getattr(inner, "credential_provider", None)
    if provider is not None and _asynchronous(provider):
        return f"obstore {name} with an asynchronous credential provider"
    if isinstance(inner, HTTPStore):
        base, query, rest = str(inner.url).partition("?")
        return RemoteSource(f"{base.rstrip('/')}{query}{rest}")
    assert isinstance(inner, S3Store)
    config = {str(k).lower(): v for k, v in dict(inner.config or {}).items()}
    bucket = config.pop("bucket", None) or config.pop("aws_bucket", None)
    config.pop("aws_bucket_name", None)
    if not bucket:
        return "obstore S3Store without a bucket"
    prefix = str(inner.prefix or "").strip("/")
    url = f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"
    settings = tuple((k, _text(v)) for k, v in sorted(config.items()))
    # obstore reads no profile file: neither may the store that stands for
    # it (another identity, endpoint or region; a `credential_process`
    # obstore would never run).
    return RemoteSource(url, settings, read_profiles=False, credential_provider=provider)


def _asynchronous(provider: object) -> bool:
    """Whether calling `provider` gives an awaitable (as obstore allows):
    the remote layer calls providers synchronously, on a thread of its
    own; zarr's store reads the arrays of the others."""
    call = getattr(provider, "__call__", None)  # noqa: B004 (the method itself)
    return inspect.iscoroutinefunction(provider) or inspect.iscoroutinefunction(call)


def _fsspec(store: object) -> RemoteSource | str | None:
    fs = getattr(store, "fs", None)
    protocol = getattr(fs, "protocol", None)
    protocols = {protocol} if isinstance(protocol, str) else set(protocol or ())
    if "s3" in protocols:
        return _s3fs(store, fs)
    if not protocols & {"http", "https"}:
        return None
    if getattr(fs, "client_kwargs", None) or getattr(fs, "kwargs", None):
        return "fsspec HTTP file system with client or request arguments"
    from fsspec.implementations import http

    if getattr(fs, "get_client", None) is not http.get_client or getattr(fs, "encoded", False):
        return "fsspec HTTP file system with a client of its own or encoded URLs"
    url = str(getattr(store, "path", ""))
    if not url.startswith(("http://", "https://")):
        # Redacted before it is cut: a cut could leave a password's start.
        return f"fsspec HTTP store at a path that is not a URL ({_redacted(url)[:60]!r})"
    base, query, rest = url.partition("?")
    return RemoteSource(f"{base.rstrip('/')}{query}{rest}")


def _s3fs(store: object, fs: object) -> RemoteSource | str | None:
    try:
        from s3fs import S3FileSystem
    except ImportError:
        return None
    if type(fs) is not S3FileSystem:
        return None
    # What the file system was made with (fsspec keeps it), None as unset.
    options = {k: v for k, v in dict(getattr(fs, "storage_options", {})).items() if v is not None}
    unknown = sorted(set(options) - _S3FS_SETTINGS - _S3FS_HARMLESS)
    if unknown:
        return f"s3fs with settings {unknown}"
    client = dict(options.get("client_kwargs") or {})
    extra = sorted(set(client) - {"endpoint_url", "region_name"})
    if extra:
        return f"s3fs with client_kwargs {extra}"
    if "endpoint_url" in options and "endpoint_url" in client:
        return "s3fs with endpoint_url given twice"
    env = _s3fs_environment(options)
    if env:
        return env
    profile = options.get("profile")
    profile = None if profile is None else str(profile)
    environment = _environment(True)
    # The profile s3fs's botocore session reads (named, or the default):
    # all it says must be about keys or the region.
    scoped = _profile_settings(profile, environment)
    if isinstance(scoped, str):
        return scoped
    config: dict[str, str] = {}
    endpoint = options.get("endpoint_url") or client.get("endpoint_url")
    if endpoint:
        config["endpoint"] = str(endpoint)
    if client.get("region_name"):
        config["region"] = str(client["region_name"])
    elif os.environ.get("AWS_DEFAULT_REGION") or scoped.get("region"):
        # botocore's: AWS_DEFAULT_REGION, else the profile's (object_store
        # would take AWS_REGION's too).
        config["region"] = str(os.environ.get("AWS_DEFAULT_REGION") or scoped["region"])
    elif os.environ.get("AWS_REGION"):
        return "s3fs with AWS_REGION and no AWS_DEFAULT_REGION (botocore reads the latter)"
    if not config:
        return "s3fs without a region (client_kwargs={'region_name': ...})"
    # s3fs takes `key or username`, `secret or password`; with `anon` none.
    anonymous = bool(options.get("anon", False))
    keys = {
        "access_key_id": options.get("key") or options.get("username"),
        "secret_access_key": options.get("secret") or options.get("password"),
        "session_token": options.get("token"),
    }
    provider = None
    if not anonymous:
        config.update({name: str(value) for name, value in keys.items() if value})
        in_environment = os.environ.get("AWS_ACCESS_KEY_ID") and os.environ.get(
            "AWS_SECRET_ACCESS_KEY"
        )
        # Keys in the environment the remote layer reads as botocore does,
        # unless a profile is named (botocore then passes them over).
        if "access_key_id" not in config and (profile is not None or not in_environment):
            provider = _botocore_credentials(profile, environment)
    # Said either way, so that AWS_SKIP_SIGNATURE cannot decide it.
    config["skip_signature"] = "true" if anonymous else "false"
    path = str(getattr(store, "path", ""))
    for protocol in ("s3", "s3a"):
        path = path.removeprefix(f"{protocol}://")
    path = path.strip("/")
    if not path.partition("/")[0]:
        return "s3fs store without a bucket"
    # `?` and `#` would be read as a URL's query and fragment.
    if "?" in path or "#" in path:
        return f"s3fs store at a path the URL cannot carry ({_redacted(path)!r})"
    return RemoteSource(f"s3://{path}", tuple(sorted(config.items())), credential_provider=provider)


class _BotocoreCredentials:
    """The keys botocore finds for `profile` (the default chain if `None`):
    those s3fs signs with (its session is botocore's, with the same
    profile and environment), as an obstore credential provider, which the
    remote layer calls. botocore refreshes keys that expire (SSO, assumed
    roles, ...) 10-15 minutes before they do; the remote layer asks again
    every 5 minutes. Made by `_botocore_credentials` only (one per profile
    and environment), also when unpickled."""

    def __init__(self, profile: str | None) -> None:
        self.profile = profile
        self._lock = threading.Lock()
        self._credentials: Any = None

    def __call__(self) -> dict[str, Any]:
        with self._lock:
            if self._credentials is None:
                import botocore.session

                session = botocore.session.Session(profile=self.profile)
                credentials = session.get_credentials()
                if credentials is None:
                    where = f"profile {self.profile!r}" if self.profile else "its default chain"
                    raise LookupError(f"botocore found no credentials ({where})")
                self._credentials = credentials
            credentials = self._credentials
        frozen = credentials.get_frozen_credentials()
        return {
            "access_key_id": frozen.access_key,
            "secret_access_key": frozen.secret_key,
            "token": frozen.token,
            "expires_at": None,
        }

    def __reduce__(self) -> tuple[Any, tuple[str | None]]:
        # The copy is the provider of its process for that profile (a dask
        # worker's arrays share one store, one botocore session).
        return (_botocore_credentials, (self.profile,))

    def _forget(self) -> None:
        """In a child made by `fork()`: a new lock (a thread of the parent
        may have held it), botocore's session found again."""
        self._lock = threading.Lock()
        self._credentials = None


# One provider per profile and environment, so that arrays opened again
# share a kept store (stores are shared by provider object); held by the
# stores and sources that use it.
_BOTOCORE: weakref.WeakValueDictionary[tuple[Any, ...], _BotocoreCredentials] = (
    weakref.WeakValueDictionary()
)
_BOTOCORE_LOCK = threading.Lock()


def _botocore_credentials(
    profile: str | None, environment: tuple[Any, ...] | None = None
) -> _BotocoreCredentials:
    """The provider for `profile` in `environment` (`_environment(True)`,
    now if not given: unpickling)."""
    key = (profile, _environment(True) if environment is None else environment)
    with _BOTOCORE_LOCK:
        found = _BOTOCORE.get(key)
        if found is None:
            found = _BotocoreCredentials(profile)
            _BOTOCORE[key] = found
        return found


# What a profile may say besides where keys come from and its region:
# nothing else of it is read by the remote layer, which sends requests
# where the mapping says.
_PROFILE_KEYS = frozenset(
    {
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "aws_security_token",
        "credential_process",
        "credential_source",
        "role_arn",
        "source_profile",
        "role_session_name",
        "external_id",
        "duration_seconds",
        "mfa_serial",
        "web_identity_token_file",
        "sso_session",
        "sso_start_url",
        "sso_region",
        "sso_account_id",
        "sso_role_name",
        "sso_registration_scopes",
        "region",
        "output",
        "cli_pager",
        "cli_timestamp_format",
        "cli_history",
        "cli_binary_format",
        "cli_auto_prompt",
        "metadata_service_timeout",
        "metadata_service_num_attempts",
        "sts_regional_endpoints",
    }
)


@functools.lru_cache(maxsize=32)
def _profile_settings(profile: str | None, environment: tuple[Any, ...]) -> dict[str, Any] | str:
    """The settings of the profile botocore reads for s3fs (`profile`, or
    `AWS_PROFILE`'s, or the default) in `environment` (`_environment(True)`,
    the profile files' contents included, which keys the cache: botocore
    takes 5 ms, a tile server opens arrays often), or why the store is not
    mapped: a profile that is not there, or that says more than
    `_PROFILE_KEYS`."""
    del environment  # The cache's key: the settings depend on it.
    try:
        import botocore.exceptions
        import botocore.session
    except ImportError:
        return "s3fs without botocore"
    try:
        scoped = dict(botocore.session.Session(profile=profile).get_scoped_config())
    except botocore.exceptions.ProfileNotFound:
        return f"s3fs with a profile that is not there ({profile!r})"
    except botocore.exceptions.BotoCoreError as e:
        return f"s3fs with a profile botocore cannot read ({type(e).__name__})"
    more = sorted(set(scoped) - _PROFILE_KEYS)
    if more:
        return f"s3fs with a profile that sets {more}"
    return scoped


def _s3fs_environment(options: dict[str, object]) -> str | None:
    """A reason not to map an s3fs store, from the environment: the remote
    layer (object_store) reads every ``AWS_*`` setting it knows from it,
    botocore fewer and some others, so only those both read alike may be
    set."""
    unknown = sorted(
        name for name in os.environ if name.startswith("AWS_") and name not in _AWS_ENV_ALIKE
    )
    if unknown:
        return f"s3fs with {unknown} in the environment (read differently by botocore)"
    # Keys given without a token: botocore sends none, object_store the
    # environment's.
    given = options.get("key") or options.get("username")
    if given and not options.get("token") and os.environ.get("AWS_SESSION_TOKEN"):
        return "s3fs with keys and AWS_SESSION_TOKEN in the environment"
    return None


# The remote stores kept for arrays opened later (see `shared_store`), most
# recently used last; the process they were opened in.
_KEPT: OrderedDict[tuple[Any, ...], RemoteStore] = OrderedDict()
_KEPT_BY: list[int] = [os.getpid()]
_KEPT_LOCK = threading.Lock()
# Stores a parent process kept, in a child made by `fork()`: not used there
# (their runtime's threads exist only in the parent), and held, so that
# nothing of theirs is torn down in the child while the program runs (a
# store dropped in a child leaves its runtime as it is: the interpreter's
# shutdown may drop these).
_LEFT_BY_PARENT: list[RemoteStore] = []


# Variables besides `AWS_*` that decide how a store's requests are sent:
# where the profile files are (only `s3://` stores read them), proxies (any
# case), trusted certificates.
_ENV_READ = frozenset(
    {
        "HOME",
        "USERPROFILE",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)


def _after_fork_in_child() -> None:
    global _KEPT_LOCK, _BOTOCORE_LOCK
    # Another thread of the parent may have held the locks at the fork.
    _KEPT_LOCK = threading.Lock()
    _BOTOCORE_LOCK = threading.Lock()
    for provider in list(_BOTOCORE.values()):
        provider._forget()
    _forget_parents()


def _forget_parents() -> None:
    if _KEPT_BY[0] != os.getpid():
        _LEFT_BY_PARENT.extend(_KEPT.values())
        _KEPT.clear()
        _KEPT_BY[0] = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def stores_kept() -> int:
    """`codec_pipeline.remote_stores_kept` (default 16): how many remote
    stores are kept for arrays opened later; 0 keeps none."""
    value = zarr.config.get("codec_pipeline.remote_stores_kept", 16)
    return _count("codec_pipeline.remote_stores_kept", value, "stores")


def _file_digest(path: Path | None) -> bytes | None:
    """A digest of the file's contents (`None` when it cannot be read): a
    profile file rewritten in place, even within one tick of its
    modification time, is another file."""
    if path is None:
        return None
    try:
        return hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return None


def _shared_file(env: dict[str, str], variable: str, name: str) -> Path | None:
    """The shared AWS file `variable` names (a leading ``~/`` is the home
    directory), else ``~/.aws/name``: where the remote layer reads it."""
    home = env.get("HOME") or env.get("USERPROFILE")
    path = env.get(variable)
    if path is None:
        return Path(home, ".aws", name) if home else None
    if path.startswith("~/"):
        return Path(home, path[2:]) if home else None
    return Path(path)


def _environment(s3: bool, profiles: bool = True) -> tuple[Any, ...]:
    """What a store's settings come from besides its `RemoteSource`: the
    environment variables its HTTP client reads (proxies, certificates)
    and, for an `s3://` store (`s3`), those the remote layer reads (every
    `AWS_*` one: credentials, region, endpoint, ...; the home directory)
    and, when it reads them (`profiles`: not for an obstore `S3Store`),
    the contents of the shared AWS profile files, as digests."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.upper() in _ENV_READ or (s3 and k.startswith("AWS_"))
    }
    if not s3:
        return tuple(sorted(env.items()))
    if not profiles:
        return (tuple(sorted(env.items())), None)
    files = (
        _shared_file(env, "AWS_SHARED_CREDENTIALS_FILE", "credentials"),
        _shared_file(env, "AWS_CONFIG_FILE", "config"),
    )
    return (tuple(sorted(env.items())), tuple(_file_digest(f) for f in files))


def shared_store(source: RemoteSource) -> RemoteStore:
    """The remote store for `source`'s arrays: one kept from an earlier
    array if it was opened for the same URL, settings, signing choice and
    read-ahead, in the same environment (the same `AWS_*`, home, proxy and
    certificate variables, the AWS profile files unchanged when the store
    reads them: not for an obstore `S3Store`), else a new
    one, kept for the next (up to `source.stores_kept`, that is
    `codec_pipeline.remote_stores_kept` when the array was opened, the
    least recently used dropped first).

    A kept store keeps its connections and the shard indexes it read, each
    with its shard's version (reads of a shard are conditional on it, so a
    rewritten shard is read anew): an array opened again, as a tile server
    opens a product for each request, reads a window of a shard seen
    before in one round trip. Two arrays share a store only when every
    request of theirs would be sent and signed the same way."""
    kept = source.stores_kept
    if kept == 0:
        return _open(source)
    environment = _environment(source.url.startswith("s3://"), source.read_profiles)
    # The provider by identity: a kept store holds it, so its id is not
    # reused while the key is.
    provider = id(source.credential_provider) if source.credential_provider is not None else None
    key = (
        source.url,
        source.s3_config,
        source.anonymous,
        source.read_ahead,
        source.read_profiles,
        provider,
        environment,
    )
    with _KEPT_LOCK:
        _forget_parents()
        store = _KEPT.get(key)
        if store is not None:
            _KEPT.move_to_end(key)
            return store
        store = _open(source)
        _KEPT[key] = store
        while len(_KEPT) > kept:
            _KEPT.popitem(last=False)
        return store


def _open(source: RemoteSource) -> RemoteStore:
    """A new store for `source` (which fetches nothing: it reads no more
    than the environment and, with `read_profiles`, the profile files)."""
    return RemoteStore(
        source.url,
        list(source.s3_config),
        source.anonymous,
        source.read_ahead,
        source.credential_provider,
        read_profiles=source.read_profiles,
    )


def clear_remote_stores() -> None:
    """Drop the remote stores kept for arrays opened later (their
    connections and kept shard indexes); arrays already open keep theirs."""
    with _KEPT_LOCK:
        _forget_parents()
        _KEPT.clear()
