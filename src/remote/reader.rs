//! [`AsyncRemoteStore`]: zarrs' async storage traits over an object_store
//! HTTP or S3 store.
//!
//! Listing goes through `zarrs_object_store`. Reads are this crate's own,
//! for two reasons: `zarrs_object_store` 0.7 sends a `HEAD` before every
//! partial read (and zarrs' async-to-sync adapter turns a whole-object read
//! into a partial one), doubling the requests of a window; and it reports a
//! failed read by object_store's top-level message alone, without the key
//! or the causes (connection refused, reset, ...). Here a whole object is
//! one `GET`, a suffix (a shard index at the end) one ranged `GET`, bounded
//! ranges go to object_store's `get_ranges` (coalesced, separate requests,
//! no `multipart/byteranges`), and every range returned is checked to be as
//! long as asked for.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator};
use zarrs::storage::{
    AsyncListableStorageTraits, AsyncMaybeBytesIterator, AsyncReadableStorageTraits, Bytes,
    MaybeBytes, StorageError, StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix,
};
use zarrs_object_store::AsyncObjectStore;

use super::counting::Counters;
use super::credentials::Signing;
use super::redact::{Redactor, redact_url};
use super::{Fetched, RemoteError, RemoteOptions};
use crate::error_chain;

/// A read-only Zarr store at an `http(s)://` or `s3://` URL, for zarrs'
/// async API (`Array::async_open`, `async_retrieve_array_subset`, ...).
///
/// Errors name the URL of the key and carry the causes; a missing object
/// reads as absent (so a missing chunk is the fill value, as in every Zarr
/// implementation). [`RemoteStore`](super::RemoteStore) is the same store
/// for zarrs' sync API.
pub struct AsyncRemoteStore {
    /// The URL, redacted: the only form any message shows.
    url: String,
    /// The secrets of the URL and settings, kept out of messages.
    redactor: Redactor,
    /// How an `s3://` store signs, said by its 401/403 errors.
    signing: Option<Signing>,
    store: Arc<dyn ObjectStore>,
    listing: AsyncObjectStore<Arc<dyn ObjectStore>>,
    counters: Arc<Counters>,
    /// Suffix reads (shard indexes at the end of their shard) kept, when
    /// [`RemoteOptions::cache_shard_indexes`] is on.
    suffixes: Option<Mutex<SuffixCache>>,
}

/// The last bytes of objects, by key and length, up to a total size.
#[derive(Default)]
struct SuffixCache {
    entries: HashMap<(String, u64), Bytes>,
    bytes: usize,
}

impl SuffixCache {
    /// Cached bytes kept at most; past it the cache starts again empty.
    const LIMIT: usize = 64 << 20;

    fn insert(&mut self, key: &StoreKey, len: u64, bytes: &Bytes) {
        let entry = (key.as_str().to_string(), len);
        // Two readers that missed the same suffix at once both insert it:
        // the second replaces the first, whose bytes no longer count.
        if let Some(replaced) = self.entries.remove(&entry) {
            self.bytes -= replaced.len();
        }
        if self.bytes + bytes.len() > Self::LIMIT {
            self.entries.clear();
            self.bytes = 0;
        }
        self.bytes += bytes.len();
        self.entries.insert(entry, bytes.clone());
    }
}

// object_store's stores print their configuration (the URL with its
// query string, S3 settings) in `Debug`: only the redacted URL is shown.
impl std::fmt::Debug for AsyncRemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncRemoteStore")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Display for AsyncRemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

impl AsyncRemoteStore {
    /// Open the store at `url` (`http://`, `https://` or
    /// `s3://bucket[/prefix]`); see [`open_url`](super::open_url) for where
    /// S3 settings come from. Sends no request.
    ///
    /// # Errors
    /// [`RemoteError`] if the URL is not one of those, or object_store
    /// refuses its configuration.
    pub fn open(url: &str, options: &RemoteOptions) -> Result<Self, RemoteError> {
        let counters = Arc::new(Counters::default());
        let super::build::Built {
            store,
            redactor,
            signing,
        } = super::build::object_store(url, options, counters.clone())?;
        Ok(Self {
            url: shown_url(url),
            redactor,
            signing,
            listing: AsyncObjectStore::new(store.clone()),
            store,
            counters,
            suffixes: options
                .cache_shard_indexes
                .then(|| Mutex::new(SuffixCache::default())),
        })
    }

