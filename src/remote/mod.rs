//! Zarr stores at `http(s)://` and `s3://` URLs, through object_store
//! (feature `remote`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use zarrs_extension_codecs::ArrayReadExt;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! zarrs_extension_codecs::register_overrides();
//! let store = Arc::new(zarrs_extension_codecs::remote::open_url("s3://bucket/product.zarr")?);
//! let array = zarrs::array::Array::open(store.clone(), "/measurements/reflectance")?;
//! let window = zarrs::array::ArraySubset::new_with_ranges(&[0..256, 1024..1280]);
//! let values: Vec<f64> = array.retrieve_array_subset_vec(&window)?;
//! println!("{} values from {} requests", values.len(), store.fetched().requests);
//! # Ok(()) }
//! ```
//!
//! object_store's HTTP store and S3 store read several ranges of one object
//! as separate requests, neighbouring ranges coalesced (so any server that
//! answers single-range requests works; none has to answer multi-range
//! requests, in whatever format), with retries and timeouts.
//!
//! [`RemoteStore`] serves zarrs' sync API: zarrs' async-to-sync adapter
//! over [`AsyncRemoteStore`], blocking on a small tokio runtime of the
//! store's own. [`AsyncRemoteStore`] serves zarrs' async API on the
//! caller's tokio runtime.
//!
//! `s3://bucket/prefix` takes its settings from the usual AWS environment
//! variables (`AWS_ENDPOINT_URL`, `AWS_REGION` / `AWS_DEFAULT_REGION`, ...,
//! as object_store's `AmazonS3Builder::from_env` reads them) and
//! [`RemoteOptions::s3_config`] over them. Requests are signed with
//! credentials found as the AWS command line tools find them: keys in the
//! options or the environment, a profile of the shared files
//! (`AWS_PROFILE`, `~/.aws/credentials`, `~/.aws/config`; static keys and
//! `credential_process`, not SSO or assumed roles), web identity,
//! container credentials, an instance role. With none anywhere, requests
//! go unsigned, which is what a public bucket needs; the instance metadata
//! service is asked only at the first request and for at most [`INSTANCE_PROBE`]
//! (`AWS_EC2_METADATA_DISABLED=true` skips it). An explicit choice wins:
//! [`RemoteOptions::anonymous`], then `aws_skip_signature` in `s3_config`,
//! then `AWS_SKIP_SIGNATURE`. A 401/403 error says whether the request was
//! signed, where the credentials came from, and what to change.
//!
//! Shard indexes are kept (up to [`RemoteOptions::shard_index_cache_bytes`],
//! 64 MiB by default), so a window of a shard seen before costs its inner
//! chunks' requests only. Each keeps the version (a strong ETag; a server
//! that gives only a weak one or Last-Modified gets nothing kept) of its
//! shard, and later reads of the shard are conditional on it. A shard
//! deleted meanwhile reads as the fill value. A shard rewritten while the store is open fails
//! the read that finds it with an [`ObjectChanged`](crate::ObjectChanged)
//! error (its message says "the object changed while it was being read");
//! [`ArrayReadExt`](crate::ArrayReadExt) and
//! [`AsyncArrayReadExt`](crate::AsyncArrayReadExt) then read once more
//! (with the new index), zarrs' own `retrieve_*` methods return the error.
//! Two reads of one rewritten shard at once are covered for the crate's
//! read engine (it reads the index again with the chunks, and the store
//! answers it from the entry the chunk requests are conditional on); what
//! is not covered (the same through zarrs' own reads, a rewrite that
//! keeps a server's strong ETag, a rewrite between two requests of one
//! call when nothing is kept) is in `docs/stores-and-remote.md`.
//!
//! No message shows a secret: a URL's user-info and query string (a
//! password, an Azure SAS token) are shown as `***` ([`redact_url`]) in
//! every error, in `Display` and `Debug` of the stores, in
//! [`RemoteStore::url`]; credential values of `s3_config` are hidden in
//! `Debug` of [`RemoteOptions`]. An HTTP store's query string is sent with
//! every request.

mod build;
mod container;
mod counting;
mod credential_process;
mod credentials;
mod error;
mod index_cache;
mod read_ahead;
mod reader;
mod refreshing;
mod transport;

use std::sync::Arc;
use std::time::Duration;

use zarrs::storage::byte_range::ByteRangeIterator;
use zarrs::storage::storage_adapter::async_to_sync::{
    AsyncToSyncBlockOn, AsyncToSyncStorageAdapter,
};
use zarrs::storage::{
    ListableStorageTraits, MaybeBytes, MaybeBytesIterator, ReadableStorageTraits, StorageError,
    StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix,
};

