//! [`AsyncRemoteStore`]: zarrs' async storage traits over an object_store
//! HTTP or S3 store.
//!
//! Reads and listings are this crate's own, over object_store, for three
//! reasons: `zarrs_object_store` 0.7 sends a `HEAD` before every
//! partial read (and zarrs' async-to-sync adapter turns a whole-object read
//! into a partial one), doubling the requests of a window; it reports a
//! failed read by object_store's top-level message alone, without the key
//! or the causes (connection refused, reset, ...); and it lists a prefix
//! percent-encoded (`~`, `[`, ...: another prefix) and panics on a listed
//! key it cannot take. Here a whole object is
//! one `GET`, a suffix (a shard index at the end) one ranged `GET`, bounded
//! ranges go to object_store's `get_ranges` (coalesced, separate requests,
//! no `multipart/byteranges`), and every range returned is checked to be as
//! long as asked for, and every body as long as the range its response
//! names.
//!
//! Shard indexes are kept ([`IndexCache`], on by default, within
//! [`RemoteOptions::shard_index_cache_bytes`]), so that a window of a shard
//! seen before costs its inner chunks only. Each kept index keeps the
//! version of the response that carried it, a strong ETag (a weak one or
//! Last-Modified alone is no version: servers make them of the
//! modification time in seconds and the size, which a rewrite can keep),
//! and every later ranged read of that key is conditional on it
//! (`If-Match`) and checked against the version the response shows. A
//! changed object (412, or another version) drops the key's index and
//! fails the read with [`ObjectChanged`] (typed), on which the
//! crate's read path reads once more (and then reads the new index). A
//! deleted object (404, which S3 answers even with `If-Match`; or a 412
//! that a `HEAD` finds is a 404) drops it too and reads as absent: a shard
//! zarr-python deleted because it became all fill value reads as the fill
//! value. A server that gives no strong ETag gets nothing kept.
//!
//! Every body is read as it arrives, bounded by what was asked for (a
//! range's length; [`RemoteOptions::max_metadata_bytes`] for a metadata
//! document, [`RemoteOptions::max_object_bytes`] for another whole
//! object), never into a buffer sized by the length a server announces
//! (the transport bounds them too: `transport.rs`).
//!
//! A call that asks for several ranges takes the key's kept version and
//! ranges at once ([`IndexCache::snapshot`]): its requests are conditional
//! on that version, and a kept index range asked for among them (the read
//! engine asks for the index again with a shard's inner chunks, to check
//! that they belong to the index it used) is answered from that same
//! entry, with no request. So the index the call returns and the chunks it
//! fetched come from one version, and a reader that was served an older
//! index sees the difference.
//!
//! With [`RemoteOptions::shard_read_ahead_bytes`] (1 MiB by default), an
//! index that is not kept is read with that many bytes of its shard (a
//! shard no larger comes whole), which are held ([`ReadAhead`]) to answer
//! the next call on its key if that call asks for the index range with the
//! chunks (the read engine's call): the ranges they hold with no request,
//! the others on condition of their version. The first window of a small
//! shard is one request.
//!
//! An index with a missing inner chunk (offset and length all ones) is
//! kept for that check only, not served to a read of the index alone: a
//! window of missing chunks only sends no request, so nothing would check
//! the version. Such shards cost their index's request on every window, as
//! with no cache, and their chunk reads are conditional on its version.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::{StreamExt, TryFutureExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    GetOptions, GetRange, OBJECT_STORE_COALESCE_DEFAULT, ObjectMeta, ObjectStore, ObjectStoreExt,
};
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator};
use zarrs::storage::{
    AsyncListableStorageTraits, AsyncMaybeBytesIterator, AsyncReadableStorageTraits, Bytes,
    MaybeBytes, StorageError, StoreKey, StoreKeys, StoreKeysPrefixes, StorePrefix,
};

use super::counting::Counters;
use super::credentials::Signing;
use super::index_cache::{IndexCache, IndexRead, has_version, same_version};
use super::read_ahead::{Answer, Held, ReadAhead};
use super::{Fetched, RemoteError, RemoteOptions};
use crate::error_chain;
use crate::read::ObjectChanged;
use crate::redact::{Redactor, redact_url};

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
    counters: Arc<Counters>,
    /// Shard indexes kept, with their objects' versions; `None` when
    /// [`RemoteOptions::shard_index_cache_bytes`] is 0.
    indexes: Option<Mutex<IndexCache>>,
    /// [`RemoteOptions::shard_read_ahead_bytes`].
    read_ahead: u64,
    /// Shards read whole with their index, until the next call on their key.
    held: Mutex<ReadAhead>,
    /// [`RemoteOptions::max_object_bytes`].
    max_object_bytes: u64,
    /// [`RemoteOptions::max_metadata_bytes`].
    max_metadata_bytes: u64,
}