    /// The URL of the store (no trailing slash), redacted as
    /// [`redact_url`](super::redact_url) shows it: no user-info, no query
    /// string. This is the form every message of the store uses.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Requests sent and body bytes received since the store was opened or
    /// [`reset_fetched`](Self::reset_fetched) was last called.
    #[must_use]
    pub fn fetched(&self) -> Fetched {
        Fetched {
            requests: self.counters.requests(),
            bytes: self.counters.bytes(),
        }
    }

    /// Start counting [`fetched`](Self::fetched) from zero.
    pub fn reset_fetched(&self) {
        self.counters.reset();
    }

    /// A read error of `key`: its URL, then object_store's error and causes.
    /// A 401/403 of an `s3://` store also says how the request was signed
    /// and what to change.
    fn error(&self, key: &StoreKey, error: &object_store::Error) -> StorageError {
        let mut text = error_chain(error);
        if let (
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. },
            Some(signing),
        ) = (error, &self.signing)
        {
            text.push_str("; ");
            text.push_str(&signing.describe());
        }
        StorageError::Other(format!(
            "{}: {}",
            self.key_url(key),
            self.redactor.text(&text)
        ))
    }

    /// Where `key` is, as messages show it: `URL/key`, then `?***` when
    /// the store's URL has a query string.
    fn key_url(&self, key: &StoreKey) -> String {
        match self.url.strip_suffix("?***") {
            Some(base) => format!("{base}/{key}?***"),
            None => format!("{}/{key}", self.url),
        }
    }

    /// A listing error of `zarrs_object_store`, with secrets redacted.
    fn listing_error(&self, error: StorageError) -> StorageError {
        StorageError::Other(format!(
            "{}: {}",
            self.url,
            self.redactor.text(&error_chain(&error))
        ))
    }

    /// `bytes` if it holds the `expected` bytes asked for at `what`.
    fn checked(
        &self,
        key: &StoreKey,
        what: &str,
        expected: u64,
        bytes: Bytes,
    ) -> Result<Bytes, StorageError> {
        if bytes.len() as u64 == expected {
            Ok(bytes)
        } else {
            Err(StorageError::Other(format!(
                "{}: asked for {expected} bytes ({what}), got {}: the object is shorter than the store's metadata says (truncated?)",
                self.key_url(key),
                bytes.len()
            )))
        }
    }

    async fn get_range(&self, path: &Path, range: GetRange) -> object_store::Result<Bytes> {
        let options = GetOptions::new().with_range(Some(range));
        self.store.get_opts(path, options).await?.bytes().await
    }
}

/// `url` as messages show it: redacted, no trailing `/` before the query.
fn shown_url(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or(url);
    let query = if base.len() < url.len() { "?***" } else { "" };
    redact_url(base.trim_end_matches('/')) + query
}

/// A range zarrs asks for, as object_store asks for it.
enum Request {
    /// Nothing to fetch.
    Empty,
    /// Bounded: fetched with the others through `get_ranges`.
    Bounded(Range<u64>),
    /// A suffix or an open end: a request of its own.
    Open(GetRange),
}

/// `None` for a range that ends past `u64::MAX` (a shard index from a store
/// that misbehaves can ask for one).
fn request(range: ByteRange) -> Option<Request> {
    Some(match range {
        ByteRange::FromStart(_, Some(0)) | ByteRange::Suffix(0) => Request::Empty,
        ByteRange::FromStart(start, Some(len)) => Request::Bounded(start..start.checked_add(len)?),
        ByteRange::FromStart(start, None) => Request::Open(GetRange::Offset(start)),
        ByteRange::Suffix(len) => Request::Open(GetRange::Suffix(len)),
    })
}

#[async_trait::async_trait]
impl AsyncReadableStorageTraits for AsyncRemoteStore {
    async fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        let path = Path::from(key.as_str());
        let result = match self.store.get(&path).await {
            Ok(result) => result.bytes().await,
            Err(error) => Err(error),
        };
        match result {
            Ok(bytes) => Ok(Some(bytes)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(self.error(key, &error)),
        }
    }