pub use crate::redact::redact_url;
pub use credentials::INSTANCE_PROBE;
pub use error::RemoteError;
/// object_store's credential types, as [`RemoteOptions::credentials`]
/// takes them (the object_store this crate builds with).
pub use object_store::{
    CredentialProvider,
    aws::{AwsCredential, AwsCredentialProvider},
};
pub use reader::AsyncRemoteStore;
pub use refreshing::{FetchedKeys, REFRESH_BEFORE, RefreshingCredentials, unix_time};
pub use transport::{ERROR_BODY_BYTES, MAX_REDIRECTS};

/// The default of [`RemoteOptions::shard_read_ahead_bytes`]: 1 MiB, the
/// gap object_store's `get_ranges` fills rather than send another request
/// (`OBJECT_STORE_COALESCE_DEFAULT`).
pub const DEFAULT_SHARD_READ_AHEAD_BYTES: u64 = 1 << 20;

/// How a remote store connects and retries.
///
/// Its `Debug` shows the names of the S3 settings and redacts the values of
/// credentials (access key, secret key, session token) and of URLs.
#[derive(Clone)]
#[non_exhaustive]
pub struct RemoteOptions {
    /// Retries of a failed request (connection errors, dropped connections,
    /// 5xx answers, timeouts), with exponential backoff. Default 3.
    pub max_retries: usize,
    /// No retry starts later than this after the first attempt. Default 30 s.
    pub retry_timeout: Duration,
    /// Time allowed for one request, body included. Default 60 s.
    pub timeout: Duration,
    /// Time allowed for connecting. Default 5 s.
    pub connect_timeout: Duration,
    /// `s3://` only: send requests unsigned (`Some(true)`), signed
    /// (`Some(false)`: with no credentials before the instance metadata
    /// service, that service signs them, and with it disabled by
    /// `AWS_EC2_METADATA_DISABLED`, open fails), or
    /// let `aws_skip_signature` in `s3_config`, `AWS_SKIP_SIGNATURE` or the
    /// credentials found decide (`None`, the default: signed when
    /// credentials are found, else unsigned).
    pub anonymous: Option<bool>,
    /// `s3://` only: where requests get their signature, given in code
    /// (`None` by default: found as the AWS tools find it). Any
    /// [`CredentialProvider`] of [`AwsCredential`]s:
    /// [`RefreshingCredentials`] over a function of the caller's, or an
    /// adapter of the caller's own over the AWS SDK's provider chain
    /// (`aws-config`: SSO, assumed roles, ...). It signs every request,
    /// ahead of keys in `s3_config` or the environment; with
    /// `anonymous` (or another explicit choice) set to unsigned, open
    /// fails. A 401/403 names it as where the keys came from.
    pub credentials: Option<object_store::aws::AwsCredentialProvider>,
    /// `s3://` only: object_store S3 settings by name (`aws_endpoint_url`,
    /// `aws_region`, `aws_access_key_id`, `aws_secret_access_key`, ...),
    /// applied over those from the environment. Empty by default.
    pub s3_config: Vec<(String, String)>,
    /// Bytes of shard indexes kept (default 64 MiB; 0 keeps none), so
    /// that a window of a shard seen before costs its inner chunks only.
    /// An index is kept with the version (a strong ETag) of the
    /// object it came from, and later reads of the shard are conditional on
    /// it: a shard rewritten while the store is open is read anew, never
    /// with its old index; a shard deleted meanwhile reads as the fill
    /// value. A server that gives no strong ETag gets nothing kept; an index larger than the limit is not kept.
    pub shard_index_cache_bytes: usize,
    /// Bytes read with a shard's index when it is not kept (default
    /// [`DEFAULT_SHARD_READ_AHEAD_BYTES`], 1 MiB; 0 reads the index alone):
    /// the last this many bytes of the shard (index at the end), or the
    /// first (index at the start), in the one request. A shard no larger
    /// is then read whole, and the inner chunks a window needs come from
    /// it: the first window of the shard costs one round trip instead of
    /// two (through the crate's read engine, `ArrayReadExt` /
    /// `AsyncArrayReadExt`). Of a larger shard, the chunks that lie in the
    /// bytes read come from them, and the others are fetched on condition
    /// of the version the response showed (with no version, all of them
    /// are fetched, as without read-ahead).
    ///
    /// It trades bandwidth for a round trip: worth it where the bytes take
    /// less time to arrive than a round trip (1 MiB at 20 ms and
    /// 1 Gbit/s takes 8 ms; object_store's own `get_ranges` merges ranges
    /// up to 1 MiB apart on the same reasoning). So that an array of large
    /// shards does not pay it on every first window of a shard, its index
    /// reads fetch the index alone when its `zarr.json` (read through the
    /// store, or noted) says a shard stores more than 4 times this before
    /// compression, and once one of its shards is seen to be larger than
    /// this (the store remembers up to 4096 arrays so). Read-ahead bytes are
    /// held only until the next call on their key (the chunk call of the
    /// same read), within a limit of their own of
    /// `shard_index_cache_bytes`; nothing is read ahead with that at 0, nor
    /// for a shard whose version is kept (its index marks a missing inner
    /// chunk, and is read alone by every window). It cannot make a read
    /// stale: a later read of the shard reads or checks the index again, as
    /// without it. Set it to 0 for metered transfer.
    pub shard_read_ahead_bytes: u64,
    /// The most bytes one response may carry when no range was asked for
    /// (a whole chunk, a shard read whole, a listing page, a credential
    /// answer), default [`DEFAULT_MAX_OBJECT_BYTES`] (2 GiB): a longer body
    /// fails its request (raise it for shards over 2 GiB that windows
    /// cover whole). A ranged response may carry no more than its range
    /// (nor this). No buffer is ever sized by the length a server
    /// announces.
    pub max_object_bytes: u64,
    /// The most bytes of a metadata document (`zarr.json`, `.zarray`,
    /// `.zattrs`, `.zgroup`, `.zmetadata`), default
    /// [`DEFAULT_MAX_METADATA_BYTES`] (64 MiB): a longer one is an error
    /// naming its key.
    pub max_metadata_bytes: u64,
    /// `s3://` only: whether credentials, region and endpoint may come from
    /// the AWS profile files (`AWS_PROFILE`, `~/.aws/credentials`,
    /// `~/.aws/config`), as the AWS CLI reads them. Default `true`. The
    /// Python pipeline sets it to `false` for a store that stands for an
    /// obstore `S3Store`, which never reads those files: the mapped store
    /// signs as the original would.
    pub read_profiles: bool,
}