/// Why a read that may be conditional failed.
enum Fetch {
    /// object_store's error.
    Store(object_store::Error),
    /// The object is not the version a kept index came from: how it shows.
    Changed(String),
    /// The object is gone (deleted since its index was read: zarr-python
    /// deletes a shard that becomes all fill value): it reads as absent.
    Gone,
    /// The body is not what the response said it holds (shorter, or
    /// longer than asked for): how.
    Short(String),
}

/// The most bytes set aside for a body before they arrive: an honest
/// response of this size or less gets one buffer of its exact length; the
/// length a response announces is never trusted past this.
const PREALLOCATE_AT_MOST: u64 = 64 << 20;

/// The body of `result`, which may carry at most `limit` bytes: read as it
/// arrives, into a buffer sized by the length the response announces only
/// up to [`PREALLOCATE_AT_MOST`] (a server announcing 2^50 bytes would
/// otherwise make the allocation fail, which aborts the process).
async fn collect_body(result: object_store::GetResult, limit: u64) -> Result<Bytes, Fetch> {
    let announced = result.range.end.saturating_sub(result.range.start);
    let mut stream = result.into_stream();
    let too_long = |n: u64| {
        Fetch::Short(format!(
            "the response carried more than the {limit} bytes it may ({n} so far)"
        ))
    };
    let Some(first) = stream.next().await.transpose().map_err(Fetch::Store)? else {
        return Ok(Bytes::new());
    };
    if first.len() as u64 > limit {
        return Err(too_long(first.len() as u64));
    }
    let Some(second) = stream.next().await.transpose().map_err(Fetch::Store)? else {
        // The whole body in one piece: no copy.
        return Ok(first);
    };
    let capacity = announced.min(limit).min(PREALLOCATE_AT_MOST);
    let mut body = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0));
    for piece in [first, second] {
        body.extend_from_slice(&piece);
    }
    while let Some(piece) = stream.next().await.transpose().map_err(Fetch::Store)? {
        let total = body.len() as u64 + piece.len() as u64;
        if total > limit {
            return Err(too_long(total));
        }
        body.extend_from_slice(&piece);
    }
    if body.len() as u64 > limit {
        return Err(too_long(body.len() as u64));
    }
    Ok(Bytes::from(body))
}

/// Whether `key` names a metadata document (capped by
/// [`RemoteOptions::max_metadata_bytes`]).
fn is_metadata(key: &str) -> bool {
    let name = key.rsplit('/').next().unwrap_or(key);
    matches!(
        name,
        "zarr.json" | ".zarray" | ".zattrs" | ".zgroup" | ".zmetadata"
    )
}

/// The most bytes a response to `range` may carry.
fn range_limit(range: &GetRange, max_object_bytes: u64) -> u64 {
    match range {
        GetRange::Bounded(r) => r.end.saturating_sub(r.start),
        GetRange::Suffix(n) => *n,
        GetRange::Offset(_) => max_object_bytes,
    }
}