    async fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<AsyncMaybeBytesIterator<'a>, StorageError> {
        let ranges: Vec<ByteRange> = byte_ranges.collect();
        // A whole object (zarrs' sync `get` asks for it this way): one GET.
        if let [ByteRange::FromStart(0, None)] = ranges.as_slice() {
            let bytes = self.get(key).await?;
            return Ok(bytes.map(|b| futures::stream::iter([Ok(b)]).boxed()));
        }
        // A shard index at the end of its shard, read before.
        if let ([ByteRange::Suffix(len)], Some(cache)) = (ranges.as_slice(), &self.suffixes) {
            let cached = cache
                .lock()
                .ok()
                .and_then(|c| c.entries.get(&(key.as_str().to_string(), *len)).cloned());
            if let Some(bytes) = cached {
                return Ok(Some(futures::stream::iter([Ok(bytes)]).boxed()));
            }
        }
        let path = Path::from(key.as_str());
        let requests = ranges
            .iter()
            .map(|&range| {
                request(range).ok_or_else(|| {
                    StorageError::Other(format!(
                        "{}: byte range {range} ends past the largest offset",
                        self.key_url(key)
                    ))
                })
            })
            .collect::<Result<Vec<Request>, _>>()?;
        let bounded: Vec<Range<u64>> = requests
            .iter()
            .filter_map(|r| match r {
                Request::Bounded(range) => Some(range.clone()),
                _ => None,
            })
            .collect();
        let bounded_fetch = async {
            if bounded.is_empty() {
                Ok(Vec::new())
            } else {
                self.store.get_ranges(&path, &bounded).await
            }
        };
        let open_fetch = futures::future::try_join_all(requests.iter().filter_map(|r| match r {
            Request::Open(range) => Some(self.get_range(&path, range.clone())),
            _ => None,
        }));
        let (bounded_bytes, open_bytes) = match futures::join!(bounded_fetch, open_fetch) {
            (Ok(bounded), Ok(open)) => (bounded, open),
            (Err(object_store::Error::NotFound { .. }), _)
            | (_, Err(object_store::Error::NotFound { .. })) => return Ok(None),
            (Err(error), _) | (_, Err(error)) => return Err(self.error(key, &error)),
        };
        let (mut bounded_bytes, mut open_bytes) =
            (bounded_bytes.into_iter(), open_bytes.into_iter());
        let mut out = Vec::with_capacity(ranges.len());
        for request in requests {
            let missing = || {
                StorageError::Other(format!(
                    "{}: object_store returned fewer ranges than asked for",
                    self.key_url(key)
                ))
            };
            out.push(match request {
                Request::Empty => Ok(Bytes::new()),
                Request::Bounded(r) => {
                    let bytes = bounded_bytes.next().ok_or_else(missing)?;
                    let what = format!("bytes {}..{}", r.start, r.end);
                    self.checked(key, &what, r.end - r.start, bytes)
                }
                Request::Open(GetRange::Suffix(len)) => {
                    let bytes = open_bytes.next().ok_or_else(missing)?;
                    let bytes = self.checked(key, &format!("the last {len} bytes"), len, bytes);
                    if let (Ok(bytes), Some(cache)) = (&bytes, &self.suffixes)
                        && let Ok(mut cache) = cache.lock()
                    {
                        cache.insert(key, len, bytes);
                    }
                    bytes
                }
                Request::Open(_) => open_bytes.next().ok_or_else(missing),
            });
        }
        Ok(Some(futures::stream::iter(out).boxed()))
    }

    async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        match self.store.head(&Path::from(key.as_str())).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(self.error(key, &error)),
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

#[async_trait::async_trait]
impl AsyncListableStorageTraits for AsyncRemoteStore {
    async fn list(&self) -> Result<StoreKeys, StorageError> {
        self.listing.list().await.map_err(|e| self.listing_error(e))
    }

    async fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        self.listing
            .list_prefix(prefix)
            .await
            .map_err(|e| self.listing_error(e))
    }

    async fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        self.listing
            .list_dir(prefix)
            .await
            .map_err(|e| self.listing_error(e))
    }

    async fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        self.listing
            .size_prefix(prefix)
            .await
            .map_err(|e| self.listing_error(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_past_the_largest_offset_is_refused() {
        assert!(request(ByteRange::FromStart(u64::MAX, Some(2))).is_none());
        assert!(matches!(
            request(ByteRange::FromStart(u64::MAX - 2, Some(2))),
            Some(Request::Bounded(r)) if r == (u64::MAX - 2..u64::MAX)
        ));
        assert!(matches!(
            request(ByteRange::FromStart(7, Some(0))),
            Some(Request::Empty)
        ));
    }

    #[test]
    fn a_suffix_cached_twice_counts_once() {
        let key = StoreKey::new("c/0/0").unwrap();
        let mut cache = SuffixCache::default();
        cache.insert(&key, 16, &Bytes::from(vec![1u8; 16]));
        cache.insert(&key, 16, &Bytes::from(vec![2u8; 16]));
        assert_eq!(cache.bytes, 16);
        assert_eq!(cache.entries.len(), 1);
        cache.insert(&key, 8, &Bytes::from(vec![3u8; 8]));
        assert_eq!(cache.bytes, 24);
    }
}