/// The default of [`RemoteOptions::max_object_bytes`]: 2 GiB, the largest
/// chunk numcodecs' blosc writes.
pub const DEFAULT_MAX_OBJECT_BYTES: u64 = 2 << 30;

/// The default of [`RemoteOptions::max_metadata_bytes`]: 64 MiB.
pub const DEFAULT_MAX_METADATA_BYTES: u64 = 64 << 20;

impl RemoteOptions {
    /// These options with the S3 setting `name` (as object_store spells
    /// it, e.g. `aws_endpoint_url`) set to `value`.
    #[must_use]
    pub fn with_s3_config(mut self, name: &str, value: &str) -> Self {
        self.s3_config.push((name.to_string(), value.to_string()));
        self
    }
}

impl std::fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s3_config: Vec<(&str, String)> = self
            .s3_config
            .iter()
            .map(|(name, value)| {
                let shown = if build::is_credential_setting(name) {
                    "***".to_string()
                } else {
                    redact_url(value)
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("RemoteOptions")
            .field("max_retries", &self.max_retries)
            .field("retry_timeout", &self.retry_timeout)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("anonymous", &self.anonymous)
            // Whether there is one: a provider's own `Debug` is not ours to
            // vouch for.
            .field("credentials", &self.credentials.as_ref().map(|_| "..."))
            .field("s3_config", &s3_config)
            .field("shard_index_cache_bytes", &self.shard_index_cache_bytes)
            .field("shard_read_ahead_bytes", &self.shard_read_ahead_bytes)
            .field("max_object_bytes", &self.max_object_bytes)
            .field("max_metadata_bytes", &self.max_metadata_bytes)
            .field("read_profiles", &self.read_profiles)
            .finish()
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            max_retries: 3,
            retry_timeout: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(5),
            anonymous: None,
            credentials: None,
            s3_config: Vec::new(),
            shard_index_cache_bytes: 64 << 20,
            shard_read_ahead_bytes: DEFAULT_SHARD_READ_AHEAD_BYTES,
            max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
            max_metadata_bytes: DEFAULT_MAX_METADATA_BYTES,
            read_profiles: true,
        }
    }
}

/// What a store has fetched: requests sent (`GET`, `HEAD`, listings) and
/// body bytes received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fetched {
    /// Requests sent.
    pub requests: u64,
    /// Body bytes received.
    pub bytes: u64,
}

/// Open the store at `url` for zarrs' sync API, with default
/// [`RemoteOptions`]: `http://` / `https://` (the URL of the store's root,
/// where its `zarr.json` is) or `s3://bucket[/prefix]`.
///
/// # Errors
/// [`RemoteError`] if the URL is not one of those, object_store refuses
/// its configuration, or the runtime cannot start. Nothing is fetched yet,
/// so a wrong host or a missing store shows at the first read.
pub fn open_url(url: &str) -> Result<RemoteStore, RemoteError> {
    RemoteStore::open(url, &RemoteOptions::default())
}

/// Runs the adapter's futures on the store's runtime (always `Some`; taken
/// only when dropped), made in the process with the id beside it.
struct TokioBlockOn(Option<tokio::runtime::Runtime>, u32);