/// A version as messages show it.
fn shown_version(meta: &ObjectMeta) -> String {
    match &meta.e_tag {
        Some(e_tag) => format!("ETag {e_tag}, {} bytes", meta.size),
        None => format!("modified {}, {} bytes", meta.last_modified, meta.size),
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
            url: shown_url(&super::build::lower_scheme(url)),
            redactor,
            signing,
            store,
            counters,
            indexes: (options.shard_index_cache_bytes > 0)
                .then(|| Mutex::new(IndexCache::new(options.shard_index_cache_bytes))),
            read_ahead: options.shard_read_ahead_bytes,
            held: Mutex::new(ReadAhead::new(options.shard_index_cache_bytes)),
            max_object_bytes: options.max_object_bytes,
            max_metadata_bytes: options.max_metadata_bytes,
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

    /// Take `zarr_json`, the `zarr.json` at `key` (`"zarr.json"` for the
    /// store's root, `"a/b/zarr.json"`), as if it had been read through
    /// this store, for an array opened from metadata read elsewhere
    /// (`Array::new_with_metadata`): an array whose shard indexes are at the
    /// start of its shards has them kept only once the store knows that,
    /// and an array whose shards are larger than the read-ahead (by what
    /// they store before compression) has its indexes read alone from its
    /// first window on.
    pub fn note_metadata(&self, key: &str, zarr_json: &[u8]) {
        if let Some(mut indexes) = self.indexes() {
            indexes.note_metadata(key, zarr_json);
        }
        if self.read_ahead > 0 {
            self.read_ahead_state()
                .note_metadata(key, zarr_json, self.read_ahead);
        }
    }

    /// A read error of `key`: its URL, then object_store's error and causes.
    /// A 401/403 of an `s3://` store also says how the request was signed
    /// and what to change.
    fn error(&self, key: &StoreKey, error: &object_store::Error) -> StorageError {
        StorageError::Other(format!("{}: {}", self.key_url(key), self.described(error)))
    }

    /// object_store's error and causes, secrets redacted; for a 401/403 of
    /// an `s3://` store, how the request was signed and what to change.
    fn described(&self, error: &object_store::Error) -> String {
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
        self.redactor.text(&text)
    }

    /// The object of `key`: its path as written, as zarr-python (through
    /// obstore or s3fs) and the AWS tools name it. object_store's
    /// `Path::from` would percent-encode `~`, `[`, `%`, ... and read
    /// another object.
    fn object_path(&self, key: &StoreKey) -> Result<Path, StorageError> {
        Path::parse(key.as_str()).map_err(|e| {
            StorageError::Other(format!("{}: not an object's key: {e}", self.key_url(key)))
        })
    }

    /// Where `key` is, as messages show it: `URL/key`, then `?***` when
    /// the store's URL has a query string.
    fn key_url(&self, key: &StoreKey) -> String {
        self.url_of(key.as_str())
    }

    /// `URL/path`, then `?***` when the store's URL has a query string.
    fn url_of(&self, path: &str) -> String {
        match self.url.strip_suffix("?***") {
            Some(base) => format!("{base}/{path}?***"),
            None => format!("{}/{path}", self.url),
        }
    }

    /// A listing error under `prefix`: the store's URL and prefix, then
    /// what [`described`](Self::described) says.
    fn listing_error(&self, prefix: &StorePrefix, error: &object_store::Error) -> StorageError {
        StorageError::Other(format!(
            "{} (listing): {}",
            self.url_of(prefix.as_str()),
            self.described(error)
        ))
    }

    /// The object_store path of `prefix`, as written (`Path::from` would
    /// percent-encode `~`, `[`, ... and list another prefix); `None` for
    /// the root.
    fn prefix_path(&self, prefix: &StorePrefix) -> Result<Option<Path>, StorageError> {
        if prefix.as_str().is_empty() {
            return Ok(None);
        }
        Path::parse(prefix.as_str()).map(Some).map_err(|e| {
            StorageError::Other(format!(
                "{}: not an object key prefix: {e}",
                self.url_of(prefix.as_str())
            ))
        })
    }

    /// The keys of the objects under `prefix` (all of them, however deep),
    /// sorted, without directory markers.
    async fn keys_under(&self, prefix: &StorePrefix) -> Result<Vec<StoreKey>, StorageError> {
        let path = self.prefix_path(prefix)?;
        let objects: Vec<ObjectMeta> = self
            .store
            .list(path.as_ref())
            .try_collect()
            .await
            .map_err(|e| self.listing_error(prefix, &e))?;
        let mut keys = not_markers(&objects, path.as_ref(), &[])
            .map(|object| self.listed_key(&object.location))
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort();
        Ok(keys)
    }

    /// The store key of a listed object: its path as the server names it.
    fn listed_key(&self, location: &Path) -> Result<StoreKey, StorageError> {
        StoreKey::new(location.as_ref()).map_err(|e| {
            StorageError::Other(format!(
                "{}: the listed object {location} has no store key: {e}",
                self.url
            ))
        })
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

    /// The index cache, if on (a panic of another reader while holding
    /// it leaves nothing half-done that matters: at worst an entry less).
    fn indexes(&self) -> Option<MutexGuard<'_, IndexCache>> {
        self.indexes
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// The read-ahead's state (a panic of another reader while holding it
    /// leaves nothing half-done that matters: at worst bytes not held).
    fn read_ahead_state(&self) -> MutexGuard<'_, ReadAhead> {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What is held of `key` read with its index, no longer held (every
    /// call on the key takes it: see [`ReadAhead`]).
    fn take_held(&self, key: &StoreKey) -> Option<Held> {
        self.read_ahead_state().take(key.as_str())
    }

    /// GET `range` of `path`, on condition that the object is still the
    /// version `known` (that of a kept index): its bytes, the version the
    /// response shows, and the range of the object the bytes are (checked
    /// to be as long as it).
    async fn fetch(
        &self,
        path: &Path,
        range: GetRange,
        known: Option<&ObjectMeta>,
    ) -> Result<(Bytes, ObjectMeta, Range<u64>), Fetch> {
        let limit = range_limit(&range, self.max_object_bytes);
        let mut options = GetOptions::new().with_range(Some(range));
        // Only strong ETags are versions here (`has_version`): If-Match
        // compares strongly (RFC 9110 13.1.1), and the response's ETag is
        // checked below as well.
        if let Some(e_tag) = known.and_then(|known| known.e_tag.clone()) {
            options = options.with_if_match(Some(e_tag));
        }
        let result = match self.store.get_opts(path, options).await {
            Ok(result) => result,
            Err(object_store::Error::Precondition { .. }) => {
                // RFC 9110 answers a missing object 404 even with If-Match,
                // but some servers answer 412: a deleted shard is absent
                // (its fill value), not a changed one.
                if let Err(object_store::Error::NotFound { .. }) = self.store.head(path).await {
                    return Err(Fetch::Gone);
                }
                let known = known.map(shown_version).unwrap_or_default();
                return Err(Fetch::Changed(format!(
                    "the server refused a read on condition of the version its shard index came from ({known})"
                )));
            }
            Err(error) => return Err(Fetch::Store(error)),
        };
        if let Some(known) = known
            && !same_version(known, &result.meta)
        {
            return Err(Fetch::Changed(format!(
                "its shard index came from {}, this read from {}",
                shown_version(known),
                shown_version(&result.meta)
            )));
        }
        let meta = result.meta.clone();
        // object_store checks that the response is for the range asked
        // for, not that its body is that long: a body cut short (a
        // connection closed early) would be taken for the object's bytes.
        let got = result.range.clone();
        let bytes = collect_body(result, limit).await?;
        if bytes.len() as u64 != got.end - got.start {
            return Err(Fetch::Short(format!(
                "the response said it holds bytes {}..{} of {} and carried {} bytes (truncated?)",
                got.start,
                got.end,
                meta.size,
                bytes.len()
            )));
        }
        Ok((bytes, meta, got))
    }

    /// [`fetch`](Self::fetch) `range` of `path`, all of it: a server trims
    /// a range past the end of the object (as object_store accepts), and
    /// `coalesce_ranges` would then slice a range asked for beside it out
    /// of bytes that do not reach it (a panic), so a shorter answer is an
    /// error (an index pointing past the end of its shard).
    async fn fetch_exactly(
        &self,
        path: &Path,
        range: Range<u64>,
        known: Option<&ObjectMeta>,
    ) -> Result<Bytes, Fetch> {
        let (bytes, meta, got) = self
            .fetch(path, GetRange::Bounded(range.clone()), known)
            .await?;
        if got != range {
            return Err(Fetch::Short(format!(
                "asked for bytes {}..{}, the object has {} (an index pointing past the end of its shard, or the object truncated?)",
                range.start, range.end, meta.size
            )));
        }
        Ok(bytes)
    }

    /// The error of a failed [`fetch`](Self::fetch) of `key`; a changed
    /// object also drops its kept index. `None` for a missing object.
    fn fetch_error(&self, key: &StoreKey, error: Fetch) -> Option<StorageError> {
        match error {
            // Deleted (S3 answers 404 even to a conditional read): what
            // was kept of it must go, or every later read would pair its
            // old index with an object that is not there.
            Fetch::Store(object_store::Error::NotFound { .. }) | Fetch::Gone => {
                self.forget(key);
                None
            }
            Fetch::Store(error) => Some(self.error(key, &error)),
            Fetch::Short(how) => Some(StorageError::Other(format!("{}: {how}", self.key_url(key)))),
            Fetch::Changed(how) => {
                self.forget(key);
                Some(
                    ObjectChanged::new(
                        self.key_url(key),
                        format!(
                            "{}; its kept index is dropped, a new read reads the new one (if this repeats for objects that do not change, the server gives one object several versions, as servers behind a load balancer can: set RemoteOptions::shard_index_cache_bytes to 0)",
                            self.redactor.text(&how)
                        ),
                    )
                    .into(),
                )
            }
        }
    }

    /// Drop what is kept of `key`: its index and version, bytes held.
    fn forget(&self, key: &StoreKey) {
        if let Some(mut indexes) = self.indexes() {
            indexes.remove(key.as_str());
        }
        self.take_held(key);
    }

    /// A shard index: from the cache, or read alone and kept.
    async fn index(&self, key: &StoreKey, range: ByteRange) -> Result<MaybeBytes, StorageError> {
        self.take_held(key);
        let known = match self.indexes().map(|i| i.index_read(key.as_str(), range)) {
            Some(IndexRead::Kept(bytes)) => return Ok(Some(bytes)),
            Some(IndexRead::OnCondition(meta)) => Some(meta),
            Some(IndexRead::Anew) | None => None,
        };
        let (get_range, expected, what) = match range {
            ByteRange::Suffix(len) => (GetRange::Suffix(len), len, format!("the last {len} bytes")),
            ByteRange::FromStart(start, Some(len)) => (
                GetRange::Bounded(start..start + len),
                len,
                format!("bytes {start}..{}", start + len),
            ),
            ByteRange::FromStart(start, None) => {
                return Err(StorageError::Other(format!(
                    "{}: bytes {start}.. are not a shard index",
                    self.key_url(key)
                )));
            }
        };
        let path = self.object_path(key)?;
        // Read ahead: the index and the shard's bytes beside it, up to
        // `read_ahead` (all of them if the shard is no longer); not where a
        // version of the key is kept (an index kept for the check of chunk
        // reads only, read anew by every window: its shard would be
        // fetched whole every time), nor for an array with shards larger
        // than that (its windows mostly need other bytes).
        let kept = self
            .indexes()
            .is_some_and(|i| i.version(key.as_str()).is_some());
        let worth_it = self.read_ahead > 0 && self.read_ahead_state().worth_it(key.as_str());
        let ahead = match range {
            _ if kept || !worth_it => None,
            ByteRange::Suffix(len) if self.read_ahead > len => {
                Some(GetRange::Suffix(self.read_ahead))
            }
            ByteRange::FromStart(0, Some(len)) if self.read_ahead > len => {
                Some(GetRange::Bounded(0..self.read_ahead))
            }
            _ => None,
        };
        // Ended with nothing held if the read fails, or its future is
        // dropped at the await.
        let mut ticket = ahead
            .as_ref()
            .map(|_| Ticket::begin(&self.held, key.as_str()));
        let read_ahead = ahead.is_some();
        let asked = ahead.unwrap_or_else(|| get_range.clone());
        let fetched = match self.fetch(&path, asked, known.as_ref()).await {
            // A server may answer a range that covers the whole object with
            // the whole object and 200 (RFC 9110 lets it ignore a range),
            // which object_store refuses: the index alone, and no more
            // read-ahead from this store.
            Err(Fetch::Store(error)) if read_ahead && whole_answer_refused(&error) => {
                self.read_ahead_state().refused();
                ticket = None;
                self.fetch(&path, get_range, known.as_ref()).await
            }
            fetched => fetched,
        };
        let (bytes, meta, got_range) = match fetched {
            Ok(fetched) => fetched,
            Err(error) => return self.fetch_error(key, error).map_or(Ok(None), Err),
        };
        if self.read_ahead > 0 {
            self.read_ahead_state()
                .learn(key.as_str(), meta.size, self.read_ahead);
        }
        let bytes = match ticket {
            None => bytes,
            Some(ticket) => {
                let got = bytes.len() as u64;
                let index = match range {
                    ByteRange::Suffix(len) if got >= len => Some(&bytes[(got - len) as usize..]),
                    ByteRange::FromStart(_, Some(len)) if got >= len => {
                        Some(&bytes[..len as usize])
                    }
                    _ => None,
                };
                // A copy: a slice would keep all the bytes read alive as
                // long as the index is kept.
                let index = index.map(Bytes::copy_from_slice);
                let held = index
                    .is_some()
                    .then(|| Held::new(range, got_range.start, bytes.clone(), meta.clone()));
                ticket.finish(held);
                // Shorter than its index: the error of a short read.
                index.unwrap_or(bytes)
            }
        };
        let bytes = self.checked(key, &what, expected, bytes)?;
        // An index with a missing inner chunk is kept for the check of
        // chunk reads only (`IndexCache::index_read`).
        if let Some(mut indexes) = self.indexes() {
            indexes.insert(key.as_str(), range, &bytes, &meta);
        }
        Ok(Some(bytes))
    }
}

/// Whether object_store refused a response because it was not the range
/// asked for but the whole object (`200`): its HTTP store says so with
/// `NotSupported`, its S3 store with a generic error of that message.
fn whole_answer_refused(error: &object_store::Error) -> bool {
    match error {
        object_store::Error::NotSupported { .. } => true,
        object_store::Error::Generic { source, .. } => source
            .to_string()
            .contains("non-partial response when range requested"),
        _ => false,
    }
}

/// An index read that reads ahead, under way: ended by
/// [`finish`](Self::finish), or with nothing held when dropped (the read
/// failed, or its future was dropped), so that the key's entry of
/// [`ReadAhead`] does not outlive it.
struct Ticket<'a> {
    held: &'a Mutex<ReadAhead>,
    key: &'a str,
    ticket: Option<u64>,
}

impl<'a> Ticket<'a> {
    fn lock(held: &Mutex<ReadAhead>) -> MutexGuard<'_, ReadAhead> {
        held.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn begin(held: &'a Mutex<ReadAhead>, key: &'a str) -> Self {
        let ticket = Some(Self::lock(held).begin(key));
        Self { held, key, ticket }
    }

    /// Hold `held` (see [`ReadAhead::finish`]).
    fn finish(mut self, held: Option<Held>) {
        if let Some(ticket) = self.ticket.take() {
            Self::lock(self.held).finish(self.key, ticket, held);
        }
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            Self::lock(self.held).finish(self.key, ticket, None);
        }
    }
}