impl AsyncToSyncBlockOn for TokioBlockOn {
    fn block_on<F: core::future::Future>(&self, future: F) -> F::Output {
        self.0
            .as_ref()
            .expect("the runtime is taken only on drop")
            .block_on(future)
    }
}

impl Drop for TokioBlockOn {
    /// The runtime's threads are let go, not waited for: dropped inside an
    /// async runtime, waiting would block that runtime (tokio panics); and
    /// a blocking task may be waiting for what the dropping thread holds
    /// (a credential provider called into Python waits for the GIL, which
    /// the thread dropping a store from Python holds). Dropped in a child
    /// made by `fork()` (a Python worker that inherited the store and
    /// exits), the runtime's threads exist only in the parent: shutting
    /// them down would never end, and locks they held at the fork stay
    /// held, so the runtime is left as it is (leaked).
    fn drop(&mut self) {
        let Some(runtime) = self.0.take() else { return };
        if std::process::id() != self.1 {
            std::mem::forget(runtime);
        } else {
            runtime.shutdown_background();
        }
    }
}

/// A read-only Zarr store at an `http(s)://` or `s3://` URL, for zarrs'
/// sync API (`Array::open`, `retrieve_array_subset`, [`ArrayReadExt`](crate::ArrayReadExt)).
///
/// zarrs' `AsyncToSyncStorageAdapter` over an [`AsyncRemoteStore`], on a
/// tokio runtime of its own (two worker threads for I/O; each read runs on
/// the thread that asks for it, so zarrs' threads read in parallel). Its
/// methods return an error, rather than block or panic, when called from
/// inside an async runtime: use [`async_store`](Self::async_store) and
/// zarrs' async API there.
pub struct RemoteStore {
    store: Arc<AsyncRemoteStore>,
    adapter: AsyncToSyncStorageAdapter<AsyncRemoteStore, TokioBlockOn>,
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteStore")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Display for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.url())
    }
}

impl RemoteStore {
    /// Open the store at `url` (see [`open_url`]) with `options`.
    ///
    /// # Errors
    /// As [`open_url`].
    pub fn open(url: &str, options: &RemoteOptions) -> Result<Self, RemoteError> {
        let store = Arc::new(AsyncRemoteStore::open(url, options)?);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zarrs-remote")
            .enable_all()
            .build()
            .map_err(|source| RemoteError::Runtime {
                url: store.url().to_string(),
                source,
            })?;
        Ok(Self {
            adapter: AsyncToSyncStorageAdapter::new(
                store.clone(),
                TokioBlockOn(Some(runtime), std::process::id()),
            ),
            store,
        })
    }

    /// The URL of the store (no trailing slash), redacted as
    /// [`redact_url`] shows it: no user-info, no query string. `Display`
    /// shows the same.
    #[must_use]
    pub fn url(&self) -> &str {
        self.store.url()
    }

    /// Requests sent and body bytes received since the store was opened or
    /// [`reset_fetched`](Self::reset_fetched) was last called.
    #[must_use]
    pub fn fetched(&self) -> Fetched {
        self.store.fetched()
    }

    /// Start counting [`fetched`](Self::fetched) from zero.
    pub fn reset_fetched(&self) {
        self.store.reset_fetched();
    }

    /// Take `zarr_json`, the `zarr.json` at `key`, as if it had been read
    /// through this store (see [`AsyncRemoteStore::note_metadata`]).
    pub fn note_metadata(&self, key: &str, zarr_json: &[u8]) {
        self.store.note_metadata(key, zarr_json);
    }

    /// The same store for zarrs' async API (sharing the counts).
    #[must_use]
    pub fn async_store(&self) -> Arc<AsyncRemoteStore> {
        self.store.clone()
    }

    /// An error instead of tokio's panic when blocking inside a runtime.
    fn not_in_async(&self) -> Result<(), StorageError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(StorageError::Other(format!(
                "{}: a sync read from inside an async runtime would block it: use RemoteStore::async_store() with zarrs' async API",
                self.url()
            )));
        }
        Ok(())
    }
}

impl ReadableStorageTraits for RemoteStore {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        self.not_in_async()?;
        self.adapter.get(key)
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        self.not_in_async()?;
        self.adapter.get_partial_many(key, byte_ranges)
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.not_in_async()?;
        self.adapter.size_key(key)
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

impl ListableStorageTraits for RemoteStore {
    fn list(&self) -> Result<StoreKeys, StorageError> {
        self.not_in_async()?;
        self.adapter.list()
    }

    fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        self.not_in_async()?;
        self.adapter.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        self.not_in_async()?;
        self.adapter.list_dir(prefix)
    }

    fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        self.not_in_async()?;
        self.adapter.size_prefix(prefix)
    }
}