/// `url` as messages show it: redacted, no trailing `/` before the query.
fn shown_url(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or(url);
    let query = if base.len() < url.len() { "?***" } else { "" };
    redact_url(base.trim_end_matches('/')) + query
}

/// `range` as messages show it (zarrs' `Display` of a range adds its start
/// and length, which overflows for a range past the largest offset: a
/// hostile shard index can ask for one).
fn shown_range(range: ByteRange) -> String {
    match range {
        ByteRange::FromStart(start, Some(n)) => format!("at {start}, {n} bytes"),
        ByteRange::FromStart(start, None) => format!("from {start}"),
        ByteRange::Suffix(n) => format!("the last {n} bytes"),
    }
}

/// A range zarrs asks for, as object_store asks for it.
enum Request {
    /// Nothing to fetch.
    Empty,
    /// A shard index kept, asked for beside ranges that are fetched on
    /// condition of the version it was read from.
    Kept(Bytes),
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
        self.take_held(key);
        let path = self.object_path(key)?;
        let limit = if is_metadata(key.as_str()) {
            self.max_metadata_bytes.min(self.max_object_bytes)
        } else {
            self.max_object_bytes
        };
        let result = match self.store.get(&path).await {
            Ok(result) => {
                // A whole object read of another version than a kept index.
                if let Some(mut indexes) = self.indexes()
                    && indexes
                        .version(key.as_str())
                        .is_some_and(|kept| !same_version(&kept, &result.meta))
                {
                    indexes.remove(key.as_str());
                }
                collect_body(result, limit).await
            }
            Err(error) => Err(Fetch::Store(error)),
        };
        match result {
            Ok(bytes) => {
                self.note_metadata(key.as_str(), &bytes);
                Ok(Some(bytes))
            }
            Err(Fetch::Short(how)) if is_metadata(key.as_str()) => {
                Err(StorageError::Other(format!(
                    "{}: {how}: a metadata document larger than RemoteOptions::max_metadata_bytes ({limit})",
                    self.key_url(key)
                )))
            }
            Err(error) => self.fetch_error(key, error).map_or(Ok(None), Err),
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
        // A shard index: kept, or read and kept.
        if let [range] = ranges.as_slice()
            && self
                .indexes()
                .is_some_and(|i| i.is_index_read(key.as_str(), *range))
        {
            let bytes = self.index(key, *range).await?;
            return Ok(bytes.map(|b| futures::stream::iter([Ok(b)]).boxed()));
        }
        // Bytes of the shard read with its index just before (the read
        // engine's call for its chunks, which asks for the index range
        // too): no request for the ranges they hold; the others are
        // fetched on condition of the version they came from (with no
        // version, all of them are fetched, as with no read-ahead).
        let mut from_held: Option<Answer> = None;
        if let Some(held) = self.take_held(key)
            && let Some(answer) = held.answer(&ranges)
        {
            if answer.ranges.iter().all(Option::is_some) {
                return Ok(Some(
                    futures::stream::iter(answer.ranges.into_iter().flatten().map(Ok)).boxed(),
                ));
            }
            if has_version(&answer.meta) {
                from_held = Some(answer);
            }
        }
        // Else the version every request of this call is conditional on,
        // and the ranges kept from that same version, taken at once: a
        // shard index asked for beside inner chunks (the read engine's
        // check that they belong to the index it used) is answered from
        // here, so equal to that index only if the chunks come from its
        // version.
        let (kept, known): (Vec<Option<Bytes>>, Option<ObjectMeta>) = match from_held {
            Some(answer) => (answer.ranges, Some(answer.meta)),
            None => match self.indexes().and_then(|i| i.snapshot(key.as_str())) {
                Some(snapshot) => (
                    ranges.iter().map(|&r| snapshot.get(r)).collect(),
                    Some(snapshot.meta),
                ),
                None => (vec![None; ranges.len()], None),
            },
        };
        let known = known.as_ref();
        let path = self.object_path(key)?;
        let mut requests = ranges
            .iter()
            .map(|&range| {
                request(range).ok_or_else(|| {
                    StorageError::Other(format!(
                        "{}: byte range {} ends past the largest offset",
                        self.key_url(key),
                        shown_range(range)
                    ))
                })
            })
            .collect::<Result<Vec<Request>, _>>()?;
        // Only beside a request, which checks the version: kept ranges
        // alone would be served with no check at all.
        let sends = requests
            .iter()
            .zip(&kept)
            .any(|(request, kept)| kept.is_none() && !matches!(request, Request::Empty));
        if sends {
            for (request, kept) in requests.iter_mut().zip(kept) {
                if let Some(bytes) = kept {
                    *request = Request::Kept(bytes);
                }
            }
        }
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
                object_store::coalesce_ranges(
                    &bounded,
                    |range| self.fetch_exactly(&path, range, known),
                    OBJECT_STORE_COALESCE_DEFAULT,
                )
                .await
            }
        };
        let open_fetch = futures::future::try_join_all(requests.iter().filter_map(|r| {
            match r {
                Request::Open(range) => Some(
                    self.fetch(&path, range.clone(), known)
                        .map_ok(|(bytes, ..)| bytes),
                ),
                _ => None,
            }
        }));
        let (bounded_bytes, open_bytes) = match futures::join!(bounded_fetch, open_fetch) {
            (Ok(bounded), Ok(open)) => (bounded, open),
            (Err(error), _) | (_, Err(error)) => {
                return self.fetch_error(key, error).map_or(Ok(None), Err);
            }
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
                Request::Kept(bytes) => Ok(bytes),
                // As long as asked for: `fetch_exactly` got all of each
                // coalesced range.
                Request::Bounded(_) => bounded_bytes.next().ok_or_else(missing),
                Request::Open(GetRange::Suffix(len)) => {
                    let bytes = open_bytes.next().ok_or_else(missing)?;
                    self.checked(key, &format!("the last {len} bytes"), len, bytes)
                }
                Request::Open(_) => open_bytes.next().ok_or_else(missing),
            });
        }
        Ok(Some(futures::stream::iter(out).boxed()))
    }

    async fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        match self.store.head(&self.object_path(key)?).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(error) => Err(self.error(key, &error)),
        }
    }

    fn supports_get_partial(&self) -> bool {
        true
    }
}

/// `objects` listed under `prefix` without the directory markers among
/// them: empty objects named as a prefix (`g/`, which S3 consoles create
/// for a "folder", object_store lists as `g`), that is, the listed prefix
/// itself, or an empty object whose name and `/` begin another's or one
/// of `prefixes` (the common prefixes of a listing by directory).
fn not_markers<'a>(
    objects: &'a [ObjectMeta],
    prefix: Option<&'a Path>,
    prefixes: &'a [Path],
) -> impl Iterator<Item = &'a ObjectMeta> {
    let names: std::collections::BTreeSet<String> = objects
        .iter()
        .map(|o| o.location.to_string())
        .chain(prefixes.iter().map(|p| format!("{p}/")))
        .collect();
    objects.iter().filter(move |object| {
        let name: &str = object.location.as_ref();
        let is_prefix = name.is_empty() || prefix.is_some_and(|p| p.as_ref() == name);
        let above_another = object.size == 0 && {
            let child = format!("{name}/");
            names
                .range::<str, _>((
                    std::ops::Bound::Included(child.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .next()
                .is_some_and(|next| next.starts_with(&child))
        };
        !is_prefix && !above_another
    })
}

#[async_trait::async_trait]
impl AsyncListableStorageTraits for AsyncRemoteStore {
    async fn list(&self) -> Result<StoreKeys, StorageError> {
        self.keys_under(&StorePrefix::root()).await
    }

    async fn list_prefix(&self, prefix: &StorePrefix) -> Result<StoreKeys, StorageError> {
        self.keys_under(prefix).await
    }

    async fn list_dir(&self, prefix: &StorePrefix) -> Result<StoreKeysPrefixes, StorageError> {
        let path = self.prefix_path(prefix)?;
        let listed = self
            .store
            .list_with_delimiter(path.as_ref())
            .await
            .map_err(|e| self.listing_error(prefix, &e))?;
        let mut keys = not_markers(&listed.objects, path.as_ref(), &listed.common_prefixes)
            .map(|object| self.listed_key(&object.location))
            .collect::<Result<Vec<_>, _>>()?;
        let mut prefixes = listed
            .common_prefixes
            .iter()
            .map(|path| StorePrefix::new(format!("{path}/")))
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort();
        prefixes.sort();
        Ok(StoreKeysPrefixes::new(keys, prefixes))
    }

    async fn size_prefix(&self, prefix: &StorePrefix) -> Result<u64, StorageError> {
        let path = self.prefix_path(prefix)?;
        self.store
            .list(path.as_ref())
            .try_fold(0, |size, object| async move { Ok(size + object.size) })
            .await
            .map_err(|e| self.listing_error(prefix, &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Directory markers (empty objects named as a prefix) are not keys;
    /// empty objects that are not markers are.
    #[test]
    fn directory_markers_are_not_listed() {
        let meta = |name: &str, size: u64| ObjectMeta {
            location: Path::parse(name).unwrap(),
            last_modified: chrono::DateTime::from_timestamp(0, 0).unwrap(),
            size,
            e_tag: None,
            version: None,
        };
        let objects = [
            meta("g", 0),
            meta("g-x", 0),
            meta("g/a", 0),
            meta("g/a/zarr.json", 10),
            meta("g/b", 3),
            meta("h", 0),
        ];
        let all: Vec<&str> = not_markers(&objects, None, &[])
            .map(|o| o.location.as_ref())
            .collect();
        assert_eq!(all, ["g-x", "g/a/zarr.json", "g/b", "h"]);
        let g = Path::parse("g").unwrap();
        assert_eq!(
            not_markers(&objects[2..5], Some(&g), &[])
                .map(|o| o.location.as_ref())
                .collect::<Vec<_>>(),
            ["g/a/zarr.json", "g/b"]
        );
        assert_eq!(
            not_markers(&[meta("g", 0)], Some(&g), &[]).count(),
            0,
            "the listed prefix's own marker"
        );
        // By directory: the marker of a prefix listed as a common prefix.
        let by_directory = [meta("g", 0), meta("h", 0)];
        let common = [g.clone()];
        let kept: Vec<&str> = not_markers(&by_directory, None, &common)
            .map(|o| o.location.as_ref())
            .collect();
        assert_eq!(kept, ["h"]);
    }

    #[test]
    fn a_range_past_the_largest_offset_is_refused() {
        assert!(request(ByteRange::FromStart(u64::MAX, Some(2))).is_none());
        // Its message shows it without overflowing.
        assert_eq!(
            shown_range(ByteRange::FromStart(u64::MAX, Some(2))),
            format!("at {}, 2 bytes", u64::MAX)
        );
        assert!(matches!(
            request(ByteRange::FromStart(u64::MAX - 2, Some(2))),
            Some(Request::Bounded(r)) if r == (u64::MAX - 2..u64::MAX)
        ));
        assert!(matches!(
            request(ByteRange::FromStart(7, Some(0))),
            Some(Request::Empty)
        ));
    }
}
